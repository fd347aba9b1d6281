package aggregate

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The checks here are those of safearea_test.go (hullDist: exact polygons
// in the plane, Carathéodory simplices above), which do not use the
// rules' linear programs, and Tukey depths counted by brute force over
// directions.

// depth2 is the Tukey depth of x among planar pts, counting a point within
// tol of a half-plane's boundary as inside (the depth of x up to tol): the
// count of a closed half-plane through x changes only at directions
// perpendicular to some p − x, so the least count over all directions is
// the least over one direction inside each arc between those critical
// directions (the count on a critical direction is at least that of one
// of its two neighbouring arcs).
func depth2(pts [][]float64, x []float64, tol float64) int {
	var crit []float64
	for _, p := range pts {
		a := math.Atan2(p[1]-x[1], p[0]-x[0])
		crit = append(crit, math.Mod(a+math.Pi/2+4*math.Pi, 2*math.Pi), math.Mod(a+3*math.Pi/2+4*math.Pi, 2*math.Pi))
	}
	slices.Sort(crit)
	best := len(pts)
	for i, a := range crit {
		b := crit[0] + 2*math.Pi
		if i+1 < len(crit) {
			b = crit[i+1]
		}
		if b-a < 1e-12 {
			continue
		}
		best = min(best, countIn(pts, x, []float64{math.Cos((a + b) / 2), math.Sin((a + b) / 2)}, tol))
	}
	return best
}

// countIn is the number of pts p with u·(p − x) >= −tol·m·|u|, m the
// median distance of the points from x (a scale of the inputs that a few
// far ones do not move): the point counts as inside a half-space it
// misses by a hair.
func countIn(pts [][]float64, x, u []float64, tol float64) int {
	ds := make([]float64, len(pts))
	var uu float64
	for _, v := range u {
		uu += v * v
	}
	for i, p := range pts {
		ds[i] = dist(p, x)
	}
	slices.Sort(ds)
	m := ds[len(ds)/2]
	c := 0
	for _, p := range pts {
		var dot float64
		for k := range u {
			dot += u[k] * (p[k] - x[k])
		}
		if dot >= -tol*m*math.Sqrt(uu) {
			c++
		}
	}
	return c
}

// depthSampled is the least count of countIn over the directions to every
// input, their opposites, and m random unit directions: an upper bound on
// the Tukey depth of x (up to tol), so a centerpoint must pass it.
func depthSampled(rng *rand.Rand, pts [][]float64, x []float64, m int, tol float64) int {
	d := len(x)
	best := len(pts)
	for _, p := range pts {
		u := make([]float64, d)
		for k := range u {
			u[k] = p[k] - x[k]
		}
		best = min(best, countIn(pts, x, u, tol))
		for k := range u {
			u[k] = -u[k]
		}
		best = min(best, countIn(pts, x, u, tol))
	}
	u := make([]float64, d)
	for range m {
		for k := range u {
			u[k] = rng.NormFloat64()
		}
		best = min(best, countIn(pts, x, u, tol))
	}
	return best
}

// withFaulty inserts bad into honest at random sender ids.
func withFaulty(rng *rand.Rand, honest, bad [][]float64) [][]float64 {
	pts := slices.Clone(honest)
	for _, b := range bad {
		pts = slices.Insert(pts, rng.IntN(len(pts)+1), b)
	}
	return pts
}

// On random instances with the largest number of faulty inputs the
// centerpoint tolerates, f = ⌈n/(d+1)⌉ − 1, placed as in the safe_area
// tests (far, one far point repeated, just outside every honest minimum,
// copies of honest inputs): the point is in the honest hull; its depth is
// at least ⌈n/(d+1)⌉, exactly by the sweep over directions in the plane,
// and in d = 3, 5 by the equivalent condition (in the hull of every n − k
// + 1 inputs, checked with hullDist) and by sampled directions; the
// weights express it.
func TestCenterpointLPInHonestHull(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, c := range []struct{ d, n int }{
		{2, 4}, {2, 7}, {2, 9}, {2, 12},
		{3, 8}, {3, 9}, {3, 13},
		{5, 7}, {5, 12},
	} {
		k := CenterDepth(c.n, c.d)
		f := k - 1
		for _, pl := range safePlacements {
			honest := gen(c.n-f, c.d, func(int, int) float64 { return rng.NormFloat64() })
			pts := withFaulty(rng, honest, pl.place(rng, honest, f))
			r := &CenterpointLP{F: f}
			x := make([]float64, c.d)
			if err := r.Point(x, pts); err != nil {
				t.Fatalf("d=%d n=%d f=%d %s: %v", c.d, c.n, f, pl.name, err)
			}
			if dh := hullDist(honest, x); dh > safeTol*spread(honest) {
				t.Errorf("d=%d n=%d f=%d %s: %v is %.3g from the honest hull", c.d, c.n, f, pl.name, x, dh)
			}
			if c.d == 2 {
				if got := depth2(pts, x, 1e-9); got < k {
					t.Errorf("d=2 n=%d %s: depth %d < %d", c.n, pl.name, got, k)
				}
			} else {
				if got := depthSampled(rng, pts, x, 2000, 1e-9); got < k {
					t.Errorf("d=%d n=%d %s: sampled depth %d < %d", c.d, c.n, pl.name, got, k)
				}
				if c.d == 3 { // C(n, k − 1) Carathéodory checks: d = 3 only
					for _, S := range keptSubsets(c.n, k-1) {
						sub := make([][]float64, len(S))
						for i, j := range S {
							sub[i] = pts[j]
						}
						if ds := hullDist(sub, x); ds > safeTol*spread(sub) {
							t.Errorf("d=3 n=%d %s: %v is %.3g from the hull of %v", c.n, pl.name, x, ds, S)
						}
					}
				}
			}
			checkWeights(t, r.Weights(), pts, x)
		}
	}
}

// The depth checks can fail: the coordinate-wise median of points on the
// moment curve in the plane is shallower than a centerpoint, and the
// sweep says so.
func TestCenterpointLPDepthCheckDiscriminates(t *testing.T) {
	pts := [][]float64{{0, 0}, {1, 1}, {2, 4}, {3, 9}, {4, 16}, {5, 25}, {6, 36}}
	if got := depth2(pts, []float64{3, 9.1}, 1e-9); got != 1 {
		t.Fatalf("depth of a point just above the curve = %d, want 1", got)
	}
	x := make([]float64, 2)
	if err := (&CenterpointLP{}).Point(x, pts); err != nil {
		t.Fatal(err)
	}
	if got := depth2(pts, x, 1e-9); got < 3 {
		t.Errorf("centerpoint %v has depth %d < 3", x, got)
	}
}

// Four points in convex position: depth ⌈4/3⌉ = 2 is reached only where
// the diagonals cross (as for the safe area with f = 1).
func TestCenterpointLPQuadrilateral(t *testing.T) {
	p := [][]float64{{0, 0}, {4, 0}, {5, 3}, {1, 5}}
	x := make([]float64, 2)
	if err := (&CenterpointLP{F: 1}).Point(x, p); err != nil {
		t.Fatal(err)
	}
	// s(5,3) = (4,0) + u(−3,5): 5s = 4 − 3u, 3s = 5u, s = 20/34.
	want := []float64{5 * 20.0 / 34, 3 * 20.0 / 34}
	if dist(x, want) > 1e-9 {
		t.Errorf("point %v, want %v", x, want)
	}
}

// Repeated inputs (the echo attack: the node's own vector f + 1 times;
// honest nodes that agree): a point, of the promised depth.
func TestCenterpointLPRepeats(t *testing.T) {
	own := []float64{0.3, 0.7}
	pts := [][]float64{own, own, own, {0, 0}, {1, 0}, {1, 1}, {0, 1}, {0.5, 0.2}, {0.9, 0.4}, {0.1, 0.8}}
	x := make([]float64, 2)
	if err := (&CenterpointLP{F: 3}).Point(x, pts); err != nil {
		t.Fatal(err)
	}
	if got := depth2(pts, x, 1e-9); got < 4 {
		t.Errorf("depth %d < 4 at %v", got, x)
	}
	same := [][]float64{own, own, own, own}
	if err := (&CenterpointLP{F: 1}).Point(x, same); err != nil || !slices.Equal(x, own) {
		t.Errorf("all equal: %v, %v", x, err)
	}
	// The float32 rule, with a repeated far point (two Byzantine senders
	// agreeing).
	xs := [][]float32{{0.1, 0.2}, {0.8, 0.1}, {0.5, 0.9}, {0.3, 0.4}, {0.6, 0.5}, {0.2, 0.7}, {0.9, 0.8}, {0.4, 0.3}, {100, 100}, {100, 100}}
	r, err := New("centerpoint_lp", 2)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float32, 2)
	if err := r.Aggregate(dst, xs); err != nil {
		t.Fatal(err)
	}
	honest := make([][]float64, 8)
	for i := range honest {
		honest[i] = []float64{float64(xs[i][0]), float64(xs[i][1])}
	}
	if dh := hullDist(honest, []float64{float64(dst[0]), float64(dst[1])}); dh > 1e-6 {
		t.Errorf("%v is %.3g from the honest hull", dst, dh)
	}
}

