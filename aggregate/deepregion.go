package aggregate

import (
	"math"
	"math/big"
	"slices"
)

// The exact region of Tukey depth at least k in the plane, and the search
// for a float32 point in it (Centerpoint's last phase).
//
// For inputs not all on one line, depth(p) >= k exactly when p lies in
// every closed half-plane whose boundary passes through two distinct
// inputs and whose open complement holds at most k − 1 inputs. (If p has
// depth < k, some closed half-plane through p holds at most k − 1 inputs;
// widen it to an open one with the same inputs, push its boundary outward
// until it meets an input q, then turn it about q until it meets a second
// input: no input enters the open side on the way, and one of the two
// turning directions meets an input before the boundary reaches p unless
// every input is on the line through q and p. Conversely, p inside such an
// open side has a closed half-plane through p within it.) So
// the region is a convex polygon cut from the inputs' bounding box by
// O(n²) half-planes, computed here in big.Rat: its vertices are exact
// rationals, never rounded.

// halfPlane is {(x, y) : a·x + b·y + c >= 0}; i and j are the inputs its
// boundary passes through.
type halfPlane struct {
	a, b, c *big.Rat
	i, j    int
}

// ratPt is an exact point. Its Rats are never modified once made.
type ratPt struct{ x, y *big.Rat }

func (p ratPt) eq(q ratPt) bool { return p.x.Cmp(q.x) == 0 && p.y.Cmp(q.y) == 0 }

// polygon is a convex polygon in counterclockwise order, possibly
// degenerate (a segment: two vertices, a point: one); lab[k] is the index
// of the half-plane whose boundary the edge v[k] → v[k+1] lies on, −1 for
// the bounding box.
type polygon struct {
	v   []ratPt
	lab []int
}

func newRat(v float64) *big.Rat { return new(big.Rat).SetFloat64(v) }

func ratMul(a, b *big.Rat) *big.Rat { return new(big.Rat).Mul(a, b) }
func ratAdd(a, b *big.Rat) *big.Rat { return new(big.Rat).Add(a, b) }
func ratSub(a, b *big.Rat) *big.Rat { return new(big.Rat).Sub(a, b) }
func ratQuo(a, b *big.Rat) *big.Rat { return new(big.Rat).Quo(a, b) }

func (h halfPlane) eval(p ratPt) *big.Rat {
	return ratAdd(ratAdd(ratMul(h.a, p.x), ratMul(h.b, p.y)), h.c)
}

// boundary returns the half-plane left of the directed line p → q (right
// of it when right is set), closed.
func boundary(p, q [2]float64, right bool, i, j int) halfPlane {
	px, py, qx, qy := newRat(p[0]), newRat(p[1]), newRat(q[0]), newRat(q[1])
	dx, dy := ratSub(qx, px), ratSub(qy, py)
	// (q − p) × (z − p) = −dy·x + dx·y + (dy·px − dx·py).
	h := halfPlane{a: new(big.Rat).Neg(dy), b: dx, c: ratSub(ratMul(dy, px), ratMul(dx, py)), i: i, j: j}
	if right {
		h.a.Neg(h.a)
		h.b = new(big.Rat).Neg(dx)
		h.c.Neg(h.c)
	}
	return h
}

func (g *polygon) add(p ratPt, lab int) {
	g.v = append(g.v, p)
	g.lab = append(g.lab, lab)
}

// clip returns g ∩ {h >= 0} (Sutherland–Hodgman, exact), labelling the new
// edge along h's boundary id.
func (g polygon) clip(h halfPlane, id int) polygon {
	n := len(g.v)
	val := make([]*big.Rat, n)
	inside := true
	for k, p := range g.v {
		val[k] = h.eval(p)
		inside = inside && val[k].Sign() >= 0
	}
	if inside {
		return g
	}
	var out polygon
	for k := range n {
		kn := (k + 1) % n
		sp, sq := val[k].Sign(), val[kn].Sign()
		switch {
		case sp >= 0 && sq >= 0:
			out.add(g.v[k], g.lab[k])
		case sp == 0: // leaves along h's boundary
			out.add(g.v[k], id)
		case sp > 0:
			out.add(g.v[k], g.lab[k])
			out.add(crossing(g.v[k], g.v[kn], val[k], val[kn]), id)
		case sq > 0:
			out.add(crossing(g.v[k], g.v[kn], val[k], val[kn]), g.lab[k])
		}
	}
	return out.dedupe()
}

