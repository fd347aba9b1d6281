package strategy

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/trellis-fl/trellis/vec"
)

// Helpers shared by the peer-side defenses of docs/methods/toolbox.md
// ("Peer-side defences"): every one of them shares the
// trained model, gathers the models that arrived in sender order and writes
// x_0 ← self·x_0 + Σ_j c_j x_j, reporting c_j as sender j's weight.

// shareModel sends the trained model to every out-neighbor.
func shareModel(v *View) []Outgoing {
	return []Outgoing{{To: Broadcast, Tag: TagModel, Vector: v.Model.Params()}}
}

// peerInputs is the per-strategy scratch for gathering models.
type peerInputs struct {
	xs    []Incoming // finite models, sorted by sender
	bad   []int      // senders whose model held NaN or Inf
	coef  []float64  // c_j aligned with xs
	dist  []float64  // ||x_j − x_0|| aligned with xs
	order []int      // index scratch
}

// gather collects the TagModel vectors of in with length n into p.xs,
// sorted by sender whatever the order of in, and puts the senders of
// non-finite vectors in p.bad (they get weight 0: the wire layer should
// already have dropped them; the strategies defend in depth). A sender
// appearing twice is an error, as is a vector of the wrong length.
func (p *peerInputs) gather(in []Incoming, n int) error {
	p.xs, p.bad = p.xs[:0], p.bad[:0]
	for _, m := range in {
		if m.Tag != TagModel {
			continue
		}
		if len(m.Vector) != n {
			return fmt.Errorf("vector from %d has %d values, want %d", m.From, len(m.Vector), n)
		}
		if ok, _ := vec.AllFinite(m.Vector); !ok {
			p.bad = append(p.bad, m.From)
			continue
		}
		p.xs = append(p.xs, m)
	}
	if !slices.IsSortedFunc(p.xs, byFrom) {
		slices.SortStableFunc(p.xs, byFrom)
	}
	for k := 1; k < len(p.xs); k++ {
		if p.xs[k].From == p.xs[k-1].From {
			return fmt.Errorf("two models from sender %d in one round", p.xs[k].From)
		}
	}
	slices.Sort(p.bad)
	p.coef = resize(p.coef, len(p.xs))
	clear(p.coef)
	return nil
}

func byFrom(a, b Incoming) int { return cmp.Compare(a.From, b.From) }

// distances fills p.dist with ||x_j − x_0||.
func (p *peerInputs) distances(own []float32) {
	p.dist = resize(p.dist, len(p.xs))
	for k, m := range p.xs {
		p.dist[k] = math.Sqrt(vec.SqDist(m.Vector, own))
	}
}

// apply writes (1 − Σ c_j)·x_0 + Σ c_j x_j into x_0 and returns the
// weights per sender (0 for non-finite senders).
func (p *peerInputs) apply(own []float32) map[int]float64 {
	self := 1.0
	for _, c := range p.coef {
		self -= c
	}
	if len(p.xs) > 0 {
		mix(own, self, own, p.coef, p.xs)
	}
	return p.weights()
}

// weights returns c_j per sender, and 0 for the non-finite senders.
func (p *peerInputs) weights() map[int]float64 {
	out := make(map[int]float64, len(p.xs)+len(p.bad))
	for k, m := range p.xs {
		out[m.From] = p.coef[k]
	}
	for _, j := range p.bad {
		out[j] = 0
	}
	return out
}

// sortedIndex returns 0..n-1 in p.order sorted by key ascending, ties by
// index (which is sender order), so the result is deterministic.
func (p *peerInputs) sortedIndex(n int, key func(int) float64) []int {
	p.order = p.order[:0]
	for k := range n {
		p.order = append(p.order, k)
	}
	slices.SortStableFunc(p.order, func(a, b int) int { return cmp.Compare(key(a), key(b)) })
	return p.order
}

// clipRadius returns the (f+1)-th largest of the distances together with
// the node's own distance 0 (spec: SCClip, ClippedGossip). With more than
// f neighbors it is the (f+1)-th largest neighbor distance, so at most the
// f farthest are clipped; with f or fewer neighbors it is 0: any of them
// may be faulty, so none moves the node.
func clipRadius(dist []float64, f int, scratch *[]float64) float64 {
	if f >= len(dist) {
		return 0
	}
	s := append((*scratch)[:0], dist...)
	*scratch = s
	slices.Sort(s)
	return s[len(s)-1-f]
}

