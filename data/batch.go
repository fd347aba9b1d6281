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
	d     *Dataset
	order []int32
	pos   int
	rng   *rand.Rand
	tf    Transform
	row   []float32 // a coded dataset's row, decoded for tf
	// resets counts the Resets since NewBatcher's (Position, Seek).
	resets uint64
}

// NewBatcher returns a batcher over idx (copied once, 4 bytes per sample;
// idx itself is never modified). With a non-nil rng the order is reshuffled
// at the start of every epoch, including the first; with nil it is idx's
// order (for evaluation). tf, if not nil, is applied to every row as it is
// copied (the client's feature shift).
func NewBatcher(d *Dataset, idx []int32, rng *rand.Rand, tf Transform) *Batcher {
	b := &Batcher{d: d, order: append([]int32(nil), idx...), rng: rng, tf: tf}
	b.Reset()
	b.resets = 0
	return b
}

// Len is the number of samples per epoch.
func (b *Batcher) Len() int { return len(b.order) }

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
	n := min(len(y), len(b.order)-b.pos)
	for j, i := range b.order[b.pos : b.pos+n] {
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
