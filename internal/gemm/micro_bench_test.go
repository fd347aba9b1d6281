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