// crossing is the point of segment pq where the half-plane's value, vp at
// p and vq at q (of opposite signs), is zero.
func crossing(p, q ratPt, vp, vq *big.Rat) ratPt {
	t := ratQuo(vp, ratSub(vp, vq))
	return ratPt{ratAdd(p.x, ratMul(t, ratSub(q.x, p.x))), ratAdd(p.y, ratMul(t, ratSub(q.y, p.y)))}
}

// dedupe drops a vertex equal to the next one (cyclically), keeping the
// next one's outgoing edge.
func (g polygon) dedupe() polygon {
	n := len(g.v)
	var out polygon
	for k := range n {
		if n > 1 && g.v[k].eq(g.v[(k+1)%n]) {
			continue
		}
		out.add(g.v[k], g.lab[k])
	}
	if len(out.v) == 0 && n > 0 {
		out.add(g.v[n-1], g.lab[n-1])
	}
	return out
}

// deepRegion returns the region of depth >= need among c.pts (see the top
// of this file) and its half-planes, clipped in the inputs' lexicographic
// order (c.ord) so that the result is a function of the multiset of
// inputs. For inputs all on one line the half-planes only pin the line,
// and the region is a superset; Centerpoint checks every point it returns.
func (c *Centerpoint) deepRegion(need int) (polygon, []halfPlane) {
	pts := c.pts
	lo, hi := pts[0], pts[0]
	for _, p := range pts {
		lo = [2]float64{min(lo[0], p[0]), min(lo[1], p[1])}
		hi = [2]float64{max(hi[0], p[0]), max(hi[1], p[1])}
	}
	var g polygon
	for _, p := range [][2]float64{lo, {hi[0], lo[1]}, hi, {lo[0], hi[1]}} {
		g.add(ratPt{newRat(p[0]), newRat(p[1])}, -1)
	}
	g = g.dedupe()
	// The distinct inputs, in lexicographic order.
	var u []int
	for k, i := range c.ord {
		if k == 0 || pts[i] != pts[c.ord[k-1]] {
			u = append(u, i)
		}
	}
	var hs []halfPlane
	for a := range u {
		for b := a + 1; b < len(u); b++ {
			p, q := pts[u[a]], pts[u[b]]
			left, right := 0, 0
			for _, z := range pts {
				switch orient(p, q, z) {
				case 1:
					left++
				case -1:
					right++
				}
			}
			if right <= need-1 { // the open right side is shallow: keep left
				hs = append(hs, boundary(p, q, false, u[a], u[b]))
				g = g.clip(hs[len(hs)-1], len(hs)-1)
			}
			if left <= need-1 {
				hs = append(hs, boundary(p, q, true, u[a], u[b]))
				g = g.clip(hs[len(hs)-1], len(hs)-1)
			}
			if len(g.v) == 0 {
				return g, hs
			}
		}
	}
	return g, hs
}

// float32 values as runs of evenly spaced values: run k < 253 is the
// negative binade with exponent 127 − k, run 253 the values i·2^-149 for
// |i| < 2^24 (subnormals and the two smallest binades, one spacing), run
// k > 253 the positive binade with exponent k − 379. Within a run the
// values are s + i·u for i in [first, last].
const (
	f32Runs   = 507
	f32Center = 253
)

type f32run struct {
	s, u        *big.Rat
	first, last int64
}

func pow2(e int) *big.Rat {
	if e >= 0 {
		return new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(e)))
	}
	return new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), uint(-e)))
}

func f32runAt(k int) f32run {
	switch {
	case k == f32Center:
		return f32run{s: new(big.Rat), u: pow2(-149), first: -(1<<24 - 1), last: 1<<24 - 1}
	case k < f32Center: // [−2^(e+1) + u, −2^e]
		e := 127 - k
		u := pow2(e - 23)
		return f32run{s: ratAdd(new(big.Rat).Neg(pow2(e+1)), u), u: u, first: 0, last: 1<<23 - 1}
	default: // [2^e, 2^(e+1) − u]
		e := k - 379
		return f32run{s: pow2(e), u: pow2(e - 23), first: 0, last: 1<<23 - 1}
	}
}

