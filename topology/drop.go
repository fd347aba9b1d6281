package topology

import (
	"fmt"
	"math"
)

// Drops decides which messages the network loses: the message sent on link
// from → to in a round is dropped with probability P, independently across
// links, directions and rounds.
//
// The decision is a pure function of (seed, round, from, to), so it does not
// depend on the order in which a driver asks or on how many goroutines ask;
// any process holding the seed reproduces it:
//
//	h = splitmix64(seed)
//	h = splitmix64(h ^ 5)               // the drop purpose
//	h = splitmix64(h ^ uint64(round))
//	h = splitmix64(h ^ uint64(from))
//	h = splitmix64(h ^ uint64(to))
//	dropped = float64(h >> 11) * 2⁻⁵³ < P
//
// with splitmix64 the SplitMix64 finalizer. The zero value drops nothing.
type Drops struct {
	seed uint64
	p    float64
}

// NewDrops returns the drop process with probability p in [0, 1] and seed.
func NewDrops(p float64, seed uint64) (Drops, error) {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return Drops{}, fmt.Errorf("topology: NewDrops: p = %v, want 0 <= p <= 1", p)
	}
	return Drops{seed: seed, p: p}, nil
}

// P is the drop probability.
func (d Drops) P() float64 { return d.p }

// Dropped reports whether the message from → to in round is lost.
func (d Drops) Dropped(round, from, to int) bool {
	if d.p == 0 {
		return false
	}
	return linkUniform(d.seed, round, from, to) < d.p
}

// linkUniform is the uniform draw in [0, 1) of link from → to in round.
func linkUniform(seed uint64, round, from, to int) float64 {
	h := splitmix64(splitmix64(seed) ^ purposeDrop)
	h = splitmix64(h ^ uint64(round))
	h = splitmix64(h ^ uint64(from))
	h = splitmix64(h ^ uint64(to))
	return float64(h>>11) * 0x1p-53
}
