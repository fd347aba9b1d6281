package privacy

import (
	"crypto/aes"
	"crypto/cipher"
	crand "crypto/rand"
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/trellis-fl/trellis/internal/seed"
)

// This file is the scalar noise generator of both sources and their
// random words: Marsaglia and Tsang's ziggurat for the standard normal
// ("The Ziggurat Method for Generating Random Variables", J. Stat. Softw.
// 5(8), 2000; 128 strips, r = 3.442619855899, v = 9.91256303526217e-3),
// with the strip index taken from bits the value does not use (Doornik
// 2005, "An Improved Ziggurat Method to Generate Normal Random Samples"),
// one 64-bit word per draw: SplitMix64 (Steele, Lea and Flood 2014) when
// seeded, a keystream keyed from crypto/rand in deployment. Bulk noise
// (AddNormal, ScaleAddNormal: DP-SGD draws one normal per parameter per
// step) is the float32 ziggurat of gauss.go over the same tables.

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

// Stream is a noise source over a stream of random words. It implements
// Source, and the bulk AddNormal and ScaleAddNormal that nn's DP-SGD looks
// for (gauss.go). Not safe for concurrent use.
//
// A seeded Stream draws its scalar words (NormFloat64, ExpFloat64, Uint64,
// the bulk draws' rare slow path) from SplitMix64 and its bulk words from
// 16 xoshiro128++ lanes, both started from the seed. A crypto Stream draws
// every word from an AES-256-CTR keystream whose key and counter come from
// crypto/rand, with a fresh key every 2³⁰ bytes: the CTR_DRBG construction
// of NIST SP 800-90A (without derivation function) at a reseed interval
// far below its limit, and about 17× the throughput of reading
// crypto/rand itself (getrandom), which would bound DP-SGD's step.
type Stream struct {
	state  uint64 // SplitMix64 state (seeded)
	crypto bool
	// ctr is the keystream of a crypto Stream and left the bytes until
	// its next key; buf holds its scalar words, pos the next unread byte.
	ctr  cipher.Stream
	left int
	buf  []byte
	pos  int
	bulk bulk
}

// NewSeededSource returns a deterministic source for simulation
// (SplitMix64 started from a hash of the two words). Noise from it is not private — anyone who
// knows the seed can subtract it — so a run that uses it must be marked
// "not private" (DESIGN.md, "Randomness").
func NewSeededSource(seed1, seed2 uint64) *Stream {
	s := &Stream{state: seed.Derive(seed1, seed2)}
	s.bulk.lanes.seed(seed.Mix(s.state ^ 0x6c616e6573)) // independent of the scalar words
	return s
}

// NewCryptoSource returns a source whose every random bit comes from a
// keystream keyed from crypto/rand, for deployment; the laws are those of
// the seeded source.
// Like every floating-point sampler it leaks through the low-order bits of
// a noisy value (Mironov 2012); updates are released as float32, which
// rounds the noise to 24 bits of precision relative to the value.
func NewCryptoSource() *Stream {
	return &Stream{crypto: true, buf: make([]byte, 512), pos: 512}
}

// cryptoRekeyBytes is how much keystream one key gives.
const cryptoRekeyBytes = 1 << 30

// keystream overwrites p with the crypto Stream's next keystream bytes,
// rekeying from crypto/rand when the key's bytes are used up.
func (s *Stream) keystream(p []byte) {
	clear(p)
	for len(p) > 0 {
		if s.left == 0 {
			// crypto/rand.Read never fails since Go 1.24 (the program
			// crashes rather than hand out predictable bytes).
			var k [48]byte
			_, _ = crand.Read(k[:])
			b, err := aes.NewCipher(k[:32])
			if err != nil {
				panic(err) // a 32-byte key is always valid
			}
			s.ctr, s.left = cipher.NewCTR(b, k[32:]), cryptoRekeyBytes
			clear(k[:])
		}
		n := min(len(p), s.left)
		s.ctr.XORKeyStream(p[:n], p[:n])
		p, s.left = p[n:], s.left-n
	}
}

// fillWords draws the words of a bulk draw (len(w) a multiple of 16): the
// xoshiro lanes through kernel k when seeded, the keystream otherwise.
func (s *Stream) fillWords(k *gaussKernel, w []uint32) {
	if !s.crypto {
		k.fill(w, &s.bulk.lanes)
		return
	}
	s.keystream(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), 4*len(w)))
}

// refill draws a new buffer of scalar words.
func (s *Stream) refill() {
	s.keystream(s.buf)
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

// word is the next scalar random word: SplitMix64 when seeded, the
// keystream otherwise.
func (s *Stream) word() uint64 {
	if !s.crypto {
		return splitMix64(&s.state)
	}
	return s.cryptoWord()
}

// cryptoWord is word for a crypto Stream (kept out of word, which inlines).
func (s *Stream) cryptoWord() uint64 {
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
