package aggregate

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMeanHandComputed(t *testing.T) {
	xs := [][]float32{{1, 2, 3, -1}, {4, 5, 6, 0.5}, {7, 8, 10, 0.25}}
	// Σ x_i / n per coordinate (spec: mean), rounded once to float32.
	want := []float32{4, 5, float32(19.0 / 3), float32(-0.25 / 3)}
	m := &Mean{}
	if got := run(t, m, xs); !equalBits(got, want) {
		t.Fatalf("mean = %v, want %v", got, want)
	}
	for i, w := range m.Weights() {
		if w != 1.0/3 {
			t.Errorf("weight %d = %v, want 1/3", i, w)
		}
	}
}

// The mean of identical vectors is that vector, exactly, even for values
// whose float32 sum would round.
func TestMeanOfIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, 3000) // spans more than one accumulation block
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10)))
	}
	for _, n := range []int{1, 3, 7, 100} {
		xs := make([][]float32, n)
		for i := range xs {
			xs[i] = x
		}
		if got := run(t, &Mean{}, xs); !equalBits(got, x) {
			t.Fatalf("n=%d: mean of identical vectors differs from them", n)
		}
	}
}

// Permuting the inputs changes the mean by at most float rounding (it sums
// in input order, which the driver fixes).
func TestMeanPermutation(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	xs := wideInputs(r, 9, 500)
	a := run(t, &Mean{}, xs)
	b := run(t, &Mean{}, permuted(xs, r.Perm(9)))
	for j := range a {
		if d := math.Abs(float64(a[j] - b[j])); d > 1e-6*math.Abs(float64(a[j]))+1e-30 {
			t.Fatalf("coordinate %d: %v vs %v after permutation", j, a[j], b[j])
		}
	}
}
