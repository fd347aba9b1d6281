package seed

import (
	"crypto/rand"
	"encoding/binary"
	mrand "math/rand/v2"
	"slices"
)

// Source hands out random streams by purpose (DESIGN.md, "Randomness"):
// derived from the experiment seed in simulation, so a run repeats bit for
// bit, or drawn from crypto/rand in deployment, where DP noise, masks and
// keys must be unpredictable. A node takes one Source; Mixed chooses per
// purpose.
type Source interface {
	// Stream returns the stream for (purpose, ids…).
	Stream(purpose uint64, ids ...uint64) *mrand.Rand
	// Seeded reports whether the stream for purpose is reproducible from
	// the experiment seed (and so not private).
	Seeded(purpose uint64) bool
}

// Seeded is the Source of simulation: every stream derives from the seed.
type Seeded uint64

// Stream implements Source with Stream(uint64(s), purpose, ids…).
func (s Seeded) Stream(purpose uint64, ids ...uint64) *mrand.Rand {
	return Stream(uint64(s), purpose, ids...)
}

// Seeded implements Source: always.
func (Seeded) Seeded(uint64) bool { return true }

// Crypto is the Source of deployment: every stream reads crypto/rand, so
// nothing about it can be predicted from the config or the seed.
type Crypto struct{}

// Stream implements Source; purpose and ids are ignored.
func (Crypto) Stream(uint64, ...uint64) *mrand.Rand { return mrand.New(cryptoSource{}) }

// Seeded implements Source: never.
func (Crypto) Seeded(uint64) bool { return false }

// cryptoSource is a math/rand/v2 Source over crypto/rand.
type cryptoSource struct{}

func (cryptoSource) Uint64() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return binary.LittleEndian.Uint64(b[:])
}

// Mixed takes the purposes in Crypto from crypto/rand and every other
// purpose from the seed: a deployment that keeps training order
// reproducible while its privacy randomness is not.
type Mixed struct {
	Seed   uint64
	Crypto []uint64
}

// Stream implements Source.
func (m Mixed) Stream(purpose uint64, ids ...uint64) *mrand.Rand {
	if slices.Contains(m.Crypto, purpose) {
		return Crypto{}.Stream(purpose, ids...)
	}
	return Stream(m.Seed, purpose, ids...)
}

// Seeded implements Source.
func (m Mixed) Seeded(purpose uint64) bool { return !slices.Contains(m.Crypto, purpose) }

// Private lists the purposes whose randomness protects privacy: a run
// whose Source seeds any of them must be marked "not private".
var Private = []uint64{Noise, Mask, Identity}

// Describe names how src draws the private purposes: "seeded" (all from
// the seed: simulation, not private), "crypto" (all from crypto/rand) or
// "mixed".
func Describe(src Source) string {
	seeded := 0
	for _, p := range Private {
		if src.Seeded(p) {
			seeded++
		}
	}
	switch seeded {
	case len(Private):
		return "seeded"
	case 0:
		return "crypto"
	}
	return "mixed"
}