// f32runOf is the run holding the float64 value v (clamped to the float32
// range).
func f32runOf(v float64) int {
	if math.Abs(v) < 0x1p-125 {
		return f32Center
	}
	_, exp := math.Frexp(v)
	e := min(max(exp-1, -125), 127)
	if v < 0 {
		return 127 - e
	}
	return 379 + e
}

// span is the range of indices i with lo <= s + i·u <= hi.
func (r f32run) span(lo, hi *big.Rat) (int64, int64, bool) {
	a := ratCeil(ratQuo(ratSub(lo, r.s), r.u))
	b := ratFloor(ratQuo(ratSub(hi, r.s), r.u))
	first, last := big.NewInt(r.first), big.NewInt(r.last)
	if a.Cmp(first) < 0 {
		a = first
	}
	if b.Cmp(last) > 0 {
		b = last
	}
	if a.Cmp(b) > 0 {
		return 0, 0, false
	}
	return a.Int64(), b.Int64(), true
}

func (r f32run) at(i int64) *big.Rat { return ratAdd(r.s, ratMul(new(big.Rat).SetInt64(i), r.u)) }

func ratFloor(q *big.Rat) *big.Int { return new(big.Int).Div(q.Num(), q.Denom()) } // Euclidean: floor for a positive denominator

func ratCeil(q *big.Rat) *big.Int {
	f := ratFloor(new(big.Rat).Neg(q))
	return f.Neg(f)
}

// runsOver lists, in ascending order, the runs that hold a float32 value
// in [lo, hi], with their index ranges.
func runsOver(lo, hi *big.Rat) []f32span {
	l, _ := lo.Float64()
	h, _ := hi.Float64()
	var out []f32span
	// One run of slack either side: the float64 approximations may round
	// across a run boundary.
	for k := max(f32runOf(l)-1, 0); k <= min(f32runOf(h)+1, f32Runs-1); k++ {
		r := f32runAt(k)
		if a, b, ok := r.span(lo, hi); ok {
			out = append(out, f32span{r, a, b})
		}
	}
	return out
}

type f32span struct {
	f32run
	a, b int64
}

// axisSlab clips g to lo <= x <= hi (or y, when y is set).
func (g polygon) axisSlab(lo, hi *big.Rat, y bool) polygon {
	zero, one, minus := new(big.Rat), big.NewRat(1, 1), big.NewRat(-1, 1)
	ge := halfPlane{a: one, b: zero, c: new(big.Rat).Neg(lo)}
	le := halfPlane{a: minus, b: zero, c: hi}
	if y {
		ge.a, ge.b, le.a, le.b = zero, one, zero, minus
	}
	if g = g.clip(ge, -1); len(g.v) == 0 {
		return g
	}
	return g.clip(le, -1)
}

func (g polygon) extent(y bool) (*big.Rat, *big.Rat) {
	c := func(p ratPt) *big.Rat {
		if y {
			return p.y
		}
		return p.x
	}
	lo, hi := c(g.v[0]), c(g.v[0])
	for _, p := range g.v[1:] {
		if c(p).Cmp(lo) < 0 {
			lo = c(p)
		}
		if c(p).Cmp(hi) > 0 {
			hi = c(p)
		}
	}
	return lo, hi
}

