package aggregate

import (
	"fmt"
	"math"
)

// RadonPoint is the iterated Radon point of resilient vector consensus
// ("radon" in docs/methods/safe-area.md; the survey, §4.5.1 and Table 8:
// approximate Tverberg partitions by iterated Radon points, refs. [196],
// [197]). Radon's theorem: any d + 2 points in R^d split into two parts
// whose convex hulls meet, at the Radon point. Iterated: the N = (d+2)^h
// inputs used are taken d + 2 at a time, each group replaced by its Radon
// point, and the same is done with those points, h times, down to one
// point. Each level doubles a partition: a Radon point of points p_1 …
// p_{d+2}, each in the hull of every part of a partition of its own
// inputs into 2^l parts, lies in the hull of the union of the p_i's t-th
// parts over either side of the Radon split, for every t: a partition of
// the N inputs into 2^h parts, all of whose hulls hold the point — an
// approximate Tverberg partition, found in polynomial time (the exact
// search of TverbergPoint needs only (d+1)F + 1 inputs, but tries their
// partitions one by one). With 2^h >= F + 1 parts and at most F faulty
// inputs one part is all honest, so the point is in the hull of honest
// inputs.
//
// The rule takes h = ⌈log₂(F + 1)⌉, the fewest levels whose parts suffice,
// and the N = (d+2)^h inputs nearest to the coordinate-wise median (as
// TverbergPoint does; any N of the inputs will do for validity). The
// condition is n >= (d+2)^h, else ErrTooFewInputs: (d+2)^⌈log₂(F+1)⌉
// grows like (F+1)^log₂(d+2), against (d+1)F + 1 for an exact Tverberg
// partition. Limits: d <= SafeAreaMaxDim and N <= RadonMaxInputs, else
// ErrSafeAreaSize.
//
// A group's Radon point is computed from a null vector λ of the (d+1) ×
// (d+2) system Σ λ_i p_i = 0, Σ λ_i = 0 (Gaussian elimination with full
// pivoting, in the scaled coordinates of SafeArea's programs): the point
// is Σ_{λ_i > 0} λ_i p_i / Σ_{λ_i > 0} λ_i (a group of equal points gives
// that point). The construction is the textbook one (a tree of Radon
// points, each level doubling the parts); the survey's ref. [196] was not
// read, so this is our choice of an approximate Tverberg partition.
//
// Weights: the mean over the 2^h parts of the convex weights expressing the
// point in each part's hull (0 for inputs outside the N). Use it through
// a pointer, from one goroutine at a time.
type RadonPoint struct {
	// F is the number of faulty inputs tolerated: 2^⌈log₂(F+1)⌉ parts.
	F int

	h     hullRule
	parts [][]int // of the last point, as indices into the sorted inputs
}

// RadonMaxInputs bounds N = (d+2)^h, the inputs the iterated Radon point
// uses.
const RadonMaxInputs = 100_000

// RadonLevels is h = ⌈log₂(f + 1)⌉, the levels of Radon points RadonPoint
// takes to tolerate f faulty inputs.
func RadonLevels(f int) int {
	h := 0
	for 1<<h < f+1 {
		h++
	}
	return h
}

// RadonInputs is (d+2)^h, the inputs h levels of Radon points in d
// dimensions use (RadonPoint's condition: n >= RadonInputs(d,
// RadonLevels(f))), or -1 above RadonMaxInputs.
func RadonInputs(d, h int) int {
	n := 1
	for range h {
		n *= d + 2
		if n > RadonMaxInputs {
			return -1
		}
	}
	return n
}

// Name implements Rule.
func (*RadonPoint) Name() string { return "radon" }

// Aggregate implements Rule.
func (r *RadonPoint) Aggregate(dst []float32, xs [][]float32) error {
	return r.h.aggregate("radon", r, dst, xs)
}

// Point writes into dst the iterated Radon point of pts (float64 vectors
// of length len(dst)), as SafeArea.Point does.
func (r *RadonPoint) Point(dst []float64, pts [][]float64) error {
	return r.h.point("radon", r, dst, pts)
}

// Weights implements Selector: see RadonPoint.
func (r *RadonPoint) Weights() []float64 { return r.h.weights() }

// Partition returns the 2^h parts of the last point's partition, as
// indices into the inputs of the last call (in the caller's order,
// non-finite inputs dropped by Aggregate not counted); nil after a
// failure.
func (r *RadonPoint) Partition() [][]int {
	return r.h.partition(r.parts)
}

func (r *RadonPoint) check(n, d int) error {
	if err := checkLowDim("radon", r.F, d); err != nil {
		return err
	}
	h := RadonLevels(r.F)
	N := RadonInputs(d, h)
	if N < 0 {
		return fmt.Errorf("radon: %w: (d+2)^h = %d^%d inputs for 2^h >= f + 1 = %d parts, above the limit %d", ErrSafeAreaSize, d+2, h, r.F+1, RadonMaxInputs)
	}
	if n < N {
		return r.h.s.tooFew("radon", n, r.F, fmt.Sprintf("n >= (d+2)^h = %d for d = %d, h = ⌈log₂(f + 1)⌉ = %d (iterated Radon points: 2^h parts of (d+2)^h inputs; the survey, Table 8, refs. [196], [197])", N, d, h))
	}
	return nil
}

