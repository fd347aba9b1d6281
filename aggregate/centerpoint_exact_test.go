package aggregate

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactDepthOracle is the Tukey depth of the float32 point p among pts in
// exact rational arithmetic: the least number of points q with
// u·(q − p) >= 0 over the directions u = side·(rot90(v_i) + s·δ·v_i),
// v_i = q_i − p, side, s = ±1, for an infinitesimal δ > 0 (symbolic
// perturbation: these are the directions just either side of every
// critical one, in both orientations, so every arc of directions where the
// count is constant is visited). With no point other than p, it is n.
func exactDepthOracle(pts [][]float32, p [2]float32) int {
	rat := func(v float32) *big.Rat { return new(big.Rat).SetFloat64(float64(v)) }
	px, py := rat(p[0]), rat(p[1])
	type v2 struct{ x, y *big.Rat }
	var vs []v2
	coincident := 0
	for _, q := range pts {
		x, y := new(big.Rat).Sub(rat(q[0]), px), new(big.Rat).Sub(rat(q[1]), py)
		if x.Sign() == 0 && y.Sign() == 0 {
			coincident++
			continue
		}
		vs = append(vs, v2{x, y})
	}
	best := len(pts)
	mul := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Mul(a, b) }
	for _, vi := range vs {
		for _, side := range []int{1, -1} {
			for _, s := range []int{1, -1} {
				c := coincident
				for _, vj := range vs {
					cross := new(big.Rat).Sub(mul(vi.x, vj.y), mul(vi.y, vj.x)).Sign() * side
					dot := new(big.Rat).Add(mul(vi.x, vj.x), mul(vi.y, vj.y)).Sign() * side * s
					if cross > 0 || cross == 0 && dot > 0 {
						c++
					}
				}
				best = min(best, c)
			}
		}
	}
	return best
}

// The oracle on hand-checked sets.
func TestExactDepthOracle(t *testing.T) {
	sq := [][]float32{{0, 0}, {2, 0}, {0, 2}, {2, 2}, {1, 1}}
	for _, c := range []struct {
		p    [2]float32
		want int
	}{{[2]float32{1, 1}, 3}, {[2]float32{0, 0}, 1}, {[2]float32{1, 0}, 1}, {[2]float32{5, 5}, 0}, {[2]float32{0.5, 0.5}, 1}} {
		if got := exactDepthOracle(sq, c.p); got != c.want {
			t.Errorf("depth of %v in the square = %d, want %d", c.p, got, c.want)
		}
	}
	// The corners alone: the center is the crossing of the diagonals, of
	// depth 2; a point just off it has depth 1.
	corners := sq[:4]
	if got := exactDepthOracle(corners, [2]float32{1, 1}); got != 2 {
		t.Errorf("depth of the corners' center = %d, want 2", got)
	}
	if got := exactDepthOracle(corners, [2]float32{1, math.Nextafter32(1, 2)}); got != 1 {
		t.Errorf("depth just above the corners' center = %d, want 1", got)
	}
}

// A convex quadrilateral whose deep region (depth 2) is the single
// crossing of its diagonals, (35/12, 35/12), not a float32 point: no
// float32 point has depth 2, so the rule must refuse, not return the
// rounded crossing (depth 1).
func TestCenterpointRoundingNeverShallower(t *testing.T) {
	quad := [][]float32{{0, 0}, {5, 0}, {3, 3}, {0, 7}}
	c := &Centerpoint{}
	dst := make([]float32, 2)
	err := c.Aggregate(dst, quad)
	if err == nil {
		if d := exactDepthOracle(quad, [2]float32{dst[0], dst[1]}); d < 2 {
			t.Fatalf("quadrilateral: returned %v of exact depth %d < 2", dst, d)
		}
	} else {
		t.Logf("quadrilateral: %v", err)
	}
	// Random sets, some with tiny deep regions: a returned point has the
	// promised depth exactly.
	r := rand.New(rand.NewPCG(75, 75))
	refused, byN := 0, map[int]int{}
	for trial := range 300 {
		n := 3 + trial%10
		xs := make([][]float32, n)
		for i := range xs {
			a := r.Float64() * 6.283
			rad := 1 + 1e-3*r.NormFloat64() // near a circle: thin deep regions
			if trial%3 == 0 {
				rad = r.ExpFloat64()
			}
			xs[i] = []float32{float32(rad * math.Cos(a)), float32(rad * math.Sin(a))}
		}
		err := c.Aggregate(dst, xs)
		if err != nil {
			refused++
			byN[n]++
			continue
		}
		if d, need := exactDepthOracle(xs, [2]float32{dst[0], dst[1]}), (n+2)/3; d < need {
			t.Fatalf("trial %d, n = %d: returned %v of exact depth %d < %d", trial, n, dst, d, need)
		}
	}
	t.Logf("refused %d of 300 (no float32 point of the depth found), by n: %v", refused, byN)
}

