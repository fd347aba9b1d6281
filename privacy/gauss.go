package privacy

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync/atomic"
)

// This file is the bulk Gaussian generator behind Stream.AddNormal and
// ScaleAddNormal: DP-SGD draws one normal per parameter per step, and at a
// small batch the draw is most of what DP-SGD adds to a step. It is
// Marsaglia and Tsang's ziggurat in float32 with 256 strips
// (r = 3.6541528853610088), one 32-bit random word per normal, with the
// bit budget of NumPy's float32 ziggurat (random_standard_normal_f: 8 bits
// of strip, a sign, 23 bits of magnitude):
//
//	bit 31       sign
//	bits 8..30   magnitude m, 23 bits
//	bits 0..7    strip i
//
// x = m·w_i (w_i = x_i/2²³ in float32, x_i the strip's right edge) is
// accepted at once when m < k_i = ⌊x_{i−1}/x_i·2²³⌋ (the point lies in
// the part of strip i under the density); the ≈ 1.5 % of words that fall
// in a wedge or in the base strip's tail finish on the scalar path
// (slow32: float64 arithmetic, its uniforms from the Stream's scalar
// words). The law is the ziggurat's, up to float32 rounding: each strip's
// width is rounded to float32 (a relative 6·10⁻⁸), and its points lie on a
// grid of 2²³ magnitudes (spacing x_i·2⁻²³ ≤ 4.4·10⁻⁷ standard deviations),
// before the draw is rounded to the float32 it is released as. (The
// 128-strip float64 ziggurat of NormFloat64, ziggurat.go, has 31 bits of
// magnitude; 256 strips halve the slow path's share, which costs more than
// the fast path here.)
//
// The 32-bit words come from 16 interleaved xoshiro128++ generators
// (Blackman and Vigna 2021, "Scrambled linear pseudorandom number
// generators"; lane l's state in column l of [4][16]uint32) for a seeded
// Stream, and from an AES-256-CTR keystream keyed from crypto/rand for a
// crypto Stream (ziggurat.go). Two kernels do the work over a chunk of
// words: fill (one xoshiro128++ step of all 16 lanes per 16 words) and zig
// (the ziggurat's fast path: dst[k] = dst[k]·scale + sd·x_k, or only
// dst[k]·scale where the word is rejected, and the list of the rejected
// elements, which the scalar path then finishes in order). Both have a portable Go version (the
// reference: gaussFillGo, gaussZigGo) and AVX2 and AVX-512 versions on
// amd64 (gauss_amd64.s), bit-identical to it (tests): the float32
// operations are the same IEEE products and sums in the same order, with
// no fused multiply-add. So the noise a seed gives does not depend on the
// machine or on the kernel, and UseNoiseKernel can force a slower one for
// measurement.
//
// What a call consumes: the word of element k of a call is word k of the
// call's stream of words, and a call draws its length rounded up to a
// multiple of 16 (the lanes step together); the slow path of a rejected
// element draws from the scalar stream, in element order.

const (
	// gaussChunk is the words a Stream draws at a time (a multiple of 16;
	// 8 KiB of words, in L1 with the chunk of dst they fill).
	gaussChunk = 2048
	// gaussR is the base strip's edge for 256 strips (NumPy's
	// ziggurat_nor_r).
	gaussR = 3.6541528853610088
	// magBits and magMask: the magnitude's bits, after the shift by 8.
	magBits = 23
	magMask = 1<<magBits - 1
)

// zigTab32 is the float32 ziggurat: k[i] the acceptance bound on m and
// w[i] the scale from m to x (strip widths x_i/2²³; the base strip's
// q/2²³, q = v/f(r)). The assembly kernels read it: k at offset 0, w at
// 1024.
type zigTab32 struct {
	k [256]uint32
	w [256]float32
}

