package privacy

import (
	crand "crypto/rand"
	"encoding/binary"
	"math"

	"github.com/trellis-fl/trellis/internal/seed"
)

// This file is the noise generator behind both sources: Marsaglia and
// Tsang's ziggurat for the standard normal ("The Ziggurat Method for
// Generating Random Variables", J. Stat. Softw. 5(8), 2000; 128 strips,
// r = 3.442619855899, v = 9.91256303526217e-3), with the strip index
// taken from bits the value does not use (Doornik 2005, "An Improved
// Ziggurat Method to Generate Normal Random Samples"), over a buffer of
// 64-bit words: SplitMix64 (Steele, Lea and Flood 2014) when seeded, whose
// state advances by one addition so that draws pipeline, or crypto/rand
// (deployment).
// Bulk noise (AddNormal) runs the ziggurat's fast path inline over the
// buffer: DP-SGD draws one normal per parameter per step, which dominated
// its step time through a per-draw interface call.

const (
	zigR = 3.442619855899
	zigV = 9.91256303526217e-3
)

// zig holds the ziggurat tables (immutable, computed once): kn[i] the
// acceptance bound of strip i on |j| (32-bit), wn[i] the scale from j to x,
// fn[i] = exp(−x_i²/2).
var zig = func() (t struct {
	kn [128]uint32
	wn [128]float64
	fn [128]float64
}) {
	const m1 = 1 << 31
	dn, tn := zigR, zigR
	q := zigV / math.Exp(-0.5*dn*dn)
	t.kn[0] = uint32(dn / q * m1)
	t.kn[1] = 0
	t.wn[0] = q / m1
	t.wn[127] = dn / m1
	t.fn[0] = 1
	t.fn[127] = math.Exp(-0.5 * dn * dn)
	for i := 126; i >= 1; i-- {
		dn = math.Sqrt(-2 * math.Log(zigV/dn+math.Exp(-0.5*dn*dn)))
		t.kn[i+1] = uint32(dn / tn * m1)
		tn = dn
		t.fn[i] = math.Exp(-0.5 * dn * dn)
		t.wn[i] = dn / m1
	}
	return t
}()

// Stream is a noise source over a buffer of random words. It implements
// Source and the bulk AddNormal that nn's DP-SGD looks for. Not safe for
// concurrent use.
type Stream struct {
	state  uint64 // SplitMix64 state (seeded)
	crypto bool
	// buf holds crypto/rand bytes, read 64 KiB at a time (one getrandom
	// call per 8192 words); pos is the next unread byte.
	buf []byte
	pos int
}

// NewSeededSource returns a deterministic source for simulation
// (SplitMix64 started from a hash of the two words). Noise from it is not private — anyone who
// knows the seed can subtract it — so a run that uses it must be marked
// "not private" (DESIGN.md, "Randomness").
func NewSeededSource(seed1, seed2 uint64) *Stream {
	return &Stream{state: seed.Derive(seed1, seed2)}
}

// NewCryptoSource returns a source whose every random bit comes from
// crypto/rand, for deployment; the laws are those of the seeded source.
// Like every floating-point sampler it leaks through the low-order bits of
// a noisy value (Mironov 2012); updates are released as float32, which
// rounds the noise to 24 bits of precision relative to the value.
func NewCryptoSource() *Stream {
	return &Stream{crypto: true, buf: make([]byte, 64<<10), pos: 64 << 10}
}

// refill draws a new buffer of crypto/rand words. crypto/rand.Read never
// fails since Go 1.24 (the program crashes rather than hand out
// predictable bytes).
func (s *Stream) refill() {
	_, _ = crand.Read(s.buf)
	s.pos = 0
}

// splitMix64 advances a SplitMix64 state and returns its next output.
func splitMix64(st *uint64) uint64 {
	*st += 0x9e3779b97f4a7c15
	z := *st
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// word is the next random word: SplitMix64 when seeded, the crypto/rand
// buffer otherwise.
func (s *Stream) word() uint64 {
	if !s.crypto {
		return splitMix64(&s.state)
	}
	if s.pos == len(s.buf) {
		s.refill()
	}
	w := binary.LittleEndian.Uint64(s.buf[s.pos:])
	s.pos += 8
	return w
}

// Private reports whether the stream's noise is secret: true for
// NewCryptoSource, false for a seeded stream (a run using one is marked
// "not private" in its manifest).
func (s *Stream) Private() bool { return s.crypto }

// Uint64 is a uniformly random 64-bit word (so a Stream can also drive a
// math/rand/v2 Rand).
func (s *Stream) Uint64() uint64 { return s.word() }

// uniform is in (0, 1): 53 random bits, offset by half a unit.
func (s *Stream) uniform() float64 {
	return (float64(s.word()>>11) + 0.5) * (1.0 / (1 << 53))
}

// ExpFloat64 implements Source: a standard exponential by inversion,
// −log U.
func (s *Stream) ExpFloat64() float64 { return -math.Log(s.uniform()) }

// NormFloat64 implements Source.
func (s *Stream) NormFloat64() float64 {
	w := s.word()
	j, i := int32(w), (w>>32)&127
	if abs32(j) < zig.kn[i] {
		return float64(j) * zig.wn[i]
	}
	return s.slowNormal(j, i)
}

// AddNormal adds sd·N(0, 1) to every element of dst. The ziggurat's fast
// path (≈ 98.8 % of draws) runs inline here.
func (s *Stream) AddNormal(dst []float32, sd float32) {
	if !s.crypto {
		st := s.state // in a register for the loop
		for k := range dst {
			w := splitMix64(&st)
			j, i := int32(w), (w>>32)&127
			x := float64(j) * zig.wn[i]
			if abs32(j) >= zig.kn[i] {
				s.state = st
				x = s.slowNormal(j, i)
				st = s.state
			}
			dst[k] += sd * float32(x)
		}
		s.state = st
		return
	}
	for k := range dst {
		w := s.word()
		j, i := int32(w), (w>>32)&127
		x := float64(j) * zig.wn[i]
		if abs32(j) >= zig.kn[i] {
			x = s.slowNormal(j, i)
		}
		dst[k] += sd * float32(x)
	}
}

// slowNormal is the ziggurat's rejection path (Marsaglia and Tsang 2000,
// nfix): the base strip's tail by Marsaglia's 1964 method, the wedges by
// comparing a uniform height with the density.
func (s *Stream) slowNormal(j int32, i uint64) float64 {
	for {
		x := float64(j) * zig.wn[i]
		if i == 0 {
			for {
				x = -math.Log(s.uniform()) / zigR
				y := -math.Log(s.uniform())
				if y+y >= x*x {
					break
				}
			}
			if j > 0 {
				return zigR + x
			}
			return -zigR - x
		}
		if zig.fn[i]+s.uniform()*(zig.fn[i-1]-zig.fn[i]) < math.Exp(-0.5*x*x) {
			return x
		}
		w := s.word()
		j, i = int32(w), (w>>32)&127
		if abs32(j) < zig.kn[i] {
			return float64(j) * zig.wn[i]
		}
	}
}

// abs32 is |j| without a branch (the sign is a coin flip, which a branch
// would mispredict half the time); |MinInt32| = 2³¹ fits.
func abs32(j int32) uint32 {
	m := j >> 31
	return uint32(j^m) - uint32(m)
}
