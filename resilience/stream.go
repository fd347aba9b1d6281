package resilience

import "math/rand/v2"

// Purposes of the derived streams; fixed, never reordered.
const (
	purposeHonest uint64 = 1 // the honest set of a trial
	purposeAttack uint64 = 2 // an attacker's stream in a trial
)

// splitmix64 is the SplitMix64 finalizer.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// stream returns the generator for (seed, purpose, ids...).
func stream(seed, purpose uint64, ids ...uint64) *rand.Rand {
	h := splitmix64(splitmix64(seed) ^ purpose)
	for _, id := range ids {
		h = splitmix64(h ^ id)
	}
	return rand.New(rand.NewPCG(h, splitmix64(h^0x6a09e667f3bcc909)))
}
