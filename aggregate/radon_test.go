package aggregate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The iterated Radon point on random instances with f faulty inputs placed
// as in the safe_area tests (far, one far point repeated, just outside
// every honest minimum, copies of honest inputs): the point is in the
// honest hull (checked in float64, independently of the construction);
// Partition returns 2^h disjoint non-empty parts covering the (d+2)^h
// inputs used, and the point is in the hull of each (the certificate:
// one part of f + 1 or more is all honest); the weights express it.
func TestRadonInHonestHull(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 8))
	for _, c := range []struct{ d, f, extra int }{
		{2, 1, 0}, {2, 1, 3}, {2, 2, 0}, {2, 3, 0}, {2, 3, 9}, {2, 5, 0}, {2, 7, 0},
		{3, 1, 0}, {3, 2, 0}, {3, 3, 4},
		{4, 3, 0}, {5, 1, 0}, {5, 1, 2}, {8, 1, 0},
	} {
		h := RadonLevels(c.f)
		N := RadonInputs(c.d, h)
		n := N + c.extra
		for _, pl := range safePlacements {
			honest := gen(n-c.f, c.d, func(int, int) float64 { return rng.NormFloat64() })
			pts := withFaulty(rng, honest, pl.place(rng, honest, c.f))
			r := &RadonPoint{F: c.f}
			x := make([]float64, c.d)
			if err := r.Point(x, pts); err != nil {
				t.Fatalf("d=%d f=%d n=%d %s: %v", c.d, c.f, n, pl.name, err)
			}
			if c.d <= 4 { // hullDist enumerates simplices of d + 1 inputs
				if dh := hullDist(honest, x); dh > safeTol*spread(honest) {
					t.Errorf("d=%d f=%d n=%d %s: %v is %.3g from the honest hull", c.d, c.f, n, pl.name, x, dh)
				}
			}
			what := fmt.Sprintf("d=%d f=%d n=%d %s", c.d, c.f, n, pl.name)
			checkPartition(t, what, pts, honest, x, r.Partition(), 1<<h, N)
			checkWeights(t, r.Weights(), pts, x)
		}
	}
}

// Radon's theorem in the plane by hand, as for tverberg: four points in
// convex position give the crossing of the diagonals; a triangle and a
// point inside give that point; four copies of one point give it.
func TestRadonByHand(t *testing.T) {
	r := &RadonPoint{F: 1}
	x := make([]float64, 2)
	if err := r.Point(x, [][]float64{{0, 0}, {4, 0}, {5, 3}, {1, 5}}); err != nil {
		t.Fatal(err)
	}
	if want := []float64{5 * 20.0 / 34, 3 * 20.0 / 34}; dist(x, want) > 1e-9 {
		t.Errorf("point %v, want %v", x, want)
	}
	if got := r.Partition(); !slices.EqualFunc(got, [][]int{{0, 2}, {1, 3}}, slices.Equal) && !slices.EqualFunc(got, [][]int{{1, 3}, {0, 2}}, slices.Equal) {
		t.Errorf("partition %v, want the diagonals", got)
	}
	if err := r.Point(x, [][]float64{{0, 0}, {6, 0}, {0, 6}, {1, 2}}); err != nil || dist(x, []float64{1, 2}) > 1e-9 {
		t.Errorf("triangle and inner point: %v, %v", x, err)
	}
	if err := r.Point(x, [][]float64{{3, 1}, {3, 1}, {3, 1}, {3, 1}}); err != nil || !slices.Equal(x, []float64{3, 1}) {
		t.Errorf("four copies: %v, %v", x, err)
	}
	// Collinear points in the plane: a point of the segment they span,
	// within each part's hull.
	if err := r.Point(x, [][]float64{{0, 0}, {1, 1}, {2, 2}, {3, 3}}); err != nil || math.Abs(x[0]-x[1]) > 1e-12 || x[0] < 0 || x[0] > 3 {
		t.Errorf("collinear: %v, %v", x, err)
	}
}

// Refusals, each naming its reason; the rule is reachable by name.
func TestRadonRefuses(t *testing.T) {
	checkRefusals(t, func(f int, x []float64, p [][]float64) error { return (&RadonPoint{F: f}).Point(x, p) }, []refusal{
		{15, 2, 2, ErrTooFewInputs, []string{"n = 15", "f = 2", "(d+2)^h = 16", "h = ⌈log₂(f + 1)⌉ = 2"}},
		{4, 3, 1, ErrTooFewInputs, []string{"(d+2)^h = 5"}},
		{5, 8, 100, ErrSafeAreaSize, []string{"10^7", "above the limit 100000"}},
		{5, 9, 0, ErrSafeAreaSize, []string{"d = 9", "not for models"}},
	})
	checkNegativeF(t, &RadonPoint{F: -1})
	sp, err := ParseSpec("radon")
	if err != nil || !sp.TakesF() || slices.Contains(Names(), "radon") || !slices.Contains(LowDimNames(), "radon") {
		t.Errorf("radon's spec: %+v, %v", sp, err)
	}
	if got := sp.MaxF(Params{}, 16); got != 3 {
		t.Errorf("MaxF(16 inputs): %d, want 3 (2 levels of 4-point groups in the plane)", got)
	}
}
