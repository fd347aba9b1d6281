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
// offending element otherwise.
func AllFinite(x []float32) (bool, int) {
	for i, v := range x {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false, i
		}
	}
	return true, -1
}

func mustSameLen(a, b int) {
	if a != b {
		panic("vec: length mismatch")
	}
}