// radonNode is a point of the Radon tree with the partition that
// certifies it: parts[t] lists the leaves (indices into the scaled
// inputs) and coef[t] the convex weights expressing the point in their
// hull.
type radonNode struct {
	x     []float64
	parts [][]int
	coef  [][]float64
}

func (r *RadonPoint) solve(dst []float64, sorted [][]float64) ([]float64, error) {
	n, d := len(sorted), len(dst)
	N := RadonInputs(d, RadonLevels(r.F))
	c, s, w := scaleInputs(sorted, d)
	chosen := nearestMedian(w, N)
	level := make([]radonNode, N)
	for k, j := range chosen {
		level[k] = radonNode{x: w[j], parts: [][]int{{j}}, coef: [][]float64{{1}}}
	}
	for len(level) > 1 {
		next := make([]radonNode, 0, len(level)/(d+2))
		for g := 0; g < len(level); g += d + 2 {
			nd, err := radonOf(level[g:g+d+2], d)
			if err != nil {
				return nil, err
			}
			next = append(next, nd)
		}
		level = next
	}
	top := level[0]
	wt := make([]float64, n)
	for t, p := range top.parts {
		for i, j := range p {
			wt[j] += top.coef[t][i] / float64(len(top.parts))
		}
	}
	r.parts = top.parts
	for k := range d {
		dst[k] = c[k] + s[k]*top.x[k]
		if math.IsInf(dst[k], 0) || math.IsNaN(dst[k]) {
			return nil, fmt.Errorf("radon: %w: coordinate %d of the point is not finite", ErrNoSafePoint, k)
		}
	}
	return wt, nil
}

// radonOf is the Radon point of the d + 2 nodes g, with its doubled
// partition.
func radonOf(g []radonNode, d int) (radonNode, error) {
	m := len(g)
	lam, err := radonCoefficients(g, d)
	if err != nil {
		return radonNode{}, err
	}
	var pos, neg float64
	for _, l := range lam {
		if l > 0 {
			pos += l
		} else {
			neg -= l
		}
	}
	x := make([]float64, d)
	for i, l := range lam {
		if l > 0 {
			for k := range d {
				x[k] += l / pos * g[i].x[k]
			}
		}
	}
	// Part t of the positive side is the union of the t-th parts of the
	// nodes with λ_i > 0, weighted by λ_i / pos; of the other side, those
	// with λ_i <= 0 (λ_i = 0: weight 0, its inputs still in a part), by
	// −λ_i / neg. Both sides express the same point: Σ λ_i p_i = 0.
	sub := len(g[0].parts)
	out := radonNode{x: x, parts: make([][]int, 2*sub), coef: make([][]float64, 2*sub)}
	for i := range m {
		side, share := sub, 0.0
		if lam[i] > 0 {
			side, share = 0, lam[i]/pos
		} else if neg > 0 {
			share = -lam[i] / neg
		}
		for t := range sub {
			out.parts[side+t] = append(out.parts[side+t], g[i].parts[t]...)
			for _, v := range g[i].coef[t] {
				out.coef[side+t] = append(out.coef[side+t], share*v)
			}
		}
	}
	return out, nil
}

// radonCoefficients is a non-zero λ with Σ λ_i p_i = 0 and Σ λ_i = 0 over
// the points of g (d + 2 of them in R^d), by Gaussian elimination with full
// pivoting on the (d+1) × (d+2) system: the first free column set to 1,
// the other free ones to 0, the pivot columns solved for.
func radonCoefficients(g []radonNode, d int) ([]float64, error) {
	m := len(g)
	a := make([][]float64, d+1)
	for row := range a {
		a[row] = make([]float64, m)
		for i := range m {
			if row == d {
				a[row][i] = 1
			} else {
				a[row][i] = g[i].x[row]
			}
		}
	}
	cols := make([]int, m) // column order after the pivots' swaps
	for i := range cols {
		cols[i] = i
	}
	var scale float64
	for _, rowv := range a {
		for _, v := range rowv {
			scale = max(scale, math.Abs(v))
		}
	}
	rank := 0
	for ; rank < d+1; rank++ {
		// The largest remaining entry.
		pr, pc, best := -1, -1, 0.0
		for row := rank; row <= d; row++ {
			for k := rank; k < m; k++ {
				if v := math.Abs(a[row][cols[k]]); v > best {
					pr, pc, best = row, k, v
				}
			}
		}
		if best <= 1e-12*scale {
			break // the rest is zero: rank found
		}
		a[rank], a[pr] = a[pr], a[rank]
		cols[rank], cols[pc] = cols[pc], cols[rank]
		p := a[rank][cols[rank]]
		for row := range d + 1 {
			if row == rank || a[row][cols[rank]] == 0 {
				continue
			}
			q := a[row][cols[rank]] / p
			for k := rank; k < m; k++ {
				a[row][cols[k]] -= q * a[rank][cols[k]]
			}
		}
	}
	// rank <= d + 1 < m: column cols[rank] is free; set it to 1, the other
	// free ones to 0, and solve the pivots.
	lam := make([]float64, m)
	free := cols[rank]
	lam[free] = 1
	for row := range rank {
		lam[cols[row]] = -a[row][free] / a[row][cols[row]]
	}
	for _, v := range lam {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("radon: %w: a group's Radon coefficients are not finite", ErrNoSafePoint)
		}
	}
	return lam, nil
}

var _ Selector = (*RadonPoint)(nil)
