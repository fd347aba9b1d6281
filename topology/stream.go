package topology

import "math/rand/v2"

// Every random choice in this package comes from a caller-given seed, expanded
// into independent streams by hashing (seed, purpose, index) with SplitMix64
// and seeding a PCG from math/rand/v2 (DESIGN.md, "Determinism"). There is no
// global RNG. The derivation is part of the package's contract: a process in
// another language can rebuild the same graphs from the seed (see stream).

// Purposes of the derived streams; changing one changes every graph of that
// kind, so they are fixed constants, never reordered.
const (
	purposeKRegular   uint64 = 1
	purposeErdosRenyi uint64 = 2
	purposeSmallWorld uint64 = 3
	purposeMobility   uint64 = 4
	purposeDrop       uint64 = 5
)

// splitmix64 is the SplitMix64 finalizer (Steele, Lea, Flood 2014): the state
// increment 0x9e3779b97f4a7c15 followed by the variant-13 mix.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// pcgFor returns the PCG state for (seed, purpose, index):
//
//	h = splitmix64(splitmix64(splitmix64(seed) ^ purpose) ^ index)
//	PCG = rand.NewPCG(h, splitmix64(h ^ 0x6a09e667f3bcc909))
func pcgFor(seed, purpose, index uint64) rand.PCG {
	h := splitmix64(splitmix64(splitmix64(seed)^purpose) ^ index)
	return *rand.NewPCG(h, splitmix64(h^0x6a09e667f3bcc909))
}

// stream returns the generator for (seed, purpose, index).
func stream(seed, purpose, index uint64) *rand.Rand {
	p := pcgFor(seed, purpose, index)
	return rand.New(&p)
}
