package aggregate

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestTrimmedMeanHandComputed(t *testing.T) {
	// n = 5, f = 1. Coordinate 0: values 10, -3, 4, 1, 100; drop -3 and 100,
	// mean of 10, 4, 1 = 5. Coordinate 1: 0.5, 0.25, 1, 2, -8; drop -8 and 2,
	// (0.5 + 0.25 + 1) / 3.
	xs := [][]float32{{10, 0.5}, {-3, 0.25}, {4, 1}, {1, 2}, {100, -8}}
	tm := &TrimmedMean{F: 1}
	if got, want := run(t, tm, xs), []float32{5, float32(1.75 / 3)}; !slices.Equal(got, want) {
		t.Fatalf("trimmed mean = %v, want %v", got, want)
	}
	// Kept: coordinate 0 inputs 0, 2, 3; coordinate 1 inputs 0, 1, 2.
	if got, want := tm.Weights(), []float64{2.0 / 6, 1.0 / 6, 2.0 / 6, 1.0 / 6, 0}; !slices.Equal(got, want) {
		t.Errorf("weights = %v, want %v", got, want)
	}
}

// With f = 0 nothing is trimmed: the trimmed mean is the mean, up to the
// order of summation (and exactly where sums are exact).
func TestTrimmedMeanZeroIsMean(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	xs := wideInputs(r, 6, 2000)
	mean, tm := &Mean{}, &TrimmedMean{}
	a, b := run(t, mean, xs), run(t, tm, xs)
	for j := range a {
		if d := math.Abs(float64(a[j] - b[j])); d > 1e-6*math.Abs(float64(a[j]))+1e-30 {
			t.Fatalf("coordinate %d: mean %v, trimmed mean with f=0 %v", j, a[j], b[j])
		}
	}
	if !slices.Equal(mean.Weights(), tm.Weights()) {
		t.Errorf("weights: mean %v, trimmed mean %v", mean.Weights(), tm.Weights())
	}
	negz := float32(math.Copysign(0, -1))
	small := [][]float32{{1, 2, negz, negz}, {3, 5, negz, 0}, {4, 8, negz, negz}}
	if got, want := run(t, tm, small), run(t, mean, small); !equalBits(got, want) {
		t.Errorf("exact sums: trimmed mean with f=0 %v, mean %v", got, want)
	}
}

// An input that is always among the f largest (or smallest) gets weight 0.
func TestTrimmedMeanAlwaysTrimmed(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	xs := wideInputs(r, 7, 400)
	big := make([]float32, 400)
	for j := range big {
		big[j] = 1e6
	}
	xs[4] = big
	tm := &TrimmedMean{F: 1}
	run(t, tm, xs)
	w := tm.Weights()
	if w[4] != 0 {
		t.Errorf("always-trimmed input has weight %v", w[4])
	}
	if s := sum(w); math.Abs(s-1) > 1e-12 {
		t.Errorf("weights sum to %v", s)
	}
}

func TestTrimmedMeanTooFewInputs(t *testing.T) {
	for _, c := range []struct{ n, f int }{{2, 1}, {4, 2}, {5, 3}} {
		xs := make([][]float32, c.n)
		for i := range xs {
			xs[i] = []float32{1}
		}
		tm := &TrimmedMean{F: c.f}
		err := tm.Aggregate(make([]float32, 1), xs)
		if !errors.Is(err, ErrTooFewInputs) {
			t.Fatalf("n=%d f=%d: err = %v, want ErrTooFewInputs", c.n, c.f, err)
		}
		for _, s := range []string{"n = " + strconv.Itoa(c.n), "f = " + strconv.Itoa(c.f)} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not say %q", err, s)
			}
		}
		if tm.Weights() != nil {
			t.Errorf("weights after a failed call: %v", tm.Weights())
		}
	}
	if err := (&TrimmedMean{F: -1}).Aggregate(make([]float32, 1), [][]float32{{1}}); err == nil {
		t.Error("f = -1 accepted")
	}
}

// Kept values within the exact window sum to their exact sum; wider ones
// are summed in ascending order, whatever the input order.
func TestTrimmedMeanSummation(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 14))
	const n, f = 50, 5
	xs := make([][]float32, n)
	for i := range xs {
		xs[i] = []float32{float32(r.NormFloat64()), float32(r.NormFloat64() * 1e-3)}
	}
	got := run(t, &TrimmedMean{F: f}, xs)
	for j := range got {
		col := make([]float64, n)
		for i, x := range xs {
			col[i] = float64(x[j])
		}
		slices.Sort(col)
		exact := new(big.Float).SetPrec(1000)
		for _, v := range col[f : n-f] {
			exact.Add(exact, big.NewFloat(v))
		}
		s, acc := exact.Float64()
		if acc != big.Exact {
			t.Fatalf("coordinate %d: test values do not sum exactly in float64", j)
		}
		if want := float32(s / (n - 2*f)); got[j] != want {
			t.Errorf("coordinate %d = %v, want the exact mean %v", j, got[j], want)
		}
	}

	// 1e20, −1e20 and 1 span 67 binades: ascending order gives
	// (−1e20 + 1) + 1e20 = 0 for every input order, where the input order
	// 1e20, −1e20, 1 would give 1.
	wide := [][]float32{{1e20}, {-1e20}, {1}}
	for _, perm := range [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}} {
		if got := run(t, &TrimmedMean{}, permuted(wide, perm)); got[0] != 0 {
			t.Errorf("order %v: %v, want 0 (ascending summation)", perm, got[0])
		}
	}
	if got := run(t, &Mean{}, wide); got[0] != float32(1.0/3) {
		t.Errorf("mean in input order: %v, want 1/3", got[0])
	}
}