// Near-collinear inputs have a deep region far thinner than float32
// spacing, a sliver along their line. The five points below are in convex
// position along y ≈ 2x + 1 (every input has depth 1); the float32 point
// (0.026654303, 1.0533086) has exact depth 2 = ceil(5/3) among both sets,
// so the rule must return a point of depth 2, not ErrNoCenterpoint. The
// second set, the first moved by a few float32 steps, is one the search by
// rounded line intersections refused.
func TestCenterpointThinRegion(t *testing.T) {
	witness := [2]float32{0.026654303, 1.0533086}
	for _, xs := range [][][]float32{
		{{0.8893718, 2.7787435}, {-0.19817023, 0.60365957}, {0.9469344, 2.8938687}, {2.086978, 5.1739564}, {-0.20830834, 0.5833833}},
		{{0.889372, 2.7787445}, {-0.19817021, 0.60365945}, {0.9469342, 2.893869}, {2.086979, 5.173958}, {-0.20830828, 0.5833833}},
	} {
		if d := exactDepthOracle(xs, witness); d != 2 {
			t.Fatalf("%v: the witness has depth %d, want 2", xs, d)
		}
		dst := make([]float32, 2)
		if err := (&Centerpoint{}).Aggregate(dst, xs); err != nil {
			t.Errorf("%v: %v, but %v has depth 2", xs, err, witness)
			continue
		}
		if d := exactDepthOracle(xs, [2]float32{dst[0], dst[1]}); d < 2 {
			t.Errorf("%v: returned %v of depth %d < 2", xs, dst, d)
		}
	}
}

// Random near-degenerate sets, checked against the exact oracle: points on
// a very flat arc y = s·x + c + ε·x² (convex position up to float32
// rounding, so the deep region is a thin sliver), and points on a line
// with a few moved by one float32 step. For each set a witness — a float32
// point of depth >= ceil(n/3) by the oracle — is looked for by sampling
// near the line; when one exists the rule must return a point (of that
// depth by the oracle). The sampling is independent of the rule's search.
func TestCenterpointNearDegenerateAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(38, 38))
	witnessed, returned := 0, 0
	for trial := range 240 {
		n := 5 + trial%6
		s, c := 4*r.Float64()-2, r.NormFloat64()
		eps := []float64{1e-6, 3e-7, 1e-7, 0}[trial%4]
		xs := make([][]float32, n)
		pts := make([][2]float64, n)
		for i := range xs {
			x := r.NormFloat64()
			y := s*x + c + eps*x*x
			xs[i] = []float32{float32(x), float32(y)}
			if eps == 0 && r.IntN(3) == 0 {
				xs[i][1] = math.Nextafter32(xs[i][1], float32(math.Inf(2*r.IntN(2)-1)))
			}
			pts[i] = [2]float64{float64(xs[i][0]), float64(xs[i][1])}
		}
		need := (n + 2) / 3
		dst := make([]float32, 2)
		err := (&Centerpoint{}).Aggregate(dst, xs)
		if err == nil {
			returned++
			if d := exactDepthOracle(xs, [2]float32{dst[0], dst[1]}); d < need {
				t.Fatalf("trial %d, n = %d: returned %v of exact depth %d < %d", trial, n, dst, d, need)
			}
			continue
		}
		if !errors.Is(err, ErrNoCenterpoint) {
			t.Fatalf("trial %d: %v", trial, err)
		}
		// Refused: look for a witness near the line, within the inputs'
		// x-range.
		for k := 0; k < 20000; k++ {
			x0 := 0.7 * r.NormFloat64()
			y0 := s*x0 + c + eps*(1.2*r.Float64()*x0*x0+r.Float64())
			p := [2]float32{float32(x0), float32(y0)}
			if k := r.IntN(3); eps == 0 && k > 0 {
				p[1] = math.Nextafter32(p[1], float32(math.Inf(2*k-3)))
			}
			if exactDepth(pts, p[0], p[1]) >= need && exactDepthOracle(xs, p) >= need {
				witnessed++
				t.Errorf("trial %d, n = %d: %v, but %v has depth >= %d (inputs %v)", trial, n, err, p, need, xs)
				break
			}
		}
	}
	t.Logf("%d of 240 returned; %d refused with a witness", returned, witnessed)
	if returned < 200 {
		t.Errorf("only %d of 240 near-degenerate sets got a point", returned)
	}
}

