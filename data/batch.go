package data

import (
	"fmt"
	"math/rand/v2"
)

// Batcher walks an index list in mini-batches, copying rows into buffers the
// caller owns, so the training loop allocates nothing per batch (DESIGN.md,
// "Performance rules"). It is not safe for concurrent use; give each node its
// own.
//
//	b := data.NewBatcher(ds, split.Train, rng, shift)
//	x, y := make([]float32, 32*ds.RowLen()), make([]int, 32)
//	for epoch := 0; epoch < E; epoch++ {
//		for n := b.Next(x, y); n > 0; n = b.Next(x, y) {
//			train(x[:n*ds.RowLen()], y[:n])
//		}
//		b.Reset()
//	}
type Batcher struct {
	d *Dataset
	// order is the sample list the epochs walk; nil is the identity over
	// [0, span), which needs no list. A batcher without an rng only reads
	// it, so evaluation batchers share one list (NewEvalBatcher).
	order []int32
	span  int
	// n is the samples of an epoch (≤ span) and off the position in order
	// where an epoch starts, wrapping around (a Rotating window).
	n, off int
	pos    int
	rng    *rand.Rand
	tf     Transform
	row    []float32 // a coded dataset's row, decoded for tf
	// resets counts the Resets since NewBatcher's (Position, Seek).
	resets uint64
}

// NewBatcher returns a batcher over idx (copied once, 4 bytes per sample;
// idx itself is never modified). With a non-nil rng the order is reshuffled
// at the start of every epoch, including the first; with nil it is idx's
// order (for evaluation, where NewEvalBatcher spares the copy). tf, if not
// nil, is applied to every row as it is copied (the client's feature
// shift).
func NewBatcher(d *Dataset, idx []int32, rng *rand.Rand, tf Transform) *Batcher {
	return newBatcher(d, append([]int32(nil), idx...), len(idx), rng, tf)
}

// NewEvalBatcher returns a batcher over idx in idx's order, like
// NewBatcher without an rng, but sharing idx instead of copying it: the
// nodes of a simulation evaluate on one read-only list of the global test
// set, not on a copy each. The caller must not change idx while the
// batcher is in use.
func NewEvalBatcher(d *Dataset, idx []int32, tf Transform) *Batcher {
	return newBatcher(d, idx, len(idx), nil, tf)
}

// NewPrefixBatcher returns a batcher over the first n samples of d in
// their order (all of them when n is larger): what NewEvalBatcher of
// d.All()[:n] does, without an index list.
func NewPrefixBatcher(d *Dataset, n int, tf Transform) *Batcher {
	return newBatcher(d, nil, max(0, min(n, d.Len())), nil, tf)
}

func newBatcher(d *Dataset, order []int32, span int, rng *rand.Rand, tf Transform) *Batcher {
	b := &Batcher{d: d, order: order, span: span, n: span, rng: rng, tf: tf}
	b.Reset()
	b.resets = 0
	return b
}

// Len is the number of samples per epoch.
func (b *Batcher) Len() int { return b.n }

// Reset starts a new epoch, reshuffling when the batcher has an rng.
func (b *Batcher) Reset() {
	b.pos = 0
	b.resets++
	if b.rng != nil {
		shuffle32(b.rng, b.order)
	}
}

// Next fills x (len(y) rows of RowLen values, at least) and y with the next
// min(len(y), remaining) samples of the epoch and returns how many it
// filled; 0 means the epoch is over. The last batch of an epoch may be short.
func (b *Batcher) Next(x []float32, y []int) int {
	l := b.d.RowLen()
	if len(x) < len(y)*l {
		panic(fmt.Sprintf("data: Batcher.Next: x holds %d values, need %d for %d rows", len(x), len(y)*l, len(y)))
	}
	n := min(len(y), b.n-b.pos)
	for j := range n {
		i := b.sample(b.pos + j)
		dst := x[j*l : (j+1)*l]
		switch {
		case b.tf == nil:
			b.d.CopyRow(dst, int(i))
		case b.d.Levels != nil: // coded: decoded into a row of its own first
			if len(b.row) != l {
				b.row = make([]float32, l)
			}
			b.d.CopyRow(b.row, int(i))
			b.tf.Apply(dst, b.row)
		default:
			b.tf.Apply(dst, b.d.Row(int(i)))
		}
		y[j] = b.d.Y[i]
	}
	b.pos += n
	if b.d.stream != nil {
		b.d.stream.copied(n * l * 4)
	}
	return n
}

// sample is the dataset index of the k-th sample of the epoch.
func (b *Batcher) sample(k int) int32 {
	k += b.off
	if k >= b.span {
		k -= b.span
	}
	if b.order == nil {
		return int32(k)
	}
	return b.order[k]
}
