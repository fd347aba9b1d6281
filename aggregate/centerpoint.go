package aggregate

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
)

// Centerpoint returns a point of Tukey depth at least ceil(n/(d+1)) for
// d <= 2 ("centerpoint" in docs/methods/toolbox.md, optional there). The
// Tukey depth of p is the least number of inputs in a closed half-plane
// containing p; a centerpoint always exists in exact arithmetic.
//
//   - d = 1: the median (Median, with its weights).
//   - d = 2: the first candidate, in this order, whose depth is at least
//     ceil(n/3): the coordinate-wise median (weights: the median's); the
//     inputs, the lexicographically smallest qualifying one (weight 1);
//     then, for n <= CenterpointSearch, a point of the deep region itself.
//     That region (deepregion.go) is the intersection of the closed
//     half-planes, bounded by lines through two inputs, whose open
//     complement holds at most ceil(n/3) − 1 inputs; it is built in exact
//     rational arithmetic (big.Rat), so near-collinear inputs, whose deep
//     region is a sliver far thinner than float32 spacing, lose nothing to
//     rounding. Its centroid's float32 rounding or one of that rounding's
//     eight neighbors is taken when deep; otherwise the float32 points of
//     the region are searched exactly, pair of float32 runs by pair of runs
//     (in a run of one exponent the float32 values are evenly spaced, so
//     the region's float32 points there are lattice points, counted by
//     floor sums), and the first found is taken. Weights: spread evenly
//     over the inputs the region's edges pass through. This phase
//     allocates its big.Rat values (Centerpoint is not a config rule, of
//     which calls allocate nothing once sized).
//   - d > 2 or d = 0: an error (ErrLength). For models there is no
//     usable centerpoint: with n <= d + 1 inputs in general position the
//     promised depth ceil(n/(d+1)) is 1, which every input has, and
//     Clarkson et al.'s iterated Radon points need groups of d + 2 inputs.
//     So NewWith refuses "centerpoint" (a config on real models fails at
//     validation, not at round 0); the type serves planar data only.
//
// The depth of the returned float32 point is always checked exactly
// (orientation signs in float64 with an error bound, in big.Float when the
// bound is not met): it is never shallower than promised. The rule
// returns an error wrapping ErrNoCenterpoint only when no float32 point
// has the promised depth — when the deep region is a single point that is
// not a float32 pair (four inputs in convex position: the crossing of the
// diagonals), or a sliver between float32 points — or when n is above the
// search bound and no median or input qualifies.
//
// Every candidate set and order is a function of the multiset of inputs, so
// the output is bit-identical under any permutation of them.
type Centerpoint struct {
	s   screen
	med Median
	w   []float64
	pts [][2]float64
	ord []int
	ang []float64
	crt []float64
}

// ErrNoCenterpoint is wrapped by Centerpoint when it finds no float32
// point of the promised depth.
var ErrNoCenterpoint = errors.New("no float32 point of the promised depth")

// CenterpointSearch bounds n for the deep-region search of the d = 2
// centerpoint: O(n^3) exact orientation tests and O(n^2) exact clips of
// the region.
const CenterpointSearch = 32

// Name implements Rule.
func (*Centerpoint) Name() string { return "centerpoint" }