// float32In returns a float32 point of g for which ok(x, y) holds, looking
// at every float32 point of g in a fixed order (the runs of x, then of y,
// ascending; in a pair of runs the least x, then the least y) until ok
// accepts one; false when there is none. Within a pair of runs the
// float32 points form a lattice, counted exactly by floor sums.
func float32In(g polygon, ok func(x, y float32) bool) ([2]float32, bool) {
	const maxRejected = 16
	rejected := 0
	xlo, xhi := g.extent(false)
	for _, rx := range runsOver(xlo, xhi) {
		sx := g.axisSlab(rx.at(rx.a), rx.at(rx.b), false)
		if len(sx.v) == 0 {
			continue
		}
		ylo, yhi := sx.extent(true)
		for _, ry := range runsOver(ylo, yhi) {
			box := sx.axisSlab(ry.at(ry.a), ry.at(ry.b), true)
			if len(box.v) == 0 {
				continue
			}
			l := newLattice(box, rx.f32run, ry.f32run)
			lo, hi := l.x0, l.x1
			for lo <= hi {
				if l.count(lo, hi).Sign() == 0 {
					break
				}
				// The least column with a point, by bisection.
				a, b := lo, hi
				for a < b {
					if m := a + (b-a)/2; l.count(a, m).Sign() > 0 {
						b = m
					} else {
						a = m + 1
					}
				}
				lower, _ := l.section(a)
				x, _ := rx.at(a).Float32()
				y, _ := ry.at(ratCeil(lower).Int64()).Float32()
				if ok(x, y) {
					return [2]float32{x, y}, true
				}
				// Every point of the region is deep (see the top of the
				// file): a rejection means its premise failed.
				if rejected++; rejected == maxRejected {
					return [2]float32{}, false
				}
				lo = a + 1
			}
		}
	}
	return [2]float32{}, false
}

// lattice is a convex polygon in the index coordinates of a pair of runs,
// X = (x − sx)/ux, Y = (y − sy)/uy, as its upper and lower boundary at the
// distinct vertex abscissae bx (piecewise linear between them).
type lattice struct {
	bx, up, dn []*big.Rat
	x0, x1     int64 // the integer abscissae it spans
}

func newLattice(g polygon, rx, ry f32run) *lattice {
	vs := make([]ratPt, len(g.v))
	for k, p := range g.v {
		vs[k] = ratPt{ratQuo(ratSub(p.x, rx.s), rx.u), ratQuo(ratSub(p.y, ry.s), ry.u)}
	}
	l := &lattice{}
	for _, p := range vs {
		l.bx = append(l.bx, p.x)
	}
	slices.SortFunc(l.bx, func(a, b *big.Rat) int { return a.Cmp(b) })
	l.bx = slices.CompactFunc(l.bx, func(a, b *big.Rat) bool { return a.Cmp(b) == 0 })
	for _, x := range l.bx {
		dn, up := sectionAt(vs, x)
		l.dn, l.up = append(l.dn, dn), append(l.up, up)
	}
	l.x0, l.x1 = ratCeil(l.bx[0]).Int64(), ratFloor(l.bx[len(l.bx)-1]).Int64()
	return l
}

// sectionAt is the least and greatest Y of the polygon vs at X = x (x
// within its range).
func sectionAt(vs []ratPt, x *big.Rat) (*big.Rat, *big.Rat) {
	var lo, hi *big.Rat
	put := func(y *big.Rat) {
		if lo == nil || y.Cmp(lo) < 0 {
			lo = y
		}
		if hi == nil || y.Cmp(hi) > 0 {
			hi = y
		}
	}
	for k, p := range vs {
		q := vs[(k+1)%len(vs)]
		if p.x.Cmp(x) == 0 {
			put(p.y)
		}
		if (p.x.Cmp(x) < 0) != (q.x.Cmp(x) < 0) && p.x.Cmp(x) != 0 && q.x.Cmp(x) != 0 {
			t := ratQuo(ratSub(x, p.x), ratSub(q.x, p.x))
			put(ratAdd(p.y, ratMul(t, ratSub(q.y, p.y))))
		}
	}
	return lo, hi
}

// section is the lower and upper boundary at the integer abscissa i.
func (l *lattice) section(i int64) (*big.Rat, *big.Rat) {
	x := new(big.Rat).SetInt64(i)
	k, _ := slices.BinarySearchFunc(l.bx, x, func(a, b *big.Rat) int { return a.Cmp(b) })
	if k < len(l.bx) && l.bx[k].Cmp(x) == 0 {
		return l.dn[k], l.up[k]
	}
	interp := func(v []*big.Rat) *big.Rat {
		t := ratQuo(ratSub(x, l.bx[k-1]), ratSub(l.bx[k], l.bx[k-1]))
		return ratAdd(v[k-1], ratMul(t, ratSub(v[k], v[k-1])))
	}
	return interp(l.dn), interp(l.up)
}

