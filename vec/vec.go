package vec

import "math"

// Dot returns sum_i x[i]*y[i], accumulated in float64. It panics if the
// lengths differ, since that is always a programming error in the caller.
func Dot(x, y []float32) float64 {
	mustSameLen(len(x), len(y))
	var s float64
	for i, v := range x {
		s += float64(v) * float64(y[i])
	}
	return s
}

// Axpy sets y[i] += a*x[i].
func Axpy(a float32, x, y []float32) {
	mustSameLen(len(x), len(y))
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}

// Scale sets x[i] *= a.
func Scale(a float32, x []float32) {
	for i := range x {
		x[i] *= a
	}
}

// Add sets dst[i] = x[i] + y[i].
func Add(dst, x, y []float32) {
	mustSameLen(len(x), len(y))
	mustSameLen(len(dst), len(x))
	for i := range dst {
		dst[i] = x[i] + y[i]
	}
}

// AddTo adds x into dst element by element (dst[i] += x[i]), with AVX2 on
// amd64: the same IEEE additions in any order, so the result is the same
// bits on every path.
func AddTo(dst, x []float32) {
	mustSameLen(len(dst), len(x))
	done := addToPrefix(dst, x)
	for i, v := range x[done:] {
		dst[done+i] += v
	}
}

// WidenScale sets acc[i] = w·x[i] in float64, and WidenAxpy adds w·x[i]
// to acc[i] (a rounded product, then a rounded sum, no fused multiply-add);
// Narrow rounds acc back to float32 (to nearest even). Together they are
// a weighted sum of float32 vectors accumulated in float64, the inner loop
// of model averaging; with AVX2 on amd64 they do four lanes at once with
// the same IEEE operations, so every path gives the same bits.
func WidenScale(acc []float64, w float64, x []float32) {
	mustSameLen(len(acc), len(x))
	done := widenScalePrefix(acc, w, x)
	for i, v := range x[done:] {
		acc[done+i] = w * float64(v)
	}
}

// WidenAxpy sets acc[i] += w·x[i] (see WidenScale).
func WidenAxpy(acc []float64, w float64, x []float32) {
	mustSameLen(len(acc), len(x))
	done := widenAxpyPrefix(acc, w, x)
	for i, v := range x[done:] {
		acc[done+i] += w * float64(v)
	}
}

// Narrow sets dst[i] = float32(acc[i]) (see WidenScale).
func Narrow(dst []float32, acc []float64) {
	mustSameLen(len(dst), len(acc))
	done := narrowPrefix(dst, acc)
	for i, v := range acc[done:] {
		dst[done+i] = float32(v)
	}
}

// AddConst sets dst[i] = x[i] + b (dst may be x), with AVX2 on amd64: the
// same bits on every path.
func AddConst(dst, x []float32, b float32) {
	mustSameLen(len(dst), len(x))
	done := addConstPrefix(dst, x, b)
	for i, v := range x[done:] {
		dst[done+i] = v + b
	}
}

// ReLU sets dst[i] = max(0, x[i]) by clearing every value whose sign bit is
// set (negatives, −0 and negative NaNs become +0; a positive NaN stays),
// without branches: activations' signs are random, so a branch would
// mispredict half the time. AVX2 on amd64, the same bits on every path.
func ReLU(dst, x []float32) {
	mustSameLen(len(dst), len(x))
	done := reluPrefix(dst, x)
	for i, v := range x[done:] {
		b := math.Float32bits(v)
		dst[done+i] = math.Float32frombits(b &^ uint32(int32(b)>>31))
	}
}

// ReLUGrad sets dx[i] = dy[i] where the ReLU output y[i] is non-zero (its
// bits: y ≥ 0 always) and +0 elsewhere, without branches.
func ReLUGrad(dx, dy, y []float32) {
	mustSameLen(len(dx), len(dy))
	mustSameLen(len(dy), len(y))
	done := reluGradPrefix(dx, dy, y)
	for i, g := range dy[done:] {
		b := int32(math.Float32bits(y[done+i]))
		mask := uint32((b | -b) >> 31)
		dx[done+i] = math.Float32frombits(math.Float32bits(g) & mask)
	}
}

// Sub sets dst[i] = x[i] - y[i].
func Sub(dst, x, y []float32) {
	mustSameLen(len(x), len(y))
	mustSameLen(len(dst), len(x))
	for i := range dst {
		dst[i] = x[i] - y[i]
	}
}

// SumSq returns sum_i x[i]^2 in float64.
func SumSq(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return s
}

// Norm returns the Euclidean norm of x.
func Norm(x []float32) float64 { return math.Sqrt(SumSq(x)) }

// SumAbs returns the L1 norm of x, sum_i |x[i]|, in float64.
func SumAbs(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += math.Abs(float64(v))
	}
	return s
}

// SqDist returns ||x - y||^2 in float64.
func SqDist(x, y []float32) float64 {
	mustSameLen(len(x), len(y))
	var s float64
	for i, v := range x {
		d := float64(v) - float64(y[i])
		s += d * d
	}
	return s
}

// Fill sets every element of x to v.
func Fill(x []float32, v float32) {
	for i := range x {
		x[i] = v
	}
}

// AllFinite reports whether x holds no NaN or Inf, and the index of the first
// offending element otherwise. Training checks every gradient of every step
// with it, so the scan is branch-free: adding 1 to the 8-bit exponent field
// carries into the sign bit exactly when the exponent is all ones (Inf or
// NaN), and the carries are OR-ed together; only a failing slice is scanned
// a second time for the position. With AVX2 the bulk is checked 32 lanes at
// a time.
func AllFinite(x []float32) (bool, int) {
	if !anyNonFinite(x) {
		return true, -1
	}
	for i, v := range x {
		if math.Float32bits(v)&0x7f800000 == 0x7f800000 {
			return false, i
		}
	}
	return true, -1 // unreachable: anyNonFinite saw one
}

func anyNonFinite(x []float32) bool {
	i, bad := anyNonFinitePrefix(x)
	return bad || anyNonFiniteScalar(x[i:])
}

// anyNonFiniteScalar is the portable scan: the whole of x without AVX2,
// the tail after the vector prefix with it.
func anyNonFiniteScalar(x []float32) bool {
	const exp, one = 0x7f800000, 0x00800000
	var a, b, c, d uint32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		q := x[i : i+4 : i+4]
		a |= math.Float32bits(q[0])&exp + one
		b |= math.Float32bits(q[1])&exp + one
		c |= math.Float32bits(q[2])&exp + one
		d |= math.Float32bits(q[3])&exp + one
	}
	for _, v := range x[i:] {
		a |= math.Float32bits(v)&exp + one
	}
	return (a|b|c|d)&(1<<31) != 0
}

func mustSameLen(a, b int) {
	if a != b {
		panic("vec: length mismatch")
	}
}
