package aggregate

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchInputs returns n vectors of length d of standard normal values from
// a fixed seed.
func benchInputs(n, d int) [][]float32 {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([][]float32, n)
	for i := range xs {
		xs[i] = make([]float32, d)
		for j := range xs[i] {
			xs[i][j] = float32(r.NormFloat64())
		}
	}
	return xs
}

// BenchmarkRules aggregates n = 100 vectors of d = 1,000,000 float32 (the
// size issue 6 sets for the comparison with PyTorch) and of the MLP's
// 235,146 parameters.
func BenchmarkRules(b *testing.B) {
	for _, d := range []int{235146, 1000000} {
		xs := benchInputs(100, d)
		dst := make([]float32, d)
		for _, r := range []Rule{&Mean{}, &Median{}, &TrimmedMean{F: 10}} {
			b.Run(fmt.Sprintf("%s/n=100/d=%d", r.Name(), d), func(b *testing.B) {
				if err := r.Aggregate(dst, xs); err != nil { // sizes the scratch
					b.Fatal(err)
				}
				b.SetBytes(int64(4 * 100 * d))
				b.ReportAllocs()
				for b.Loop() {
					if err := r.Aggregate(dst, xs); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