// Four points in convex position: the region of depth 2 is the single
// crossing of the diagonals, computed here in big.Rat. The rule returns it
// when it is a float32 pair and refuses otherwise.
func TestCenterpointQuadrilateralCrossing(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	exact, refused := 0, 0
	for trial := range 300 {
		var xs [][]float32
		for k := range 4 {
			a := (float64(k) + 0.6*r.Float64()) * math.Pi / 2
			rad := 1 + r.Float64()
			if trial%2 == 0 { // small integers: crossings often dyadic
				xs = append(xs, []float32{float32(math.Round(8 * rad * math.Cos(a))), float32(math.Round(8 * rad * math.Sin(a)))})
			} else {
				xs = append(xs, []float32{float32(rad * math.Cos(a)), float32(rad * math.Sin(a))})
			}
		}
		rat := func(v float32) *big.Rat { return new(big.Rat).SetFloat64(float64(v)) }
		p := make([][2]*big.Rat, 4)
		for i, x := range xs {
			p[i] = [2]*big.Rat{rat(x[0]), rat(x[1])}
		}
		// Convex position in this order: the diagonals cross strictly.
		if ratOrient(p[0], p[2], p[1])*ratOrient(p[0], p[2], p[3]) != -1 || ratOrient(p[1], p[3], p[0])*ratOrient(p[1], p[3], p[2]) != -1 {
			continue
		}
		// p0 + t(p2 − p0) on the line p1p3: t = (p1 − p0)×(p3 − p1) / (p2 − p0)×(p3 − p1).
		cr := func(u, v [2]*big.Rat) *big.Rat {
			l := new(big.Rat).Mul(u[0], v[1])
			return l.Sub(l, new(big.Rat).Mul(u[1], v[0]))
		}
		sub := func(a, b [2]*big.Rat) [2]*big.Rat {
			return [2]*big.Rat{new(big.Rat).Sub(a[0], b[0]), new(big.Rat).Sub(a[1], b[1])}
		}
		d13 := sub(p[3], p[1])
		tt := new(big.Rat).Quo(cr(sub(p[1], p[0]), d13), cr(sub(p[2], p[0]), d13))
		var q [2]*big.Rat
		representable := true
		for k := range 2 {
			q[k] = new(big.Rat).Add(p[0][k], new(big.Rat).Mul(tt, sub(p[2], p[0])[k]))
			f, _ := q[k].Float32()
			representable = representable && new(big.Rat).SetFloat64(float64(f)).Cmp(q[k]) == 0
		}
		dst := make([]float32, 2)
		err := (&Centerpoint{}).Aggregate(dst, xs)
		switch {
		case representable && err != nil:
			t.Fatalf("%v: the crossing %v is a float32 pair, but %v", xs, q, err)
		case representable:
			if rat(dst[0]).Cmp(q[0]) != 0 || rat(dst[1]).Cmp(q[1]) != 0 {
				t.Fatalf("%v: returned %v, the only point of depth 2 is %v", xs, dst, q)
			}
			exact++
		case err == nil:
			t.Fatalf("%v: returned %v, but the only point of depth 2, %v, is not a float32 pair", xs, dst, q)
		default:
			refused++
		}
	}
	t.Logf("crossings returned %d, refused %d", exact, refused)
	if exact == 0 || refused == 0 {
		t.Errorf("the quadrilaterals did not exercise both outcomes: %d returned, %d refused", exact, refused)
	}
}

