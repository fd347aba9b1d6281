package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// run aggregates xs with r and fails the test on error.
func run(t *testing.T, r Rule, xs [][]float32) []float32 {
	t.Helper()
	dst := make([]float32, len(xs[0]))
	if err := r.Aggregate(dst, xs); err != nil {
		t.Fatalf("%s: %v", r.Name(), err)
	}
	return dst
}

// equalBits reports whether a and b are bit-identical.
func equalBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// wideInputs returns n vectors of length d whose coordinates mix ties,
// zeros of both signs and magnitudes from 1e-30 to 1e6, so that sums take
// both of TrimmedMean's paths.
func wideInputs(r *rand.Rand, n, d int) [][]float32 {
	xs := make([][]float32, n)
	for i := range xs {
		xs[i] = make([]float32, d)
		for j := range xs[i] {
			switch r.IntN(10) {
			case 0:
				xs[i][j] = float32(math.Copysign(0, r.NormFloat64()))
			case 1:
				xs[i][j] = float32(r.IntN(3)) // ties
			case 2, 3:
				xs[i][j] = float32(r.NormFloat64() * math.Pow(10, -30+36*r.Float64()))
			default:
				xs[i][j] = float32(r.NormFloat64())
			}
		}
	}
	return xs
}

// permuted returns xs in the order perm.
func permuted(xs [][]float32, perm []int) [][]float32 {
	out := make([][]float32, len(xs))
	for i, p := range perm {
		out[i] = xs[p]
	}
	return out
}

func sum(w []float64) float64 {
	var s float64
	for _, v := range w {
		s += v
	}
	return s
}
