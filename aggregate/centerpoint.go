package aggregate

import (
	"fmt"
	"math"
	"slices"
)

// Centerpoint returns a point of Tukey depth at least ceil(n/(d+1)) for
// d <= 2 ("centerpoint" in spec/robust-rules.md, optional there). The
// Tukey depth of p is the least number of inputs in a closed half-plane
// containing p; a centerpoint always exists.
//
//   - d = 1: the median (Median, with its weights).
//   - d = 2: the first candidate, in this order, whose depth is at least
//     ceil(n/3): the coordinate-wise median (weights: the median's); the
//     inputs, the lexicographically smallest qualifying one (weight 1);
//     for n <= CenterpointSearch, the intersections of lines through two
//     pairs of distinct inputs, enumerated in lexicographic order of the
//     inputs (weight 1/4 to each of the four inputs). The deepest point of
//     a planar set is a vertex of that arrangement, so the search succeeds
//     in exact arithmetic. An intersection's depth is evaluated at the
//     float64 point and the float32 rounding of it is returned: when the
//     deep region is a single point (four inputs in convex position: the
//     crossing of the diagonals), no float32 point may reach the depth, and
//     the output is then within rounding of one that does. Directions from
//     the candidate that agree within 1e-12 rad count as the same (so the
//     inputs on a line through a computed intersection are seen as on
//     it). If no candidate qualifies (n above the search bound, or
//     rounding in a degenerate configuration) it is an error, never a
//     shallower point.
//   - d > 2 or d = 0: an error.
//
// Every candidate set and order is a function of the multiset of inputs, so
// the output is bit-identical under any permutation of them. The depth is
// computed exactly for the inputs' float32 coordinates up to float64
// rounding of angles (atan2).
type Centerpoint struct {
	s   screen
	med Median
	w   []float64
	pts [][2]float64
	ord []int
	ang []float64
	crt []float64
}

// CenterpointSearch bounds n for the line-intersection search of the d = 2
// centerpoint: O(n^4) candidates, O(n log n) each.
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
	if c.depth(float64(dst[0]), float64(dst[1])) >= need {
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
		if c.depth(c.pts[i][0], c.pts[i][1]) >= need {
			copy(dst, xs[i])
			c.w[i] = 1
			c.s.done()
			return nil
		}
	}
	// Intersections of lines through pairs of distinct inputs.
	if n > CenterpointSearch {
		c.s.fail()
		return fmt.Errorf("centerpoint: no median or input has depth >= %d and n = %d is above the line-intersection search bound %d", need, n, CenterpointSearch)
	}
	o := c.ord
	distinct := func(a, b int) bool { return c.pts[o[a]] != c.pts[o[b]] }
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			if !distinct(a, b) {
				continue
			}
			for e := a + 1; e < n; e++ {
				for f := e + 1; f < n; f++ {
					if e == b || f == b || !distinct(e, f) {
						continue
					}
					px, py, ok := intersect(c.pts[o[a]], c.pts[o[b]], c.pts[o[e]], c.pts[o[f]])
					if !ok {
						continue
					}
					if c.depth(px, py) >= need {
						dst[0], dst[1] = float32(px), float32(py)
						for _, k := range []int{a, b, e, f} {
							c.w[o[k]] += 0.25
						}
						c.s.done()
						return nil
					}
				}
			}
		}
	}
	c.s.fail()
	return fmt.Errorf("centerpoint: no candidate of depth >= %d found among n = %d inputs (float rounding of a degenerate configuration)", need, n)
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

// intersect returns the intersection of line ab and line ef, or false when
// they are parallel.
func intersect(a, b, e, f [2]float64) (x, y float64, ok bool) {
	d1x, d1y := b[0]-a[0], b[1]-a[1]
	d2x, d2y := f[0]-e[0], f[1]-e[1]
	den := d1x*d2y - d1y*d2x
	if den == 0 {
		return 0, 0, false
	}
	t := ((e[0]-a[0])*d2y - (e[1]-a[1])*d2x) / den
	x, y = a[0]+t*d1x, a[1]+t*d1y
	return x, y, !math.IsInf(x, 0) && !math.IsInf(y, 0) && !math.IsNaN(x) && !math.IsNaN(y)
}

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
