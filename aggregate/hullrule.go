package aggregate

import (
	"fmt"
	"math"
	"slices"
)

// hullRule is what the rules built on the safe area's linear programs
// (SafeArea, CenterpointLP, TverbergPoint) share: the float32 entry
// (Aggregate, which screens non-finite inputs and rounds the point) and
// the float64 one (Point, which refuses them), the lexicographic order
// that makes the point a function of the multiset of inputs, and the
// weights mapped back to the caller's order.
type hullRule struct {
	s   screen
	w   []float64
	pts [][]float64
	x   []float64
	// ord is the caller's index of each sorted input, of the last call.
	ord []int
}

// hullSolver checks n and d against a rule's condition and limits, and
// solves for inputs in lexicographic order: it writes the point into dst
// and returns each input's weight.
type hullSolver interface {
	check(n, d int) error
	solve(dst []float64, sorted [][]float64) ([]float64, error)
}

func (h *hullRule) aggregate(name string, r hullSolver, dst []float32, xs [][]float32) error {
	xs, d, err := h.s.in(name, dst, xs, 1)
	if err != nil {
		return err
	}
	if err := r.check(len(xs), d); err != nil {
		h.s.fail()
		return err
	}
	h.pts = h.pts[:0]
	for _, x := range xs {
		p := make([]float64, d)
		for k, v := range x {
			p[k] = float64(v)
		}
		h.pts = append(h.pts, p)
	}
	h.x = growFloats(h.x, d)
	if err := h.sorted(r, h.x, h.pts); err != nil {
		h.s.fail()
		return err
	}
	for k, v := range h.x {
		dst[k] = float32(v)
	}
	h.s.done()
	return nil
}

func (h *hullRule) point(name string, r hullSolver, dst []float64, pts [][]float64) error {
	h.s.n, h.s.dropped, h.s.idx = 0, 0, nil
	if len(pts) == 0 {
		return fmt.Errorf("%s: %w", name, ErrNoInputs)
	}
	d := len(dst)
	for i, p := range pts {
		if len(p) != d {
			return fmt.Errorf("%s: %w: input %d has length %d, dst has length %d", name, ErrLength, i, len(p), d)
		}
		for _, v := range p {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: %w: input %d", name, ErrNonFinite, i)
			}
		}
	}
	if err := r.check(len(pts), d); err != nil {
		return err
	}
	if err := h.sorted(r, dst, pts); err != nil {
		return err
	}
	h.s.bad = growBools(h.s.bad, len(pts))
	clear(h.s.bad)
	h.s.done()
	return nil
}

// sorted puts pts in lexicographic order (ties keep the index order, and
// tied inputs are equal), solves, and maps the weights back.
func (h *hullRule) sorted(r hullSolver, dst []float64, pts [][]float64) error {
	n := len(pts)
	h.ord = growInts(h.ord, n)
	ord := h.ord
	for i := range ord {
		ord[i] = i
	}
	slices.SortStableFunc(ord, func(i, j int) int { return slices.Compare(pts[i], pts[j]) })
	sorted := make([][]float64, n)
	for k, i := range ord {
		sorted[k] = pts[i]
	}
	w, err := r.solve(dst, sorted)
	if err != nil {
		return err
	}
	h.w = growFloats(h.w, n)
	for k, i := range ord {
		h.w[i] = w[k]
	}
	return nil
}

// partition maps parts (indices into the sorted inputs of the last call)
// to the caller's indices, each part sorted; nil after a failure.
func (h *hullRule) partition(parts [][]int) [][]int {
	if h.s.n == 0 {
		return nil
	}
	out := make([][]int, len(parts))
	for i, p := range parts {
		for _, j := range p {
			out[i] = append(out[i], h.ord[j])
		}
		slices.Sort(out[i])
	}
	return out
}

func (h *hullRule) weights() []float64 {
	if h.s.n == 0 {
		return nil
	}
	return h.s.expand(slices.Clone(h.w[:len(h.s.bad)-h.s.dropped]))
}

// checkLowDim refuses d above SafeAreaMaxDim and a negative f, as
// SafeArea does.
func checkLowDim(name string, f, d int) error {
	switch {
	case f < 0:
		return fmt.Errorf("%s: f = %d, allowed range [0, ∞)", name, f)
	case d > SafeAreaMaxDim:
		return fmt.Errorf("%s: %w: inputs have d = %d coordinates, the point is computed for d <= %d (linear programs with d + 1 rows per hull: a rule for low-dimensional vector consensus, not for models)", name, ErrSafeAreaSize, d, SafeAreaMaxDim)
	}
	return nil
}