// clipFactor is min(1, τ/||d||), the factor Clip(d; τ) scales d by; a zero
// difference is left as is.
func clipFactor(norm, tau float64) float64 {
	if norm <= tau || norm == 0 {
		return 1
	}
	return tau / norm
}

// centeredGram fills g (n×n, row-major) with (x_a − s)·(x_b − s) for the
// vectors xs; s may be nil (no centering). Accumulation is float64 in
// coordinate order.
func centeredGram(g []float64, xs [][]float32, s []float32) {
	n := len(xs)
	for a := range n {
		for b := a; b < n; b++ {
			d := centeredDot(xs[a], xs[b], s)
			g[a*n+b], g[b*n+a] = d, d
		}
	}
}

// cosineFromGram returns the cosine of vectors a and b given their Gram
// entries; 0 when either has zero norm.
func cosineFromGram(g []float64, n, a, b int) float64 {
	na, nb := g[a*n+a], g[b*n+b]
	if na <= 0 || nb <= 0 {
		return 0
	}
	c := g[a*n+b] / math.Sqrt(na*nb)
	return max(-1, min(1, c))
}

// reference returns the point cosines are measured from: the node's
// start-of-round parameters when present (so that the cosine compares
// updates, as in the papers these rules come from), nil otherwise.
func reference(v *View, n int) []float32 {
	if len(v.Start) == n {
		return v.Start
	}
	return nil
}

// withOwn returns, in *buf, the node's own model and the gathered models in
// sender-id order, and the index of the own model.
func withOwn(buf *[][]float32, ids *[]int, id int, own []float32, xs []Incoming) (int, [][]float32, []int) {
	b, from := (*buf)[:0], (*ids)[:0]
	self := -1
	for _, m := range xs {
		if self < 0 && m.From > id {
			self = len(b)
			b, from = append(b, own), append(from, id)
		}
		b, from = append(b, m.Vector), append(from, m.From)
	}
	if self < 0 {
		self = len(b)
		b, from = append(b, own), append(from, id)
	}
	*buf, *ids = b, from
	return self, b, from
}

// resize returns s with length n, reallocating only when it is too short.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// cosineSet is the scratch for rules on pairwise cosine distances of the
// node's own model and the arrived ones (ASMR, CFL).
type cosineSet struct {
	p    peerInputs
	xs   [][]float32
	ids  []int
	gram []float64
	dist []float64 // n×n, 1 − cos
	keep []bool
}

// load gathers the inputs (own model at its id's position) and fills the
// n×n cosine distances 1 − cos(x_a − r, x_b − r), r = View.Start when
// present. It returns the own index and n.
func (c *cosineSet) load(v *View, in []Incoming) (self, n int, err error) {
	w := v.Model.Params()
	if err := c.p.gather(in, len(w)); err != nil {
		return 0, 0, err
	}
	self, xs, _ := withOwn(&c.xs, &c.ids, v.ID, w, c.p.xs)
	n = len(xs)
	c.gram = resize(c.gram, n*n)
	c.dist = resize(c.dist, n*n)
	centeredGram(c.gram, xs, reference(v, len(w)))
	for a := range n {
		for b := range n {
			c.dist[a*n+b] = 1 - cosineFromGram(c.gram, n, a, b)
		}
		c.dist[a*n+a] = 0
	}
	c.keep = resize(c.keep, n)
	return self, n, nil
}

// averageKept sets x_0 to the plain mean of the kept inputs and returns
// 1/|kept| per kept sender, 0 for the others and for non-finite senders.
func (c *cosineSet) averageKept(v *View, self int) map[int]float64 {
	kept := 0
	for _, k := range c.keep {
		if k {
			kept++
		}
	}
	share := 1 / float64(kept)
	selfCoef := 0.0
	if c.keep[self] {
		selfCoef = share
	}
	j := 0
	for k := range c.keep {
		if k == self {
			continue
		}
		c.p.coef[j] = 0
		if c.keep[k] {
			c.p.coef[j] = share
		}
		j++
	}
	w := v.Model.Params()
	if len(c.p.xs) > 0 {
		mix(w, selfCoef, w, c.p.coef, c.p.xs)
	}
	return c.p.weights()
}