// ratOrient is the sign of (b − a) × (c − a) in big.Rat.
func ratOrient(a, b, c [2]*big.Rat) int {
	l := new(big.Rat).Mul(new(big.Rat).Sub(b[0], a[0]), new(big.Rat).Sub(c[1], a[1]))
	return l.Sub(l, new(big.Rat).Mul(new(big.Rat).Sub(b[1], a[1]), new(big.Rat).Sub(c[0], a[0]))).Sign()
}

// floorSum against the plain sum, for small arguments of both signs.
func TestFloorSum(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for range 3000 {
		n, m := int64(r.IntN(40)), int64(1+r.IntN(30))
		a, b := int64(r.IntN(200)-100), int64(r.IntN(2000)-1000)
		var want int64
		for i := range n {
			v := a*i + b
			q := v / m
			if v%m != 0 && v < 0 {
				q--
			}
			want += q
		}
		if got := floorSum(big.NewInt(n), big.NewInt(m), big.NewInt(a), big.NewInt(b)); got.Int64() != want {
			t.Fatalf("floorSum(%d, %d, %d, %d) = %v, want %d", n, m, a, b, got, want)
		}
	}
}

// The float32 runs: every float32 value lies in the run f32runOf names, at
// an index whose successor is the next float32 (or the run's last index
// when the next float32 starts the next run).
func TestFloat32Runs(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	vals := []float32{0, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 0x1p-126, 0x1p-125, -0x1p-125, 1, -1, math.MaxFloat32, -math.MaxFloat32}
	for range 2000 {
		vals = append(vals, math.Float32frombits(r.Uint32()))
	}
	for _, v := range vals {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			continue
		}
		k := f32runOf(float64(v))
		run := f32runAt(k)
		x := new(big.Rat).SetFloat64(float64(v))
		i, j, ok := run.span(x, x)
		if !ok || i != j {
			t.Fatalf("%v: not in run %d", v, k)
		}
		next := math.Nextafter32(v, float32(math.Inf(1)))
		if math.IsInf(float64(next), 0) {
			continue
		}
		want := new(big.Rat).SetFloat64(float64(next))
		if i < run.last {
			if run.at(i+1).Cmp(want) != 0 {
				t.Fatalf("%v: index %d + 1 in run %d is %v, want %v", v, i, k, run.at(i+1), next)
			}
		} else if nr := f32runAt(k + 1); nr.at(nr.first).Cmp(want) != 0 {
			t.Fatalf("%v: the last of run %d, but the next run starts at %v, want %v", v, k, nr.at(nr.first), next)
		}
	}
}