// Aggregate implements Rule.
func (c *Centerpoint) Aggregate(dst []float32, xs [][]float32) error {
	xs, d, err := c.s.in("centerpoint", dst, xs, 1)
	if err != nil {
		return err
	}
	n := len(xs)
	switch d {
	case 1:
		c.med.run(dst, xs)
		c.w = append(c.w[:0], c.med.c.weights()...)
		c.s.done()
		return nil
	case 2:
	default:
		c.s.fail()
		return fmt.Errorf("centerpoint: %w: inputs have d = %d coordinates, the centerpoint is implemented for d = 1 and d = 2", ErrLength, d)
	}
	need := (n + 2) / 3
	c.pts = c.pts[:0]
	for _, x := range xs {
		c.pts = append(c.pts, [2]float64{float64(x[0]), float64(x[1])})
	}
	c.w = growFloats(c.w, n)
	clear(c.w)

	// The coordinate-wise median.
	c.med.run(dst, xs)
	if c.deep32(dst[0], dst[1], need) {
		copy(c.w, c.med.c.weights())
		c.s.done()
		return nil
	}
	// The inputs, in lexicographic order (ties by index).
	c.ord = growInts(c.ord, n)
	for i := range c.ord {
		c.ord[i] = i
	}
	slices.SortStableFunc(c.ord, func(a, b int) int { return compareVec(xs[a], xs[b]) })
	for _, i := range c.ord {
		if c.deep32(xs[i][0], xs[i][1], need) {
			copy(dst, xs[i])
			c.w[i] = 1
			c.s.done()
			return nil
		}
	}
	if c.collinear() {
		// The middle input along the line (the lexicographic order is the
		// order along it) has depth >= ceil(n/2); the fast depth, which
		// the input phase asks first, can misjudge inputs all collinear.
		if i := c.ord[(n-1)/2]; exactDepth(c.pts, xs[i][0], xs[i][1]) >= need {
			copy(dst, xs[i])
			c.w[i] = 1
			c.s.done()
			return nil
		}
		c.s.fail()
		return fmt.Errorf("centerpoint: %w: the n = %d inputs are on one line and the middle one has depth < %d", ErrNoCenterpoint, n, need)
	}
	// The exact region of the promised depth, and a float32 point in it.
	if n > CenterpointSearch {
		c.s.fail()
		return fmt.Errorf("centerpoint: %w: no median or input has depth >= %d and n = %d is above the deep-region search bound %d", ErrNoCenterpoint, need, n, CenterpointSearch)
	}
	g, hs := c.deepRegion(need)
	if len(g.v) == 0 {
		c.s.fail()
		return fmt.Errorf("centerpoint: %w: the region of depth >= %d among n = %d inputs came out empty", ErrNoCenterpoint, need, n)
	}
	deep := func(x, y float32) bool { return exactDepth(c.pts, x, y) >= need }
	// Its centroid first (inside it, and central), then every float32
	// point of it in a fixed order.
	cx, cy := new(big.Rat), new(big.Rat)
	for _, v := range g.v {
		cx.Add(cx, v.x)
		cy.Add(cy, v.y)
	}
	k := new(big.Rat).SetInt64(int64(len(g.v)))
	fx, _ := cx.Quo(cx, k).Float64()
	fy, _ := cy.Quo(cy, k).Float64()
	q, ok := round32(fx, fy, deep)
	if !ok {
		q, ok = float32In(g, deep)
	}
	if !ok {
		c.s.fail()
		return fmt.Errorf("centerpoint: %w: depth >= %d among n = %d inputs is reached only off the float32 grid (the deep region, %d vertices, holds no float32 point)", ErrNoCenterpoint, need, n, len(g.v))
	}
	dst[0], dst[1] = q[0], q[1]
	c.regionWeights(g, hs)
	c.s.done()
	return nil
}

// collinear reports whether every input lies on one line.
func (c *Centerpoint) collinear() bool {
	p := c.pts[0]
	for _, q := range c.pts {
		if q == p {
			continue
		}
		for _, z := range c.pts {
			if orient(p, q, z) != 0 {
				return false
			}
		}
		return true
	}
	return true
}

// regionWeights spreads the weight evenly over the inputs the deep
// region's edges pass through (the inputs that determine it); over all
// inputs when no edge comes from an input pair.
func (c *Centerpoint) regionWeights(g polygon, hs []halfPlane) {
	clear(c.w)
	var on []int
	for _, l := range g.lab {
		if l >= 0 {
			on = append(on, hs[l].i, hs[l].j)
		}
	}
	slices.Sort(on)
	on = slices.Compact(on)
	if len(on) == 0 {
		for i := range c.w {
			c.w[i] = 1 / float64(len(c.w))
		}
		return
	}
	for _, i := range on {
		c.w[i] = 1 / float64(len(on))
	}
}

// round32 returns the float32 rounding of (x, y), or one of its eight
// float32 neighbors, that deep accepts.
func round32(x, y float64, deep func(x, y float32) bool) ([2]float32, bool) {
	x32, y32 := float32(x), float32(y)
	up, down := float32(math.Inf(1)), float32(math.Inf(-1))
	for _, qx := range []float32{x32, math.Nextafter32(x32, down), math.Nextafter32(x32, up)} {
		for _, qy := range []float32{y32, math.Nextafter32(y32, down), math.Nextafter32(y32, up)} {
			if !math.IsInf(float64(qx), 0) && !math.IsInf(float64(qy), 0) && deep(qx, qy) {
				return [2]float32{qx, qy}, true
			}
		}
	}
	return [2]float32{}, false
}

// deep32 reports whether the float32 point (px, py) has depth at least
// need, the fast depth first (it rules out most candidates) and then the
// exact one: a candidate is returned only on the exact count.
func (c *Centerpoint) deep32(px, py float32, need int) bool {
	if math.IsInf(float64(px), 0) || math.IsInf(float64(py), 0) {
		return false
	}
	// The fast depth may err by the points it sees as collinear; give it a
	// margin of those and let the exact count decide.
	if c.depth(float64(px), float64(py))+2 < need {
		return false
	}
	return exactDepth(c.pts, px, py) >= need
}

// Weights implements Selector (see the type's doc).
func (c *Centerpoint) Weights() []float64 {
	if c.s.n == 0 {
		return nil
	}
	return c.s.expand(slices.Clone(c.w))
}

// Dropped implements Dropper.
func (c *Centerpoint) Dropped() int { return c.s.Dropped() }

