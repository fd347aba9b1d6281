package aggregate

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The checks here do not use the rule's linear programs: in the plane the
// distance to a convex hull is computed from the hull's polygon
// (monotone chain, orientation signs, distances to edges); in higher
// dimensions an upper bound on it comes from Carathéodory's theorem (a
// point of the hull is in the hull of some d + 1 inputs): barycentric
// coordinates in every simplex of d + 1 inputs, clamped at 0 and
// renormalized, give points of the hull, and the nearest of them bounds
// the distance from above.

// safeTol is the tolerance of the containment checks, relative to the
// spread of the set checked (the largest distance of one of its points
// from their mean).
const safeTol = 1e-9

// hullDist is an upper bound on the Euclidean distance from x to the
// convex hull of pts (exact up to rounding for d <= 2).
func hullDist(pts [][]float64, x []float64) float64 {
	if len(x) == 2 {
		return hullDist2(pts, x)
	}
	d := len(x)
	best := math.Inf(1)
	idx := make([]int, d+1)
	var rec func(start, depth int)
	rec = func(start, depth int) {
		if depth == d+1 {
			best = min(best, simplexDist(pts, idx, x))
			return
		}
		for i := start; i < len(pts); i++ {
			idx[depth] = i
			rec(i+1, depth+1)
		}
	}
	rec(0, 0)
	// A single input is a hull point too (degenerate sets).
	for _, p := range pts {
		best = min(best, dist(p, x))
	}
	return best
}

// simplexDist solves [1; P] λ = [1; x] for the simplex of pts[idx] by
// Gaussian elimination with partial pivoting, clamps λ at 0, renormalizes
// and returns the distance from x to Σ λ_i p_i; +Inf when the simplex is
// degenerate.
func simplexDist(pts [][]float64, idx []int, x []float64) float64 {
	m := len(idx)
	a := make([][]float64, m)
	for r := range m {
		a[r] = make([]float64, m+1)
		for c, i := range idx {
			if r == 0 {
				a[r][c] = 1
			} else {
				a[r][c] = pts[i][r-1]
			}
		}
		if r == 0 {
			a[r][m] = 1
		} else {
			a[r][m] = x[r-1]
		}
	}
	var scale float64
	for _, i := range idx {
		scale = max(scale, dist(pts[i], pts[idx[0]]))
	}
	for c := range m {
		p := c
		for r := c + 1; r < m; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) <= 1e-12*max(scale, 1) {
			return math.Inf(1)
		}
		a[c], a[p] = a[p], a[c]
		for r := range m {
			if r != c {
				q := a[r][c] / a[c][c]
				for k := c; k <= m; k++ {
					a[r][k] -= q * a[c][k]
				}
			}
		}
	}
	lam := make([]float64, m)
	var sum float64
	for c := range m {
		lam[c] = max(a[c][m]/a[c][c], 0)
		sum += lam[c]
	}
	y := make([]float64, len(x))
	for c, i := range idx {
		for k := range y {
			y[k] += lam[c] / sum * pts[i][k]
		}
	}
	return dist(y, x)
}

// hullDist2 is the distance from x to the convex hull of planar pts:
// Andrew's monotone chain, then 0 inside (left of or on every edge of the
// counter-clockwise hull) and the least distance to an edge otherwise.
func hullDist2(pts [][]float64, x []float64) float64 {
	ps := slices.Clone(pts)
	slices.SortFunc(ps, func(a, b []float64) int { return slices.Compare(a, b) })
	ps = slices.CompactFunc(ps, func(a, b []float64) bool { return slices.Equal(a, b) })
	cross := func(o, a, b []float64) float64 {
		return (a[0]-o[0])*(b[1]-o[1]) - (a[1]-o[1])*(b[0]-o[0])
	}
	var h [][]float64
	for pass := range 2 {
		start := len(h)
		for i := range ps {
			p := ps[i]
			if pass == 1 {
				p = ps[len(ps)-1-i]
			}
			for len(h) >= start+2 && cross(h[len(h)-2], h[len(h)-1], p) <= 0 {
				h = h[:len(h)-1]
			}
			h = append(h, p)
		}
		h = h[:len(h)-1]
	}
	if len(h) == 0 { // a single distinct point
		return dist(ps[0], x)
	}
	best := math.Inf(1)
	inside := len(h) >= 3
	for i := range h {
		a, b := h[i], h[(i+1)%len(h)]
		if len(h) >= 3 && cross(a, b, x) < 0 {
			inside = false
		}
		best = min(best, segDist(a, b, x))
	}
	if inside {
		return 0
	}
	return best
}