// float32In against brute force: random thin triangles (exact rational
// vertices) spanning a few dozen float32 steps, around 1 and 2 (where the
// spacing doubles), and around 0 (subnormals, both signs); every float32
// point in their bounding box is tested for membership in big.Rat. The
// search finds a point exactly when one exists, and the point is inside.
func TestFloat32InAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	found, empty := 0, 0
	for trial := range 400 {
		base := []float64{1, 2, 0, -1}[trial%4]
		step := []float64{0x1p-23, 0x1p-22, 0x1p-149, 0x1p-23}[trial%4]
		pt := func() [2]*big.Rat {
			var p [2]*big.Rat
			for k := range p {
				off := new(big.Rat).SetFrac64(int64(r.IntN(40*64))-20*64, 64) // in steps, to 1/64 of one
				p[k] = new(big.Rat).Add(new(big.Rat).SetFloat64(base), off.Mul(off, new(big.Rat).SetFloat64(step)))
			}
			return p
		}
		a, b := pt(), pt()
		// The third vertex near the segment ab: thin.
		tt := new(big.Rat).SetFrac64(int64(r.IntN(64)), 64)
		c := pt()
		for k := range c {
			m := new(big.Rat).Add(a[k], new(big.Rat).Mul(tt, new(big.Rat).Sub(b[k], a[k])))
			c[k] = m.Add(m, new(big.Rat).Mul(new(big.Rat).SetFrac64(int64(r.IntN(9)-4), 8), new(big.Rat).SetFloat64(step)))
		}
		if ratOrient(a, b, c) == 0 {
			continue
		}
		if ratOrient(a, b, c) < 0 {
			b, c = c, b
		}
		tri := [][2]*big.Rat{a, b, c}
		in := func(x, y float32) bool {
			p := [2]*big.Rat{new(big.Rat).SetFloat64(float64(x)), new(big.Rat).SetFloat64(float64(y))}
			for k := range tri {
				if ratOrient(tri[k], tri[(k+1)%3], p) < 0 {
					return false
				}
			}
			return true
		}
		var g polygon
		for _, v := range tri {
			g.add(ratPt{v[0], v[1]}, -1)
		}
		// Brute force over the bounding box.
		lo, hi := [2]float32{}, [2]float32{}
		for k := range 2 {
			l, h := tri[0][k], tri[0][k]
			for _, v := range tri[1:] {
				if v[k].Cmp(l) < 0 {
					l = v[k]
				}
				if v[k].Cmp(h) > 0 {
					h = v[k]
				}
			}
			lf, _ := l.Float32()
			hf, _ := h.Float32()
			lo[k], hi[k] = math.Nextafter32(lf, float32(math.Inf(-1))), math.Nextafter32(hf, float32(math.Inf(1)))
		}
		exists := false
		for x := lo[0]; x <= hi[0] && !exists; x = math.Nextafter32(x, float32(math.Inf(1))) {
			for y := lo[1]; y <= hi[1]; y = math.Nextafter32(y, float32(math.Inf(1))) {
				if in(x, y) {
					exists = true
					break
				}
			}
		}
		q, ok := float32In(g, in)
		if ok != exists {
			t.Fatalf("trial %d, triangle %v: float32In says %v, brute force %v", trial, tri, ok, exists)
		}
		if ok {
			found++
			if !in(q[0], q[1]) {
				t.Fatalf("trial %d: %v is outside the triangle", trial, q)
			}
		} else {
			empty++
		}
	}
	t.Logf("%d triangles with a float32 point, %d without", found, empty)
	if found == 0 || empty == 0 {
		t.Errorf("the triangles did not exercise both outcomes: %d, %d", found, empty)
	}
}

// Inputs exactly on one line (y = 3x + 1 on dyadic x, so every coordinate
// is exact in float32), many of them: the middle one along the line has
// depth >= ceil(n/2), whatever the search bound.
func TestCenterpointCollinear(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, n := range []int{3, 7, 20, 33, 90} {
		xs := make([][]float32, n)
		for i := range xs {
			k := float32(r.IntN(1000) - 500)
			xs[i] = []float32{k / 1024, 3*k/1024 + 1}
		}
		dst := make([]float32, 2)
		if err := (&Centerpoint{}).Aggregate(dst, xs); err != nil {
			t.Fatalf("n = %d: %v", n, err)
		}
		if d, need := exactDepthOracle(xs, [2]float32{dst[0], dst[1]}), (n+2)/3; d < need {
			t.Fatalf("n = %d: %v has depth %d < %d", n, dst, d, need)
		}
	}
}
