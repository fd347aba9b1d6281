package adversary

import (
	"math"
	"slices"
	"testing"
)

func TestChooseByFraction(t *testing.T) {
	for _, c := range []struct {
		n    int
		frac float64
		k    int // max(1, round(n·frac)), worked out by hand
	}{{10, 0.3, 3}, {100, 0.1, 10}, {10, 0.01, 1}, {10, 0, 0}, {7, 0.5, 4}} {
		ids, err := Choose(c.n, nil, c.frac, 42)
		if err != nil || len(ids) != c.k || !slices.IsSorted(ids) {
			t.Errorf("n=%d fraction=%v: %v (%v), want %d sorted ids", c.n, c.frac, ids, err, c.k)
		}
		again, _ := Choose(c.n, nil, c.frac, 42)
		if !slices.Equal(ids, again) {
			t.Error("same seed, different Byzantine set")
		}
	}
	a, _ := Choose(100, nil, 0.3, 1)
	b, _ := Choose(100, nil, 0.3, 2)
	if slices.Equal(a, b) {
		t.Error("different seeds chose the same set")
	}
	for _, f := range []float64{-0.1, 1, math.NaN()} {
		if _, err := Choose(10, nil, f, 1); err == nil {
			t.Errorf("fraction %v accepted", f)
		}
	}
}

// TestChooseByIDs: given ids are the set, sorted and each once, whatever
// the seed; out-of-range ids, and ids with a fraction, are refused.
func TestChooseByIDs(t *testing.T) {
	for _, s := range []uint64{1, 2} {
		ids, err := Choose(10, []int{7, 2, 7, 0}, 0, s)
		if err != nil || !slices.Equal(ids, []int{0, 2, 7}) {
			t.Errorf("seed %d: %v (%v), want [0 2 7]", s, ids, err)
		}
	}
	for _, c := range []struct {
		ids  []int
		frac float64
	}{{[]int{10}, 0}, {[]int{-1}, 0}, {[]int{1}, 0.2}} {
		if ids, err := Choose(10, c.ids, c.frac, 1); err == nil {
			t.Errorf("ids %v, fraction %v: accepted as %v", c.ids, c.frac, ids)
		}
	}
}
