package aggregate

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// TrimmedMean is the coordinate-wise trimmed mean, CWTM of
// spec/robust-rules.md: per coordinate, sort the n values, drop the F
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
	c coords
}

// Name implements Rule.
func (*TrimmedMean) Name() string { return "trimmed_mean" }

// Aggregate implements Rule.
func (t *TrimmedMean) Aggregate(dst []float32, xs [][]float32) error {
	t.c.n = 0
	if t.F < 0 {
		return fmt.Errorf("trimmed_mean: f = %d, allowed range [0, ∞)", t.F)
	}
	d, err := check("trimmed_mean", dst, xs)
	if err != nil {
		return err
	}
	n, f := len(xs), t.F
	if n <= 2*f {
		return fmt.Errorf("trimmed_mean: %w: n = %d inputs with f = %d, need n > 2f = %d", ErrTooFewInputs, n, f, 2*f)
	}
	blk := t.c.start(n)
	counts := t.c.counts
	m := n - 2*f
	window := exactWindow(m)
	for j0 := 0; j0 < d; j0 += blk {
		b := min(blk, d-j0)
		t.c.gather(xs, j0, b)
		for k := range b {
			keys := t.c.keys[k*n : (k+1)*n]
			lo, hi := uint64(0), uint64(math.MaxUint64)
			if f > 0 {
				lo, _, _ = selectRank(keys, t.c.a, t.c.b, f)
				hi, _, _ = selectRank(keys, t.c.a, t.c.b, n-f-1)
			}
			span := hi - lo
			s, emax, emin := keptSum(keys, lo, span, counts, t.c.terms)
			if emax-emin > window {
				s = t.sortedSum(keys, lo, span)
			}
			dst[j0+k] = float32(s / float64(m))
		}
	}
	t.c.done(n)
	return nil
}

// Weights implements Selector.
func (t *TrimmedMean) Weights() []float64 { return t.c.weights() }

// keptSum passes over a coordinate's keys without branching on which are
// kept (those with key−lo <= span): it counts them in counts and returns
// the sum of their values with the largest and smallest ulp exponent of the
// nonzero kept values (see exponent). Terms go through terms (scratch of
// len(keys)) so that the exponent tracking carries no float dependency and
// the sum can use four partial sums; when the exponents span at most
// exactWindow binades every partial sum and their total are exact.
func keptSum(keys []uint64, lo, span uint64, counts []int64, terms []float64) (s float64, emax, emin int) {
	terms = terms[:len(keys)]
	emin = math.MaxInt
	for i, key := range keys {
		in := b2i(key-lo <= span)
		counts[keyInput(key)] += int64(in)
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

// sortedSum returns the sum of the kept keys' values in ascending order.
func (t *TrimmedMean) sortedSum(keys []uint64, lo, span uint64) float64 {
	kept := t.c.a[:0]
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