// gaussX are the strips' right edges in float64: gaussX[255] = r,
// decreasing to gaussX[1] ≈ 0.2154 (strip i spans [0, x_i] ×
// [f(x_i), f(x_{i−1})], f(x) = exp(−x²/2), area v), gaussX[0] = 0 the top
// of the density; gaussV is v.
var gaussX, gaussV = func() (x [256]float64, v float64) {
	v = gaussR*math.Exp(-0.5*gaussR*gaussR) + math.Sqrt(math.Pi/2)*math.Erfc(gaussR/math.Sqrt2)
	x[255] = gaussR
	for i := 254; i >= 1; i-- {
		x[i] = math.Sqrt(-2 * math.Log(v/x[i+1]+math.Exp(-0.5*x[i+1]*x[i+1])))
	}
	return x, v
}()

var zig32 = func() (t zigTab32) {
	const scale = 1 << magBits
	q := gaussV / math.Exp(-0.5*gaussR*gaussR)
	t.k[0] = uint32(gaussR / q * scale)
	t.w[0] = float32(q / scale)
	for i := 1; i < 256; i++ {
		t.k[i] = uint32(gaussX[i-1] / gaussX[i] * scale) // k[1] = 0: the top strip is all wedge
		t.w[i] = float32(gaussX[i] / scale)
	}
	return t
}()

// lanes is the state of the 16 xoshiro128++ generators: s[r][l] is word r
// of lane l's state.
type lanes [4][16]uint32

// seedLanes fills l from a SplitMix64 sequence started at h (the seeding
// xoshiro's authors recommend), two outputs per lane.
func (l *lanes) seed(h uint64) {
	for lane := range 16 {
		a, b := splitMix64(&h), splitMix64(&h)
		if a|b == 0 { // the all-zero state is xoshiro's fixed point (p = 2⁻¹²⁸)
			a = 1
		}
		l[0][lane], l[1][lane], l[2][lane], l[3][lane] = uint32(a), uint32(a>>32), uint32(b), uint32(b>>32)
	}
}

// gaussFillGo writes len(w)/16 steps of the 16 lanes into w (len(w) a
// multiple of 16): w[16b + l] is lane l's output at step b.
func gaussFillGo(w []uint32, s *lanes) {
	for b := 0; b+16 <= len(w); b += 16 {
		out := w[b : b+16 : b+16]
		for l := range 16 {
			s0, s1, s2, s3 := s[0][l], s[1][l], s[2][l], s[3][l]
			out[l] = bits.RotateLeft32(s0+s3, 7) + s0
			t := s1 << 9
			s2 ^= s0
			s3 ^= s1
			s1 ^= s2
			s0 ^= s3
			s2 ^= t
			s[0][l], s[1][l], s[2][l], s[3][l] = s0, s1, s2, bits.RotateLeft32(s3, 11)
		}
	}
}

// zigFast is the fast path on one word: x (signed) and whether it is
// accepted.
func zigFast(u uint32) (float32, bool) {
	m, i := (u>>8)&magMask, u&255
	x := math.Float32frombits(math.Float32bits(float32(m)*zig32.w[i]) | u&(1<<31))
	return x, m < zig32.k[i]
}

// gaussZigGo is the ziggurat's fast path over the words of len(dst)
// elements (len(w) ≥ len(dst)): dst[k] = dst[k]·scale + sd·x_k where word
// k is accepted, dst[k]·scale where it is not. It writes the rejected
// elements' indices, in increasing order, to idx (room for len(dst)) and
// returns how many.
func gaussZigGo(dst []float32, w []uint32, scale, sd float32, idx []uint32) int {
	n := 0
	for k, d := range dst {
		x, ok := zigFast(w[k])
		// The explicit conversions round each product to float32, so no
		// FMA fuses them on any architecture (the assembly kernels
		// multiply and add separately too).
		t := float32(d * scale)
		if ok {
			dst[k] = t + float32(sd*x)
		} else {
			dst[k] = t
			idx[n] = uint32(k)
			n++
		}
	}
	return n
}