func segDist(a, b, x []float64) float64 {
	dx, dy := b[0]-a[0], b[1]-a[1]
	t := 0.0
	if l := dx*dx + dy*dy; l > 0 {
		t = max(0, min(1, ((x[0]-a[0])*dx+(x[1]-a[1])*dy)/l))
	}
	return math.Hypot(a[0]+t*dx-x[0], a[1]+t*dy-x[1])
}

func dist(a, b []float64) float64 {
	var s float64
	for k := range a {
		s += (a[k] - b[k]) * (a[k] - b[k])
	}
	return math.Sqrt(s)
}

// spread is the largest distance of a point of pts from their mean (1 if
// all are equal).
func spread(pts [][]float64) float64 {
	mean := make([]float64, len(pts[0]))
	for _, p := range pts {
		for k, v := range p {
			mean[k] += v / float64(len(pts))
		}
	}
	var r float64
	for _, p := range pts {
		r = max(r, dist(p, mean))
	}
	if r == 0 {
		return 1
	}
	return r
}

// placements of the f faulty inputs, given the honest ones.
var safePlacements = []struct {
	name  string
	place func(rng *rand.Rand, honest [][]float64, f int) [][]float64
}{
	{"far", func(rng *rand.Rand, honest [][]float64, f int) [][]float64 {
		return gen(f, len(honest[0]), func(int, int) float64 { return 1e6 * rng.NormFloat64() })
	}},
	{"one far point", func(rng *rand.Rand, honest [][]float64, f int) [][]float64 {
		p := gen(1, len(honest[0]), func(int, int) float64 { return -3e4 })[0]
		return gen(f, len(p), func(_, k int) float64 { return p[k] })
	}},
	{"just outside", func(rng *rand.Rand, honest [][]float64, f int) [][]float64 {
		// Each coordinate at the honest minimum minus a little: the
		// coordinate-wise rules move towards this corner.
		return gen(f, len(honest[0]), func(_, k int) float64 {
			m := math.Inf(1)
			for _, h := range honest {
				m = min(m, h[k])
			}
			return m - 0.1
		})
	}},
	{"honest copies", func(rng *rand.Rand, honest [][]float64, f int) [][]float64 {
		return gen(f, len(honest[0]), func(i, k int) float64 { return honest[i%len(honest)][k] })
	}},
}

func gen(n, d int, v func(i, k int) float64) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, d)
		for k := range out[i] {
			out[i][k] = v(i, k)
		}
	}
	return out
}

// On random instances with n = (d+1)f + 1 and a few more inputs, whatever
// the f faulty inputs are, the point is in the hull of the honest inputs
// and in the hull of every n − f inputs; the weights express it as a
// convex combination of the inputs.
func TestSafeAreaInHonestHull(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, c := range []struct{ d, f, extra int }{
		{2, 1, 0}, {2, 1, 3}, {2, 2, 0}, {2, 2, 2}, {2, 3, 0},
		{3, 1, 0}, {3, 1, 2}, {3, 2, 0}, {3, 2, 2},
		{5, 1, 0}, {5, 1, 2}, {5, 2, 0},
	} {
		n := max((c.d+1)*c.f+1, 3*c.f+1) + c.extra
		trials := 2
		if c.d == 5 && c.f == 2 {
			trials = 1 // the Carathéodory checks of 78 subsets take 0.1 s
		}
		for _, pl := range safePlacements {
			for trial := range trials {
				honest := gen(n-c.f, c.d, func(int, int) float64 { return rng.NormFloat64() })
				bad := pl.place(rng, honest, c.f)
				// Faulty inputs at random sender ids.
				pts := slices.Clone(honest)
				for _, b := range bad {
					pts = slices.Insert(pts, rng.IntN(len(pts)+1), b)
				}
				a := &SafeArea{F: c.f}
				x := make([]float64, c.d)
				if err := a.Point(x, pts); err != nil {
					t.Fatalf("d=%d f=%d n=%d %s #%d: %v", c.d, c.f, n, pl.name, trial, err)
				}
				if dh := hullDist(honest, x); dh > safeTol*spread(honest) {
					t.Errorf("d=%d f=%d n=%d %s #%d: %v is %.3g from the honest hull (spread %.3g)", c.d, c.f, n, pl.name, trial, x, dh, spread(honest))
				}
				for _, S := range keptSubsets(n, c.f) {
					sub := make([][]float64, len(S))
					for t, j := range S {
						sub[t] = pts[j]
					}
					if ds := hullDist(sub, x); ds > safeTol*spread(sub) {
						t.Errorf("d=%d f=%d n=%d %s #%d: %v is %.3g from the hull of subset %v", c.d, c.f, n, pl.name, trial, x, ds, S)
					}
				}
				checkWeights(t, a.Weights(), pts, x)
			}
		}
	}
}

