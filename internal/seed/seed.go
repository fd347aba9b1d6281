// Package seed derives every random stream of an experiment from its one
// seed: a stream is named by a purpose and a tuple of ids (node, round, …)
// and seeded by SplitMix64 over them, so streams are independent of each
// other and of the order in which they are created (DESIGN.md,
// "Determinism").
package seed

import "math/rand/v2"

// Purposes name what a stream is for; each gives independent streams.
const (
	Init      uint64 = 1 // model initialization
	Train     uint64 = 2 // shuffling and dropout of local training
	Strategy  uint64 = 3 // a strategy's own randomness
	Attack    uint64 = 4 // what a Byzantine node crafts
	Byzantine uint64 = 5 // who is Byzantine
	Drop      uint64 = 6 // message drops
	Identity  uint64 = 7 // node keys
	Noise     uint64 = 8 // differential-privacy noise
	Mask      uint64 = 9 // secure-aggregation masks and key agreement
)

// Mix is SplitMix64's finalizer: a bijective hash with full avalanche.
func Mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Derive hashes the seed, the purpose and the ids into one 64-bit value.
func Derive(seed, purpose uint64, ids ...uint64) uint64 {
	h := Mix(seed ^ Mix(purpose))
	for _, id := range ids {
		h = Mix(h ^ Mix(id+0x51ed2701))
	}
	return h
}

// Stream returns a PCG generator for (seed, purpose, ids…).
func Stream(seed, purpose uint64, ids ...uint64) *rand.Rand {
	h := Derive(seed, purpose, ids...)
	return rand.New(rand.NewPCG(h, Mix(h)))
}
