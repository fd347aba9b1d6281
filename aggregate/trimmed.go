package aggregate

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// TrimmedMean is the coordinate-wise trimmed mean, CWTM of
// docs/methods/toolbox.md: per coordinate, sort the n values, drop the F
// largest and the F smallest and average the remaining n − 2F. It needs
// n > 2F; F = 0 is the mean (up to summation order).
//
// The kept values of a coordinate are those whose keys (see key) lie
// between the keys of rank F and n−F−1, found by selection. Their sum is a
// function of the kept values alone, never of the input order: when their
// exponents span few enough binades for every partial sum to be exact in
// float64 (see exactWindow), any order gives the exact sum; otherwise they
// are sorted and summed in ascending order. Weights gives each kept input
// an equal share of the coordinate; an input that is always trimmed gets 0.
//
// A TrimmedMean holds scratch: use it through a pointer, from one goroutine
// at a time.
type TrimmedMean struct {
	// F is the number of values dropped at each end of every coordinate.
	F int
	// Threads is the number of goroutines the coordinates are split across
	// (0 or 1: the caller's only). The output does not depend on it.
	Threads int

	s screen
	c columns
	k trimKernel
}

// Name implements Rule.
func (*TrimmedMean) Name() string { return "trimmed_mean" }

// Aggregate implements Rule.
func (t *TrimmedMean) Aggregate(dst []float32, xs [][]float32) error {
	if t.F < 0 {
		t.s.fail()
		return fmt.Errorf("trimmed_mean: f = %d, allowed range [0, ∞)", t.F)
	}
	xs, _, err := t.s.in("trimmed_mean", dst, xs, t.Threads)
	if err != nil {
		return err
	}
	n, f := len(xs), t.F
	if f >= n || n <= 2*f { // f >= n first: 2f could overflow
		t.s.fail()
		return t.s.tooFew("trimmed_mean", n, f, fmt.Sprintf("n > 2f = %d", 2*f))
	}
	t.k = trimKernel{lo: f, hi: n - f - 1}
	t.c.run(dst, xs, t.Threads, &t.k)
	t.s.done()
	return nil
}

// Weights implements Selector.
func (t *TrimmedMean) Weights() []float64 { return t.s.expand(t.c.weights()) }

// Dropped implements Dropper.
func (t *TrimmedMean) Dropped() int { return t.s.Dropped() }

// trimKernel averages the values of ranks lo .. hi of a coordinate.
type trimKernel struct{ lo, hi int }

func (k *trimKernel) coord(c *coords, keys []uint64, _ int) float32 {
	s, m := keptRange(c, keys, k.lo, k.hi, 1)
	return float32(s / float64(m))
}

// keptRange returns the sum of the values of ranks lo .. hi among keys and
// their number, crediting their inputs unit counts each. The sum does not
// depend on the order of keys: it is exact when the kept values' exponents
// span at most exactWindow binades, and taken in ascending order
// otherwise.
func keptRange(c *coords, keys []uint64, lo, hi int, unit int64) (float64, int) {
	n := len(keys)
	klo, khi := uint64(0), uint64(math.MaxUint64)
	if lo > 0 {
		klo, _, _ = selectRank(keys, c.a, c.b, lo)
	}
	if hi < n-1 {
		khi, _, _ = selectRank(keys, c.a, c.b, hi)
	}
	m := hi - lo + 1
	span := khi - klo
	s, emax, emin := keptSum(keys, klo, span, c.counts, unit, c.terms)
	if emax-emin > exactWindow(m) {
		s = sortedSum(keys, klo, span, c.a)
	}
	return s, m
}

// keptSum passes over a coordinate's keys without branching on which are
// kept (those with key−lo <= span): it adds unit to their counts and returns
// the sum of their values with the largest and smallest ulp exponent of the
// nonzero kept values (see exponent). Terms go through terms (scratch of
// len(keys)) so that the exponent tracking carries no float dependency and
// the sum can use four partial sums; when the exponents span at most
// exactWindow binades every partial sum and their total are exact.
func keptSum(keys []uint64, lo, span uint64, counts []int64, unit int64, terms []float64) (s float64, emax, emin int) {
	terms = terms[:len(keys)]
	emin = math.MaxInt
	for i, key := range keys {
		in := b2i(key-lo <= span)
		counts[keyInput(key)] += int64(in) * unit
		v := keyValue(key)
		// A dropped value adds -0, the identity of IEEE addition: x + -0 = x
		// for every x, zeros of either sign included.
		mask := -uint64(in)
		terms[i] = math.Float64frombits(math.Float64bits(float64(v))&mask | negZeroBits&^mask)
		e := exponent(v)
		emax = max(emax, e*in)
		if in == 0 || e == 0 {
			e = math.MaxInt
		}
		emin = min(emin, e)
	}
	neg := math.Float64frombits(negZeroBits)
	s0, s1, s2, s3 := neg, neg, neg, neg
	i := 0
	for ; i+3 < len(terms); i += 4 {
		s0 += terms[i]
		s1 += terms[i+1]
		s2 += terms[i+2]
		s3 += terms[i+3]
	}
	for ; i < len(terms); i++ {
		s0 += terms[i]
	}
	return (s0 + s1) + (s2 + s3), emax, emin
}

// sortedSum returns the sum of the kept keys' values in ascending order,
// using buf (len(keys)) as scratch.
func sortedSum(keys []uint64, lo, span uint64, buf []uint64) float64 {
	kept := buf[:0]
	for _, key := range keys {
		if key-lo <= span {
			kept = append(kept, key)
		}
	}
	slices.Sort(kept)
	s := math.Float64frombits(negZeroBits)
	for _, key := range kept {
		s += float64(keyValue(key))
	}
	return s
}

// negZeroBits is -0, which starts every sum: -0 + x = x for all x, so a
// sum of values is -0 only when they all are, as for the mean, whose sum
// starts at its first value.
const negZeroBits = 1 << 63

// exponent returns a float32's ulp exponent, biased: the value is an
// integer multiple of 2^(e−150) and below 2^(e−126) in magnitude; 0 for
// zero.
func exponent(v float32) int {
	b := math.Float32bits(v) &^ (1 << 31)
	if b == 0 {
		return 0
	}
	return max(int(b>>23), 1)
}

// exactWindow is the widest span emax − emin of ulp exponents for which m
// float32 values sum exactly in float64 in any order: every partial sum is
// a multiple of 2^(emin−150) below m·2^(emax−126) < 2^(emax−126+L),
// L = bits.Len(m), which fits the 53-bit significand when
// emax − emin + 24 + L <= 53.
func exactWindow(m int) int { return 29 - bits.Len(uint(m)) }