// checkWeights: non-negative, summing to 1, and Σ w_j p_j = x.
func checkWeights(t *testing.T, w []float64, pts [][]float64, x []float64) {
	t.Helper()
	if len(w) != len(pts) {
		t.Fatalf("%d weights for %d inputs", len(w), len(pts))
	}
	var sum float64
	y := make([]float64, len(x))
	for j, v := range w {
		if v < 0 {
			t.Errorf("weight %d = %g < 0", j, v)
		}
		sum += v
		for k := range y {
			y[k] += v * pts[j][k]
		}
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("weights sum to %.12g", sum)
	}
	if e := dist(y, x); e > safeTol*spread(pts) {
		t.Errorf("Σ w_j p_j = %v, the point is %v (%.3g apart)", y, x, e)
	}
}

// Four inputs in convex position with f = 1: the safe area is the single
// point where the diagonals cross.
func TestSafeAreaQuadrilateral(t *testing.T) {
	p := [][]float64{{0, 0}, {4, 0}, {5, 3}, {1, 5}}
	// Diagonals (0,0)-(5,3) and (4,0)-(1,5): s(5,3) = (4,0) + u(−3,5).
	// 5s = 4 − 3u, 3s = 5u: s = 20/34, u = 12/34.
	want := []float64{100.0 / 34, 60.0 / 34}
	for _, perm := range [][]int{{0, 1, 2, 3}, {2, 0, 3, 1}} {
		pts := make([][]float64, 4)
		for i, j := range perm {
			pts[i] = p[j]
		}
		x := make([]float64, 2)
		if err := (&SafeArea{F: 1}).Point(x, pts); err != nil {
			t.Fatal(err)
		}
		if dist(x, want) > 1e-9*5 {
			t.Errorf("order %v: %v, want the diagonals' crossing %v", perm, x, want)
		}
	}
}

// Degenerate inputs: collinear, duplicated, all equal. The area is still
// non-empty and the point is found.
func TestSafeAreaDegenerate(t *testing.T) {
	// Seven collinear points, f = 2: the hulls of every 5 meet in the
	// segment from the 3rd to the 5th point along the line.
	var line [][]float64
	for _, s := range []float64{-3, 0.5, 1, 2, 7, 8, 40} {
		line = append(line, []float64{1 + 2*s, -1 + 0.5*s})
	}
	x := make([]float64, 2)
	if err := (&SafeArea{F: 2}).Point(x, line); err != nil {
		t.Fatal(err)
	}
	s := (x[0] - 1) / 2
	if math.Abs(-1+0.5*s-x[1]) > 1e-9*40 || s < 1-1e-9*40 || s > 7+1e-9*40 {
		t.Errorf("collinear: %v (s = %g), want on the line with s in [1, 7]", x, s)
	}
	// Duplicates: four copies of A, three of B, f = 2 (d = 2: n >= 7):
	// every 5 hold both, so the area is the segment AB.
	A, B := []float64{1, 2}, []float64{-3, 5}
	dup := [][]float64{A, B, A, B, A, B, A}
	if err := (&SafeArea{F: 2}).Point(x, dup); err != nil {
		t.Fatal(err)
	}
	if d := segDist(A, B, x); d > 1e-9*5 {
		t.Errorf("duplicates: %v is %.3g from segment AB", x, d)
	}
	// All equal in d = 3.
	same := gen(9, 3, func(_, k int) float64 { return float64(k) - 0.25 })
	x3 := make([]float64, 3)
	if err := (&SafeArea{F: 2}).Point(x3, same); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x3, same[0]) {
		t.Errorf("all equal: %v, want %v", x3, same[0])
	}
	// Honest inputs on a segment of the plane, faulty ones far off it.
	rng := rand.New(rand.NewPCG(1, 2))
	honest := gen(8, 3, func(i, k int) float64 { return float64(i) * []float64{1, -2, 0.5}[k] })
	pts := append(slices.Clone(honest), []float64{1e3, 1e3, -1e3}, []float64{rng.NormFloat64(), 50, 3})
	if err := (&SafeArea{F: 2}).Point(x3, pts); err != nil {
		t.Fatal(err)
	}
	if d := segDist3(honest[0], honest[7], x3); d > safeTol*spread(honest) {
		t.Errorf("collinear honest in 3-d: %v is %.3g from their segment", x3, d)
	}
}