// Refusals, each naming its reason.
func TestCenterpointLPRefuses(t *testing.T) {
	checkRefusals(t, func(f int, x []float64, p [][]float64) error { return (&CenterpointLP{F: f}).Point(x, p) }, []refusal{
		{8, 3, 2, ErrTooFewInputs, []string{"n = 8", "f = 2", "(d+1)f + 1 = 9", "⌈n/(d+1)⌉ = 2", "[198]"}},
		{6, 2, 2, ErrTooFewInputs, []string{"= 7"}},
		{40, 2, 1, ErrSafeAreaSize, []string{"C(40, 13) > 2000"}},
		{5, 9, 0, ErrSafeAreaSize, []string{"d = 9", "d <= 8", "not for models"}},
	})
	if err := (&CenterpointLP{F: -1}).Point(make([]float64, 2), refusalPoints(4, 2)); err == nil || !strings.Contains(err.Error(), "f = -1") {
		t.Errorf("f = -1: %v", err)
	}
	if err := (&CenterpointLP{}).Point(make([]float64, 2), [][]float64{{1, math.NaN()}}); !errors.Is(err, ErrNonFinite) {
		t.Errorf("NaN: %v", err)
	}
}

// The new rules are config rules with an f, for low-dimensional vectors
// only, as safe_area is; MaxF is the rule's own condition.
func TestLowDimRulesSpec(t *testing.T) {
	for _, name := range []string{"safe_area", "centerpoint_lp", "tverberg"} {
		s, err := ParseSpec(name)
		if err != nil {
			t.Fatal(err)
		}
		if !s.TakesF() || s.AroundOwn() {
			t.Errorf("%s: TakesF %v AroundOwn %v, want true false", name, s.TakesF(), s.AroundOwn())
		}
		if slices.Contains(Names(), name) || !slices.Contains(LowDimNames(), name) {
			t.Errorf("%s: Names %v, LowDimNames %v", name, Names(), LowDimNames())
		}
		r, err := New(name, 1)
		if err != nil || r.Name() != name {
			t.Errorf("New(%s, 1) = %v, %v", name, r, err)
		}
		if _, ok := r.(Selector); !ok {
			t.Errorf("%s is not a Selector", name)
		}
	}
	// Planar inputs: n >= 3f + 1 for safe_area and tverberg, n >= 3f + 1
	// ((d+1)f + 1 with d = 2) for the centerpoint too.
	for _, name := range []string{"centerpoint_lp", "tverberg"} {
		s, _ := ParseSpec(name)
		for n, want := range map[int]int{3: 0, 4: 1, 7: 2, 10: 3} {
			if got := s.MaxF(Params{}, n); got != want {
				t.Errorf("%s: MaxF(n = %d) = %d, want %d", name, n, got, want)
			}
		}
	}
	if _, err := ParseSpec("centerpoint"); err == nil || !strings.Contains(err.Error(), "centerpoint_lp") {
		t.Errorf("centerpoint: %v", err)
	}
}
