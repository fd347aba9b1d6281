package privacy

import (
	"errors"
	"fmt"
	"math"
)

// FixedPoint is secure aggregation's encoding of real values as integers
// modulo 2^32 (the survey, §3.1.3 and §3.4): x ↦ round(x·2^Bits)
// in two's complement. Sums of up to N encoded values are exact modulo
// 2^32, and they decode correctly as long as they stay within int32, which
// Encode enforces by refusing any |x| > Bound = (2^31 − 1)/(2^Bits·N): a
// value out of range is an error, never silently saturated or wrapped.
type FixedPoint struct {
	Bits  int
	N     int
	Bound float64
}

// ErrOutOfRange is the error of a value outside the encoding's range.
var ErrOutOfRange = errors.New("fixed point: value outside the encoding's range")

// NewFixedPoint returns the encoding with 2^bits steps per unit (1 ≤ bits
// ≤ 24) for sums of at most n ≥ 1 values.
func NewFixedPoint(bits, n int) (FixedPoint, error) {
	if bits < 1 || bits > 24 {
		return FixedPoint{}, fmt.Errorf("fixed point: %d fraction bits, allowed 1…24", bits)
	}
	if n < 1 {
		return FixedPoint{}, fmt.Errorf("fixed point: sums of %d values, need ≥ 1", n)
	}
	bound := float64(math.MaxInt32) / math.Ldexp(1, bits) / float64(n)
	if bound < 1 {
		return FixedPoint{}, fmt.Errorf("fixed point: %d fraction bits leave sums of %d values a range below ±1", bits, n)
	}
	return FixedPoint{Bits: bits, N: n, Bound: bound}, nil
}

// Encode writes round(x·2^Bits) mod 2^32 of every x into dst (len(dst) ==
// len(x)). A non-finite value or one with |x| > Bound is an error naming
// it; dst is then unspecified.
func (f FixedPoint) Encode(dst []uint32, x []float32) error {
	if len(dst) != len(x) {
		return fmt.Errorf("fixed point: %d values into %d", len(x), len(dst))
	}
	scale := math.Ldexp(1, f.Bits)
	for i, v := range x {
		d := float64(v)
		if !(math.Abs(d) <= f.Bound) { // also NaN
			return fmt.Errorf("%w: x[%d] = %v, allowed |x| ≤ %.6g (%d fraction bits, sums of %d)", ErrOutOfRange, i, v, f.Bound, f.Bits, f.N)
		}
		dst[i] = uint32(int32(math.RoundToEven(d * scale)))
	}
	return nil
}

// Decode writes the real value of every encoded sum into dst: the uint32
// read as int32, divided by 2^Bits.
func (f FixedPoint) Decode(dst []float64, s []uint32) {
	inv := math.Ldexp(1, -f.Bits)
	for i, v := range s {
		dst[i] = float64(int32(v)) * inv
	}
}
