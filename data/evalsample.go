package data

import "fmt"

// Rotating is an evaluation source that, each round, yields another
// deterministic sample of a test set: a window of n consecutive entries of
// one shuffled order of the set (EvalOrder, shared read-only by every
// node), starting at an offset drawn from (seed, node, round) and wrapping
// around its end. Within a round the window is fixed, so evaluating twice
// (a diverged model's second measurement) sees the same samples; over the
// rounds a node sees most of the set, and in one round the nodes see
// different parts of it. A window of a uniformly shuffled order is a
// uniform sample of n distinct samples for each node and round.
//
// Round must be called before the round's evaluation (the experiment's
// nodes do it when a round begins); until then the window is round 0's.
type Rotating struct {
	b    *Batcher
	seed uint64
	node int
}

// NewRotating returns node's rotating sample of n of the samples order
// lists (all of them when n ≥ len(order)); order is shared, never
// modified, and must not change while the source is in use.
func NewRotating(d *Dataset, order []int32, n int, seed uint64, node int) (*Rotating, error) {
	if n < 1 {
		return nil, fmt.Errorf("data: a rotating sample of %d samples; need at least 1", n)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("data: a rotating sample of an empty test set")
	}
	b := newBatcher(d, order, len(order), nil, nil)
	b.n = min(n, len(order))
	r := &Rotating{b: b, seed: seed, node: node}
	r.Round(0)
	return r, nil
}

// Round selects round's window and starts a pass over it.
func (r *Rotating) Round(round int) {
	r.b.off = WindowOffset(r.seed, r.node, round, r.b.span)
	r.b.Reset()
}

// Len is the window's size.
func (r *Rotating) Len() int { return r.b.Len() }

// Reset starts a new pass over the round's window.
func (r *Rotating) Reset() { r.b.Reset() }

// Next fills x and y with the window's next samples (Batcher.Next).
func (r *Rotating) Next(x []float32, y []int) int { return r.b.Next(x, y) }

// Samples lists the dataset indices of the round's window, in order.
func (r *Rotating) Samples() []int32 {
	out := make([]int32, r.b.n)
	for k := range out {
		out[k] = r.b.sample(k)
	}
	return out
}

// WindowOffset is where node's window starts in round: uniform in
// [0, span), from the stream of (seed, node, round).
func WindowOffset(seed uint64, node, round, span int) int {
	if span <= 1 {
		return 0
	}
	return stream(seed, purposeEvalWindow, splitmix64(uint64(node))^uint64(round)).IntN(span)
}

// EvalOrder is the shuffled order of a test set of n samples that the
// rotating samples of every node are windows of, from seed.
func EvalOrder(n int, seed uint64) []int32 {
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	shuffle32(stream(seed, purposeEvalOrder, 0), order)
	return order
}
