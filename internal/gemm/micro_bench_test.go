package gemm

import "testing"

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
				k.micro(kc, &ap[0], &bp[0], &c[0], k.nr, 1, 1)
			}
			b.ReportMetric(2*kc*float64(k.mr*k.nr)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