// depth returns the Tukey depth of (px, py) among c.pts: the points equal
// to it plus the fewest points in an open half-plane whose boundary passes
// through it and through no other point (a closed half-plane through p can
// always be turned slightly to leave out the points on its boundary on one
// side, which never adds points). Angles are sorted and the open
// half-planes (α, α+π) between consecutive critical directions are swept
// with two pointers.
func (c *Centerpoint) depth(px, py float64) int {
	coincident := 0
	c.ang = c.ang[:0]
	for _, q := range c.pts {
		dx, dy := q[0]-px, q[1]-py
		if dx == 0 && dy == 0 {
			coincident++
			continue
		}
		a := math.Atan2(dy, dx)
		if a < 0 {
			a += 2 * math.Pi
		}
		c.ang = append(c.ang, a)
	}
	m := len(c.ang)
	if m == 0 {
		return coincident
	}
	slices.Sort(c.ang)
	// Critical directions: every angle and its opposite.
	c.crt = c.crt[:0]
	for _, a := range c.ang {
		c.crt = append(c.crt, a, math.Mod(a+math.Pi, 2*math.Pi))
	}
	slices.Sort(c.crt)
	best := m
	lo, hi := 0, 0 // into the doubled angles: first > α, first >= α+π
	at := func(k int) float64 {
		if k < m {
			return c.ang[k]
		}
		return c.ang[k-m] + 2*math.Pi
	}
	const same = 1e-12 // directions closer than this are one
	for k := range c.crt {
		var alpha float64
		if k+1 < len(c.crt) {
			if c.crt[k+1]-c.crt[k] <= same {
				continue
			}
			alpha = (c.crt[k] + c.crt[k+1]) / 2
		} else {
			if c.crt[0]+2*math.Pi-c.crt[k] <= same {
				continue
			}
			alpha = (c.crt[k] + c.crt[0] + 2*math.Pi) / 2
		}
		for lo < 2*m && at(lo) <= alpha {
			lo++
		}
		hi = max(hi, lo)
		for hi < 2*m && at(hi) < alpha+math.Pi {
			hi++
		}
		best = min(best, hi-lo)
	}
	return coincident + best
}

// exactDepth is the Tukey depth of the float32 point (px, py) among pts
// (float32 coordinates held in float64), counted exactly: with v_i = q_i −
// p, the half-planes whose boundary passes through p just either side of
// the line through v_i hold the points strictly on one side (L_i or R_i)
// and those on the line on one of its two rays (same_i, v_i's own, or
// opp_i), so depth = coincident + min_i(min(L_i, R_i) + min(same_i,
// opp_i)); n when every point is p. O(n²) orientation tests.
func exactDepth(pts [][2]float64, px, py float32) int {
	p := [2]float64{float64(px), float64(py)}
	coincident := 0
	best := len(pts)
	for _, qi := range pts {
		if qi == p {
			coincident++
		}
	}
	for _, qi := range pts {
		if qi == p {
			continue
		}
		var left, right, same, opp int
		for _, qj := range pts {
			if qj == p {
				continue
			}
			switch orient(p, qi, qj) {
			case 1:
				left++
			case -1:
				right++
			default:
				// Collinear with p: the same ray when the differences'
				// signs agree (their signs are exact in float64).
				if sign(qi[0]-p[0]) == sign(qj[0]-p[0]) && sign(qi[1]-p[1]) == sign(qj[1]-p[1]) {
					same++
				} else {
					opp++
				}
			}
		}
		best = min(best, min(left, right)+min(same, opp))
	}
	if coincident == len(pts) {
		return coincident
	}
	return coincident + best
}

func sign(v float64) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// orient is the sign of (a − p) × (b − p) for float32 coordinates held in
// float64: evaluated in float64 with a bound on its rounding error (each
// difference and product rounded once, relative 2^-53 each: well under
// 1e-14 of |l| + |r|), and in exact big.Float arithmetic when the result
// is within the bound. Differences and products of float32 values never
// underflow in float64, so a zero product is exact.
func orient(p, a, b [2]float64) int {
	dax, day := a[0]-p[0], a[1]-p[1]
	dbx, dby := b[0]-p[0], b[1]-p[1]
	l, r := dax*dby, day*dbx
	det := l - r
	if bound := 1e-14 * (math.Abs(l) + math.Abs(r)); det > bound {
		return 1
	} else if det < -bound {
		return -1
	} else if l == 0 && r == 0 {
		return 0
	}
	// float32 values span 2^-149 to 2^128: differences fit in 300 bits,
	// their products in 600.
	const prec = 1024
	f := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	sub := func(x, y float64) *big.Float { return new(big.Float).SetPrec(prec).Sub(f(x), f(y)) }
	mul := func(x, y *big.Float) *big.Float { return new(big.Float).SetPrec(prec).Mul(x, y) }
	e := new(big.Float).SetPrec(prec).Sub(mul(sub(a[0], p[0]), sub(b[1], p[1])), mul(sub(a[1], p[1]), sub(b[0], p[0])))
	return e.Sign()
}
