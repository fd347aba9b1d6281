package data

import "fmt"

// Position is where the batcher is: how many epochs it started since
// NewBatcher (Resets after the first) and the samples taken of the current
// one. With Seek it lets a checkpoint restore a node's data order.
func (b *Batcher) Position() (resets uint64, pos int) { return b.resets, b.pos }

// Seek puts a batcher built as the original was (NewBatcher with the same
// rng) at a Position of the original: it replays the reshuffles still to
// come, so the order is the original's bit for bit. A batcher already past
// that epoch, or a position beyond the epoch, is an error.
func (b *Batcher) Seek(resets uint64, pos int) error {
	if b.resets > resets {
		return fmt.Errorf("data: Seek to epoch %d of a batcher at epoch %d", resets, b.resets)
	}
	if pos < 0 || pos > b.n {
		return fmt.Errorf("data: Seek to sample %d of an epoch of %d", pos, b.n)
	}
	if resets > 1<<32 {
		return fmt.Errorf("data: Seek to %d epochs", resets)
	}
	for b.resets < resets {
		b.Reset()
	}
	b.pos = pos
	return nil
}
