package privacy

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
)

// Source draws the noise a mechanism adds. *rand.Rand from math/rand/v2
// satisfies it, so a simulation passes a seeded stream (internal/seed);
// deployment passes NewCryptoSource. Gaussian noise is NormFloat64;
// Laplace noise is the difference of two ExpFloat64 draws.
type Source interface {
	// NormFloat64 is a standard normal draw, N(0, 1).
	NormFloat64() float64
	// ExpFloat64 is a standard exponential draw (rate 1).
	ExpFloat64() float64
}

// NewSeededSource returns a deterministic source for simulation. Noise from
// it is not private (anyone who knows the seed can subtract it): a run
// that uses it must be marked "not private" (DESIGN.md, "Randomness").
func NewSeededSource(seed1, seed2 uint64) Source {
	return rand.New(rand.NewPCG(seed1, seed2))
}

// NewCryptoSource returns a source whose every random bit comes from
// crypto/rand, for deployment. The normal and exponential draws are
// math/rand/v2's ziggurat samplers (Marsaglia and Tsang 2000) run over
// crypto/rand's 64-bit words: the ziggurat maps exactly uniform words to
// the exact law up to float64 rounding, so the distribution is that of the
// seeded source and only the unpredictability differs. Bytes are read 512 at
// a time. It is not safe for concurrent use: give each node its own.
//
// Like every floating-point sampler it leaks through the low-order bits of
// the noisy value (Mironov 2012); node updates are float32, which rounds
// those bits away before release.
func NewCryptoSource() Source {
	return rand.New(&cryptoWords{})
}

// cryptoWords is a rand.Source of crypto/rand words, buffered.
type cryptoWords struct {
	buf [512]byte
	pos int
	ok  bool
}

// Uint64 implements rand.Source. crypto/rand.Read never returns an error
// since Go 1.24 (the runtime crashes the program if the kernel's generator
// fails, rather than hand out predictable bytes).
func (c *cryptoWords) Uint64() uint64 {
	if !c.ok || c.pos+8 > len(c.buf) {
		_, _ = crand.Read(c.buf[:])
		c.pos, c.ok = 0, true
	}
	v := binary.LittleEndian.Uint64(c.buf[c.pos:])
	c.pos += 8
	return v
}
