package gemm

import (
	"fmt"
	"testing"
)

// BenchmarkMicro times the micro-kernels alone on L1-resident panels
// (kc = 256): the ceiling the blocked driver can approach.
func BenchmarkMicro(b *testing.B) {
	for _, k := range available() {
		b.Run(k.name, func(b *testing.B) {
			const kc = 256
			ap := growAligned(nil, kc*k.mr)
			bp := growAligned(nil, kc*k.nr)
			c := growAligned(nil, k.mr*k.nr)
			for i := range ap {
				ap[i] = 1e-3
			}
			for i := range bp {
				bp[i] = 1e-3
			}
			for b.Loop() {
				k.micro(kc, &ap[0], &bp[0], &c[0], k.nr, k.nr, 1, 1)
			}
			b.ReportMetric(2*kc*float64(k.mr*k.nr)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkDispatch measures the cost of handing part of a call to a helper
// goroutine: a product too small to matter, forced to split in two.
func BenchmarkDispatch(b *testing.B) {
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", th), func(b *testing.B) {
			e := New(th)
			defer e.Close()
			e.minPartWork = 1
			a := make([]float32, 64*1)
			c := make([]float32, 64*64)
			e.Sgemm(false, false, 64, 64, 1, 1, a, 1, a, 64, 0, c, 64)
			for b.Loop() {
				e.Sgemm(false, false, 64, 64, 1, 1, a, 1, a, 64, 0, c, 64)
			}
		})
	}
}

// BenchmarkThreshold compares one thread with two on products around the
// size where splitting starts to pay, with the split forced (minPartWork =
// 1); parallelMinWork is set from it. Batch-32 shapes split along n.
func BenchmarkThreshold(b *testing.B) {
	shapes := [][3]int{
		{32, 32, 256}, {32, 64, 256}, {32, 128, 256}, {32, 256, 256}, {32, 512, 256}, {32, 1024, 256},
		{64, 64, 64}, {96, 96, 96}, {128, 128, 128}, {192, 192, 192},
	}
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		a := make([]float32, m*k)
		bb := make([]float32, n*k)
		c := make([]float32, m*n)
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("%dx%dx%d/threads=%d", m, n, k, th), func(b *testing.B) {
				e := New(th)
				defer e.Close()
				e.minPartWork = 1
				e.Sgemm(false, true, m, n, k, 1, a, k, bb, k, 0, c, n)
				for b.Loop() {
					e.Sgemm(false, true, m, n, k, 1, a, k, bb, k, 0, c, n)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