// Honest inputs a few float32 ulps apart (nodes close to consensus) and
// two far faulty ones: the instance on which gonum's Simplex cycled before
// the scale floor and the perturbation. The tolerance is relative to the
// scale the programs use, 10⁻⁶ of the largest deviation from the median,
// since the honest spread (4·10⁻⁸) is below it.
func TestSafeAreaNearConsensus(t *testing.T) {
	f32 := func(v ...float32) []float64 { return []float64{float64(v[0]), float64(v[1])} }
	honest := [][]float64{f32(0.47266886, 0.5352251), f32(0.4726689, 0.53522515), f32(0.4726689, 0.53522515), f32(0.4726689, 0.53522515), f32(0.47266886, 0.53522515)}
	pts := append(slices.Clone(honest), f32(-1.404244, 0.923911), f32(-0.17156708, -0.22737885))
	x := make([]float64, 2)
	if err := (&SafeArea{F: 2}).Point(x, pts); err != nil {
		t.Fatal(err)
	}
	if d := hullDist2(honest, x); d > safeTol*1e-6*2 {
		t.Errorf("%v is %.3g from the honest hull", x, d)
	}
	// Consensus reached: the honest inputs equal, the faulty ones one far
	// point (a program once cycled on this).
	p := []float64{0.7476470470428467, 0.25}
	pts = append(gen(8, 2, func(_, k int) float64 { return p[k] }), []float64{100, 100}, []float64{100, 100})
	if err := (&SafeArea{F: 2}).Point(x, pts); err != nil || !slices.Equal(x, p) {
		t.Errorf("consensus: %v, %v; want %v", x, err, p)
	}
}

// Coplanar float32 probability vectors with repeats (a node of the
// resilient-consensus bench under the echo attack, d = 3): one coordinate
// shared by more than half the inputs made its median deviation 0, and
// the program once failed there. The point must be in the hull of every
// 11 of the 13 inputs.
func TestSafeAreaFlatRepeats(t *testing.T) {
	f32 := func(v ...float32) []float64 { return []float64{float64(v[0]), float64(v[1]), float64(v[2])} }
	pts := [][]float64{
		f32(0.31307575, 0.5892783, 0.09764595),
		f32(0.3155468, 0.58680725, 0.09764595),
		f32(0.42095226, 0.44712254, 0.13192518),
		f32(0.31307575, 0.55499905, 0.13192518),
		f32(0.31307575, 0.5892783, 0.09764595),
		f32(0.31307575, 0.55499905, 0.13192518),
		f32(0.31307575, 0.55499905, 0.13192518),
		f32(0.31307575, 0.55499905, 0.13192518),
		f32(0.4552315, 0.44712254, 0.09764595),
		f32(0.31307575, 0.5892783, 0.09764595),
		f32(0.4552315, 0.44712254, 0.09764595),
		f32(0.35079077, 0.55156326, 0.09764595),
		f32(0.42227164, 0.44712254, 0.13060582),
	}
	x := make([]float64, 3)
	if err := (&SafeArea{F: 2}).Point(x, pts); err != nil {
		t.Fatal(err)
	}
	for _, S := range keptSubsets(len(pts), 2) {
		sub := make([][]float64, len(S))
		for t, j := range S {
			sub[t] = pts[j]
		}
		if d := hullDist(sub, x); d > safeTol*spread(sub) {
			t.Errorf("%v is %.3g from the hull of subset %v", x, d, S)
		}
	}
}

