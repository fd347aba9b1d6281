package data

import "math/rand/v2"

// Every random choice in this package comes from a caller-given seed. A seed
// is expanded into independent streams, one per (purpose, index) — e.g. the
// Dirichlet draw, or client 17's split — by hashing the tuple with SplitMix64
// and seeding a PCG (DESIGN.md, "Determinism"). There is no global RNG.

// Purposes of the derived streams; changing one changes every partition.
const (
	purposeIID uint64 = iota + 1
	purposeDirichlet
	purposeShards
	purposeNatural
	purposeSplit
	purposeHoldOut
	purposePermutation
	purposeSynthetic
	purposeSampled
	purposeEvalOrder
	purposeEvalWindow
)

// splitmix64 is the SplitMix64 finalizer (Steele, Lea, Flood 2014).
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// stream returns the generator for (seed, purpose, index).
func stream(seed, purpose, index uint64) *rand.Rand {
	h := splitmix64(splitmix64(splitmix64(seed)^purpose) ^ index)
	return rand.New(rand.NewPCG(h, splitmix64(h^0x6a09e667f3bcc909)))
}

// shuffle32 is a Fisher–Yates shuffle of an index list.
func shuffle32(r *rand.Rand, s []int32) {
	for i := len(s) - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		s[i], s[j] = s[j], s[i]
	}
}
