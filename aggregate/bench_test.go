package aggregate

import (
	"fmt"
	"math/rand/v2"
	"runtime"
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

// benchRules are the rules and chains BenchmarkRules times.
var benchRules = []string{
	"mean", "median", "trimmed_mean", "krum", "multi_krum", "geometric_median",
	"centered_clipping", "bulyan", "msr",
	"bucketing+median", "nnm+mean", "arc+mean",
}

// BenchmarkRules aggregates n = 100 vectors of d = 1,000,000 float32 (the
// size of the comparison with PyTorch), 100 of the MLP's
// 235,146 parameters, and 6 of them (a node and its neighbors on the
// 5-regular graph of the round benchmark), with f = (n−1)/10, on one
// thread and on GOMAXPROCS threads. bench/rules_compare.sh runs the
// n = 100, d = 1M cases next to PyTorch.
func BenchmarkRules(b *testing.B) {
	threads := []int{1}
	if p := runtime.GOMAXPROCS(0); p > 1 {
		threads = append(threads, p)
	}
	for _, c := range []struct{ n, d int }{{6, 235146}, {100, 235146}, {100, 1000000}} {
		xs := benchInputs(c.n, c.d)
		dst := make([]float32, c.d)
		for _, name := range benchRules {
			for _, t := range threads {
				r, err := NewWith(name, Params{F: (c.n - 1) / 10, Threads: t})
				if err != nil {
					b.Fatal(err)
				}
				b.Run(fmt.Sprintf("%s/n=%d/d=%d/threads=%d", name, c.n, c.d, t), func(b *testing.B) {
					if err := r.Aggregate(dst, xs); err != nil { // sizes the scratch
						b.Fatal(err)
					}
					b.SetBytes(int64(4 * c.n * c.d))
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
}

// BenchmarkKrumClustered is Krum on n = 100 inputs of d = 1,000,000 whose
// differences vanish in the first Gram product (even coordinates 1000 in
// every input, odd ones of order 1e-3: the metamorphic tests'
// "huge-and-tiny" family): the cost of the centered second product that
// recovers their distances.
func BenchmarkKrumClustered(b *testing.B) {
	const n, d = 100, 1000000
	r := rand.New(rand.NewPCG(3, 4))
	xs := make([][]float32, n)
	for i := range xs {
		xs[i] = make([]float32, d)
		for j := range xs[i] {
			if j%2 == 0 {
				xs[i][j] = 1000
			} else {
				xs[i][j] = float32(1e-3 * r.NormFloat64())
			}
		}
	}
	dst := make([]float32, d)
	for _, t := range []int{1, runtime.GOMAXPROCS(0)} {
		k := &Krum{F: 9, Threads: t}
		b.Run(fmt.Sprintf("threads=%d", t), func(b *testing.B) {
			if err := k.Aggregate(dst, xs); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := k.Aggregate(dst, xs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(k.ks.g.direct), "direct-pairs")
		})
	}
}