// wedge is what the slow path knows of strip i ≥ 1's wedge, the part of
// [a, b] × [f(b), f(a)] (a = x_{i−1}, b = x_i) the fast path does not
// accept: f lies between the chord of [a, b] and the tangents at a and b —
// above the chord where f is concave (b ≤ 1), below it where f is convex
// (a ≥ 1) — so a point clearly below the lower bound or above the upper
// one is decided without exp; only ≈ 1 % of wedge points (and those of the
// strip around the inflection point x = 1) need the density itself (the
// squeeze of McFarland 2016, "A modified ziggurat algorithm for generating
// exponentially and normally distributed pseudorandom numbers").
type wedge struct {
	a, b, fa, fb float64
	chord        float64 // slope of the chord
	// concave and convex are 1 and 0 where f is concave on [a, b], 0 and
	// 1 where it is convex, both 0 on the strip around x = 1.
	concave, convex float64
}

var wedges = func() (t [256]wedge) {
	for i := 1; i < 256; i++ {
		a, b := gaussX[i-1], gaussX[i]
		w := wedge{a: a, b: b, fa: math.Exp(-0.5 * a * a), fb: math.Exp(-0.5 * b * b)}
		w.chord = (w.fb - w.fa) / (b - a)
		switch {
		case a >= 1:
			w.convex = 1
		case b <= 1:
			w.concave = 1
		}
		t[i] = w
	}
	return t
}()

// squeezeMargin keeps the bounds' own rounding (≈ 10⁻¹⁶) from deciding a
// point: within it the density is evaluated (slow32).
const squeezeMargin = 1e-12

// slow32 finishes a draw whose word u the fast path rejected: the base
// strip's tail beyond r (Marsaglia 1964), a wedge by comparing a uniform
// height with the density; a wedge point above the density is replaced by
// a fresh word. Each wedge point takes one 64-bit scalar word: 32 bits of
// height (uniform on the wedge's height to 2⁻³², a relative error of the
// acceptance of at most 2⁻³²) and the 32 bits of the replacement word,
// drawn whether or not it is needed, so that the loop goes on only when
// both are rejected (≈ 0.7 % of the time) and its branch is predictable.
// The squeeze's bounds are selected by multiplying with 0 and 1 (exact),
// not by a branch: the kind of strip a draw fell in is a coin flip to the
// branch predictor.
func (s *Stream) slow32(u uint32) float32 {
	for {
		m, i, sign := (u>>8)&magMask, u&255, u&(1<<31)
		if i == 0 {
			var x float64
			for {
				x = -math.Log(s.uniform()) / gaussR
				y := -math.Log(s.uniform())
				if y+y >= x*x {
					break
				}
			}
			return math.Float32frombits(math.Float32bits(float32(gaussR+x)) | sign)
		}
		x32 := float32(m) * zig32.w[i]
		w := &wedges[i]
		var r uint64 // s.word(), which does not inline
		if !s.crypto {
			r = splitMix64(&s.state)
		} else {
			r = s.cryptoWord()
		}
		x, y := float64(x32), w.fb+(float64(uint32(r))+0.5)*(1.0/(1<<32))*(w.fa-w.fb)
		chord := w.fa + w.chord*(x-w.a)
		ta := w.fa * (1 - w.a*(x-w.a)) // f(a) + f'(a)(x − a)
		tb := w.fb * (1 - w.b*(x-w.b))
		lo := w.convex*max(ta, tb) + w.concave*chord
		hi := w.convex*chord + w.concave*min(ta, tb)
		in := y < lo
		if w.convex+w.concave == 0 || x < w.a || x > w.b || (y >= lo-squeezeMargin && y <= hi+squeezeMargin) {
			in = y < math.Exp(-0.5*x*x)
		}
		next := uint32(r >> 32)
		x2, ok := zigFast(next)
		out := math.Float32bits(x32) | sign
		if !in {
			out = math.Float32bits(x2)
		}
		if in || ok {
			return math.Float32frombits(out)
		}
		u = next
	}
}