func segDist3(a, b, x []float64) float64 {
	var l, dot float64
	for k := range a {
		l += (b[k] - a[k]) * (b[k] - a[k])
		dot += (x[k] - a[k]) * (b[k] - a[k])
	}
	t := max(0, min(1, dot/l))
	y := make([]float64, len(a))
	for k := range a {
		y[k] = a[k] + t*(b[k]-a[k])
	}
	return dist(y, x)
}

// The survey's Example 5 (§4.2.2, ref. [194]): honest probability vectors
// (a, b, b), (b, a, b), (b, b, a) and their centroid; one faulty input
// with f = 1. The coordinate-wise rules (trimmed mean, and MSR around the
// median) leave the honest hull — their output's coordinates do not sum
// to 1 — while the safe area's point is in it: coordinates summing to 1
// and each at least b, the hull being exactly that triangle.
func TestSafeAreaVersusCoordinateWise(t *testing.T) {
	const a, b = 0.8, 0.1
	honest := [][]float32{{a, b, b}, {b, a, b}, {b, b, a}, {1.0 / 3, 1.0 / 3, 1.0 / 3}}
	xs := append(slices.Clone(honest), []float32{0, 0, 0})
	inTriangle := func(p []float32) bool {
		var sum float64
		for _, v := range p {
			sum += float64(v)
			if float64(v) < b-1e-6 {
				return false
			}
		}
		return math.Abs(sum-1) <= 1e-6 // float32 output
	}
	for _, r := range []Rule{&TrimmedMean{F: 1}, &MSR{F: 1}} {
		if out := run(t, r, xs); inTriangle(out) {
			t.Errorf("%s: %v is in the honest hull; the contrast needs it outside", r.Name(), out)
		}
	}
	sa, err := NewWith("safe_area", Params{F: 1})
	if err != nil {
		t.Fatal(err)
	}
	if out := run(t, sa, xs); !inTriangle(out) {
		t.Errorf("safe_area: %v is outside the honest hull", out)
	}
}

// The float32 rule: the point rounded (within float32 spacing of the
// float64 point), and bit-identical under permutations of the inputs.
func TestSafeAreaAggregate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	xs := make([][]float32, 10)
	for i := range xs {
		xs[i] = []float32{float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())}
	}
	xs[4] = []float32{9e5, -9e5, 9e5}
	xs[7] = []float32{float32(math.NaN()), 0, 0} // dropped
	r := &SafeArea{F: 2}
	got := run(t, r, xs)
	if r.Dropped() != 1 {
		t.Errorf("Dropped = %d, want 1", r.Dropped())
	}
	w := r.Weights()
	if len(w) != len(xs) || w[7] != 0 {
		t.Errorf("weights %v: want %d with 0 for the dropped input", w, len(xs))
	}
	var pts [][]float64
	for i, x := range xs {
		if i != 7 {
			pts = append(pts, []float64{float64(x[0]), float64(x[1]), float64(x[2])})
		}
	}
	x := make([]float64, 3)
	if err := (&SafeArea{F: 2}).Point(x, pts); err != nil {
		t.Fatal(err)
	}
	for k := range x {
		if float64(got[k]) != float64(float32(x[k])) {
			t.Errorf("coordinate %d: %g, want float32(%g)", k, got[k], x[k])
		}
	}
	for range 5 {
		p := slices.Clone(xs)
		rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
		if out := run(t, &SafeArea{F: 2}, p); !equalBits(out, got) {
			t.Errorf("permuted inputs: %v, want %v", out, got)
		}
	}
}

