package aggregate

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestMedianHandComputed(t *testing.T) {
	// Odd n: per coordinate the middle value; coordinates 0 and 2 take
	// input 0's value, coordinate 1 input 2's.
	xs := [][]float32{{3, -1, 2}, {0, 5, 5}, {10, 1, -4}}
	m := &Median{}
	if got, want := run(t, m, xs), []float32{3, 1, 2}; !slices.Equal(got, want) {
		t.Fatalf("median = %v, want %v", got, want)
	}
	if got, want := m.Weights(), []float64{2.0 / 3, 0, 1.0 / 3}; !slices.Equal(got, want) {
		t.Errorf("weights = %v, want %v", got, want)
	}

	// Even n: the mean of the two middle values (2 from input 1 and 3 from
	// input 2 in coordinate 0; 1 from input 3 and 5 from input 0 in
	// coordinate 1).
	xs = [][]float32{{4, 5}, {2, 8}, {3, -7}, {1, 1}}
	if got, want := run(t, m, xs), []float32{2.5, 3}; !slices.Equal(got, want) {
		t.Fatalf("median = %v, want %v", got, want)
	}
	if got, want := m.Weights(), []float64{0.25, 0.25, 0.25, 0.25}; !slices.Equal(got, want) {
		t.Errorf("weights = %v, want %v", got, want)
	}
}

// Ties go to the lower input index: with all values equal, odd n credits
// the input at the middle rank, even n the two around it.
func TestMedianTies(t *testing.T) {
	m := &Median{}
	run(t, m, [][]float32{{7}, {7}, {7}})
	if got, want := m.Weights(), []float64{0, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("odd n weights = %v, want %v", got, want)
	}
	run(t, m, [][]float32{{7}, {7}, {7}, {7}})
	if got, want := m.Weights(), []float64{0, 0.5, 0.5, 0}; !slices.Equal(got, want) {
		t.Errorf("even n weights = %v, want %v", got, want)
	}
}

// For odd n the median is the trimmed mean that drops all but the middle
// value, bit for bit.
func TestMedianIsMaximalTrimmedMean(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{1, 3, 5, 21, 101} {
		xs := wideInputs(r, n, 300)
		med := &Median{}
		tm := &TrimmedMean{F: (n - 1) / 2}
		if a, b := run(t, med, xs), run(t, tm, xs); !equalBits(a, b) {
			t.Fatalf("n=%d: median and trimmed mean with f=%d differ", n, (n-1)/2)
		}
		if a, b := med.Weights(), tm.Weights(); !slices.Equal(a, b) {
			t.Fatalf("n=%d: weights differ: %v vs %v", n, a, b)
		}
	}
}