// gaussKernel is one implementation of the two kernels.
type gaussKernel struct {
	name string
	// fill is gaussFillGo's contract on the longest multiple of 16 of w.
	fill func(w []uint32, s *lanes)
	// zig is gaussZigGo's contract on whole blocks of 16 (len(dst) a
	// multiple of 16), with 16 entries of slack in idx.
	zig func(dst []float32, w []uint32, scale, sd float32, idx []uint32) int
}

var gaussPortable = &gaussKernel{name: "portable", fill: gaussFillGo, zig: gaussZigGo}

// gaussKernels lists the kernels this machine runs, portable first, fastest
// last; gaussUse is the one in use (the fastest unless UseNoiseKernel).
var (
	gaussKernels = append([]*gaussKernel{gaussPortable}, gaussAsmKernels()...)
	gaussUse     atomic.Pointer[gaussKernel]
)

func init() { gaussUse.Store(gaussKernels[len(gaussKernels)-1]) }

// NoiseKernels names the bulk Gaussian kernels this machine can run:
// "portable" (Go), and on amd64 "avx2" and "avx512" when the CPU has them.
// Every kernel draws the same noise from the same seed.
func NoiseKernels() []string {
	out := make([]string, len(gaussKernels))
	for i, k := range gaussKernels {
		out[i] = k.name
	}
	return out
}

// UseNoiseKernel makes AddNormal and ScaleAddNormal use the named kernel
// (one of NoiseKernels; the fastest is the default) and returns the one it
// replaces. It is for benchmarks and tests: the noise is the same with
// every kernel, only its speed differs. A draw under way finishes with
// the kernel it started with.
func UseNoiseKernel(name string) (previous string, err error) {
	i := slices.IndexFunc(gaussKernels, func(k *gaussKernel) bool { return k.name == name })
	if i < 0 {
		return gaussUse.Load().name, fmt.Errorf("noise kernel %q: this machine has %v", name, NoiseKernels())
	}
	return gaussUse.Swap(gaussKernels[i]).name, nil
}

// bulk is a Stream's state for bulk draws.
type bulk struct {
	lanes lanes
	words [gaussChunk]uint32
	// rejected holds the indices of a chunk's rejected elements (16 of
	// slack: the kernels store whole vectors).
	rejected [gaussChunk + 16]uint32
}

// ScaleAddNormal sets dst[k] = dst[k]·scale + sd·N(0, 1) for every k, in
// one pass (DP-SGD's mean of the clipped sum plus its noise). Each product
// is rounded to float32 before the sum.
func (s *Stream) ScaleAddNormal(dst []float32, scale, sd float32) {
	k, b := gaussUse.Load(), &s.bulk
	for len(dst) > 0 {
		n := min(len(dst), gaussChunk)
		nw := (n + 15) &^ 15
		s.fillWords(k, b.words[:nw])
		full, nr := n&^15, 0
		if full > 0 {
			nr = k.zig(dst[:full], b.words[:full], scale, sd, b.rejected[:])
		}
		if full < n {
			r := b.rejected[nr:]
			tail := gaussZigGo(dst[full:n], b.words[full:n], scale, sd, r)
			for j := range r[:tail] {
				r[j] += uint32(full)
			}
			nr += tail
		}
		for _, e := range b.rejected[:nr] {
			dst[e] += float32(sd * s.slow32(b.words[e]))
		}
		dst = dst[n:]
	}
}

// AddNormal adds sd·N(0, 1) to every element of dst (ScaleAddNormal with
// scale 1, which leaves dst[k] exact).
func (s *Stream) AddNormal(dst []float32, sd float32) { s.ScaleAddNormal(dst, 1, sd) }