// Refusals, each naming its reason.
func TestSafeAreaRefuses(t *testing.T) {
	checkRefusals(t, func(f int, x []float64, p [][]float64) error { return (&SafeArea{F: f}).Point(x, p) }, []refusal{
		{8, 3, 2, ErrTooFewInputs, []string{"n = 8", "f = 2", "(d+1)f + 1) = 9", "d = 3"}},
		{6, 1, 2, ErrTooFewInputs, []string{"max(3f + 1, (d+1)f + 1) = 7"}},
		{3, 2, 1, ErrTooFewInputs, []string{"= 4"}},
		{30, 2, 3, ErrSafeAreaSize, []string{"C(n, f) > 2000", "n = 30", "f = 3"}},
		{3, 100000, 0, ErrSafeAreaSize, []string{"d = 100000", "d <= 8", "not for models"}},
		{5, 9, 0, ErrSafeAreaSize, []string{"d = 9"}},
	})
	if err := (&SafeArea{F: -1}).Point(make([]float64, 2), refusalPoints(4, 2)); err == nil || !strings.Contains(err.Error(), "f = -1") {
		t.Errorf("f = -1: %v", err)
	}
	// The float32 rule on a model-sized vector.
	big := [][]float32{make([]float32, 100000), make([]float32, 100000)}
	r, _ := New("safe_area", 0)
	if err := r.Aggregate(make([]float32, 100000), big); !errors.Is(err, ErrSafeAreaSize) {
		t.Errorf("model-sized vectors: %v", err)
	}
	if r.(*SafeArea).Weights() != nil {
		t.Error("weights after a refusal")
	}
}

// safe_area is a config rule with an f, for low-dimensional vectors only.
func TestSafeAreaSpec(t *testing.T) {
	s, err := ParseSpec("safe_area")
	if err != nil {
		t.Fatal(err)
	}
	if !s.TakesF() || s.AroundOwn() {
		t.Errorf("TakesF %v AroundOwn %v, want true false", s.TakesF(), s.AroundOwn())
	}
	if slices.Contains(Names(), "safe_area") || !slices.Contains(LowDimNames(), "safe_area") {
		t.Errorf("Names %v, LowDimNames %v", Names(), LowDimNames())
	}
	// MaxF asks the rule on planar inputs: n >= 3f + 1.
	for n, want := range map[int]int{3: 0, 4: 1, 7: 2, 10: 3, 12: 3} {
		if got := s.MaxF(Params{}, n); got != want {
			t.Errorf("MaxF(n = %d) = %d, want %d", n, got, want)
		}
	}
	r, _ := New("safe_area", 2)
	if _, ok := r.(Selector); !ok || r.Name() != "safe_area" || r.(*SafeArea).F != 2 {
		t.Errorf("New(safe_area, 2) = %#v", r)
	}
	if _, err := ParseSpec("safe_areas"); err == nil || !strings.Contains(err.Error(), "for low-dimensional vectors safe_area") {
		t.Errorf("unknown rule: %v", err)
	}
}

// Inputs at float32's limits, mixed with ordinary ones and non-finite
// ones: an error or a finite point, never a panic; a point, when
// returned, is within the range of the finite inputs per coordinate (a
// coordinate of a convex combination is between the extremes), up to
// 10⁻³ of the largest magnitude: the tolerance of a subset is relative to
// its largest scaled input, over all coordinates (a value of 3·10³⁸ next
// to ones gave 8·10²⁶ beyond a range ending at 0.5, 3·10⁻¹² of it).
func TestSafeAreaExtremes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	vals := []float32{0, -0, 1, -1, 3e38, -3e38, 1e-38, 1e-45, 0.5, float32(math.Inf(1)), float32(math.NaN())}
	ok := 0
	for trial := range 200 {
		n, d := 4+rng.IntN(6), 1+rng.IntN(3)
		xs := make([][]float32, n)
		for i := range xs {
			xs[i] = make([]float32, d)
			for k := range xs[i] {
				xs[i][k] = vals[rng.IntN(len(vals))]
			}
		}
		r := &SafeArea{F: rng.IntN(2)}
		dst := make([]float32, d)
		if err := r.Aggregate(dst, xs); err != nil {
			continue
		}
		ok++
		var finite [][]float32
		big := 1.0
		for _, x := range xs {
			if !slices.ContainsFunc(x, func(v float32) bool { return math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) }) {
				finite = append(finite, x)
				for _, v := range x {
					big = max(big, math.Abs(float64(v)))
				}
			}
		}
		for k, v := range dst {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, x := range finite {
				lo, hi = min(lo, float64(x[k])), max(hi, float64(x[k]))
			}
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || float64(v) < lo-1e-3*big || float64(v) > hi+1e-3*big {
				t.Errorf("trial %d: coordinate %d = %g, inputs' range [%g, %g]: %v", trial, k, v, lo, hi, xs)
			}
		}
	}
	if ok < 50 {
		t.Errorf("only %d of 200 calls returned a point", ok)
	}
}
