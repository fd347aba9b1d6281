package aggregate

import (
	"math"
	"slices"
	"testing"
)

// Centered clipping on 1-D values {0, 1, 2, 10} around own v_0 = 1 with
// τ = 2 (by hand):
//
//	m=1: x − v = −1, 0, 1, 9 → 9 clipped to 2: v = 1 + (−1+0+1+2)/4 = 1.5
//	m=2: −1.5, −0.5, 0.5, 8.5 → 2: v = 1.5 + 0.5/4 = 1.625
//	m=3: −1.625, −0.625, 0.375, 8.375 → 2: v = 1.625 + 0.125/4 = 1.65625
func TestCenteredClippingHandComputed(t *testing.T) {
	xs := [][]float32{{0}, {1}, {2}, {10}}
	for m, want := range []float32{1.5, 1.625, 1.65625} {
		cc := &CenteredClipping{Tau: 2, Iterations: m + 1}
		got := make([]float32, 1)
		if err := cc.AggregateAround(got, []float32{1}, xs); err != nil {
			t.Fatal(err)
		}
		if got[0] != want {
			t.Errorf("M=%d: %v, want %v", m+1, got[0], want)
		}
		if m == 0 {
			// v_1 = 7/36·v_0 + (1/4)(0 + 1 + 2) + (1/18)·10: the inputs'
			// weights are c_i/n and the own vector keeps 7/36.
			want := []float64{0.25, 0.25, 0.25, 1.0 / 18}
			if w := cc.Weights(); !slices.EqualFunc(w, want, func(a, b float64) bool { return math.Abs(a-b) < 1e-15 }) {
				t.Errorf("weights %v, want %v", w, want)
			}
		}
	}
	// As a Rule the start is the median (1.5): m=1: −1.5, −0.5, 0.5, 8.5 →
	// 2: v = 1.5 + 0.5/4 = 1.625, then as above from 1.625.
	cc := &CenteredClipping{Tau: 2, Iterations: 2}
	if got := run(t, cc, xs); got[0] != 1.65625 {
		t.Errorf("rule from the median: %v, want 1.65625", got[0])
	}
	if s := sum(cc.Weights()); math.Abs(s-1) > 1e-12 {
		t.Errorf("rule weights sum to %v", s)
	}
	// A radius no input reaches makes one iteration the mean.
	if got := run(t, &CenteredClipping{Tau: 100, Iterations: 1}, xs); got[0] != 3.25 {
		t.Errorf("τ = 100: %v, want the mean 3.25", got[0])
	}
	// Adaptive τ with F = 1 clips only the farthest input, to the second
	// largest distance. From the median 1.5: distances 1.5, 0.5, 0.5, 8.5;
	// τ = 1.5: v = 1.5 + (−1.5 − 0.5 + 0.5 + 1.5)/4 = 1.5.
	if got := run(t, &CenteredClipping{F: 1, Iterations: 1}, xs); got[0] != 1.5 {
		t.Errorf("adaptive τ: %v, want 1.5", got[0])
	}
}

// FromPrevious starts from the last output.
func TestCenteredClippingFromPrevious(t *testing.T) {
	xs := [][]float32{{0}, {1}, {2}, {10}}
	cc := &CenteredClipping{Tau: 2, Iterations: 1, FromPrevious: true}
	a := run(t, cc, xs) // from the median 1.5: 1.625
	b := run(t, cc, xs) // from 1.625: 1.65625
	if a[0] != 1.625 || b[0] != 1.65625 {
		t.Errorf("from previous: %v then %v, want 1.625 then 1.65625", a[0], b[0])
	}
	if s := sum(cc.Weights()); s >= 1 {
		t.Errorf("weights from the previous output sum to %v, want below 1", s)
	}
}