// count is the number of lattice points in columns a..b, Σ (⌊up(i)⌋ −
// ⌈dn(i)⌉ + 1), each column's term being >= 0 since up >= dn: one floor
// sum per linear piece of each boundary.
func (l *lattice) count(a, b int64) *big.Int {
	a, b = max(a, l.x0), min(b, l.x1)
	total := new(big.Int)
	if a > b {
		return total
	}
	total.SetInt64(b - a + 1)
	if len(l.bx) == 1 { // a vertical segment or a point at an integer abscissa
		return total.Add(total, new(big.Int).Sub(ratFloor(l.up[0]), ratCeil(l.dn[0])))
	}
	for k := 0; k+1 < len(l.bx); k++ {
		lo := max(ratCeil(l.bx[k]).Int64(), a)
		hi := ratCeil(l.bx[k+1]).Int64() - 1
		if k+2 == len(l.bx) {
			hi = ratFloor(l.bx[k+1]).Int64()
		}
		hi = min(hi, b)
		if lo > hi {
			continue
		}
		total.Add(total, linearFloorSum(l.bx[k], l.bx[k+1], l.up[k], l.up[k+1], lo, hi, false))
		total.Sub(total, linearFloorSum(l.bx[k], l.bx[k+1], l.dn[k], l.dn[k+1], lo, hi, true))
	}
	return total
}

// linearFloorSum is Σ_{i=lo}^{hi} ⌊y(i)⌋ (⌈y(i)⌉ when ceil) for the line
// y through (x0, y0) and (x1, y1), x0 < x1.
func linearFloorSum(x0, x1, y0, y1 *big.Rat, lo, hi int64, ceil bool) *big.Int {
	slope := ratQuo(ratSub(y1, y0), ratSub(x1, x0))
	icept := ratSub(y0, ratMul(slope, x0))
	if ceil { // ⌈v⌉ = −⌊−v⌋
		slope, icept = new(big.Rat).Neg(slope), new(big.Rat).Neg(icept)
	}
	// y(i) = (A·i + B)/M over integers.
	m := new(big.Int).Mul(slope.Denom(), icept.Denom())
	a := new(big.Int).Mul(slope.Num(), icept.Denom())
	b := new(big.Int).Mul(icept.Num(), slope.Denom())
	b.Add(b, new(big.Int).Mul(a, big.NewInt(lo))) // shift to i = lo + t
	s := floorSum(big.NewInt(hi-lo+1), m, a, b)
	if ceil {
		s.Neg(s)
	}
	return s
}

// floorSum is Σ_{t=0}^{n−1} ⌊(a·t + b)/m⌋ for m > 0 and any a, b, by the
// Euclid-like reduction: whole multiples of m come out of a and b in
// closed form, and the rest is the same sum with the roles of the axes
// swapped (counting lattice points under the line column by column equals
// counting them row by row).
func floorSum(n, m, a, b *big.Int) *big.Int {
	n, m, a, b = new(big.Int).Set(n), new(big.Int).Set(m), new(big.Int).Set(a), new(big.Int).Set(b)
	ans := new(big.Int)
	tri := func(n *big.Int) *big.Int { // n(n−1)/2
		t := new(big.Int).Sub(n, big.NewInt(1))
		t.Mul(t, n)
		return t.Rsh(t, 1)
	}
	q, r := new(big.Int), new(big.Int)
	// Negative a or b: take out ⌊a/m⌋ and ⌊b/m⌋ (Euclidean, r >= 0).
	q.DivMod(a, m, r)
	ans.Add(ans, new(big.Int).Mul(tri(n), q))
	a.Set(r)
	q.DivMod(b, m, r)
	ans.Add(ans, new(big.Int).Mul(n, q))
	b.Set(r)
	for n.Sign() > 0 {
		if a.Cmp(m) >= 0 {
			q.DivMod(a, m, r)
			ans.Add(ans, new(big.Int).Mul(tri(n), q))
			a.Set(r)
		}
		if b.Cmp(m) >= 0 {
			q.DivMod(b, m, r)
			ans.Add(ans, new(big.Int).Mul(n, q))
			b.Set(r)
		}
		yMax := new(big.Int).Mul(a, n)
		yMax.Add(yMax, b)
		if yMax.Cmp(m) < 0 {
			break
		}
		// Swap the axes: n' = ⌊yMax/m⌋ rows, b' = yMax mod m.
		n.DivMod(yMax, m, b)
		m, a = a, m
	}
	return ans
}
