//go:build amd64 && !purego

package vec

import "github.com/trellis-fl/trellis/internal/cpu"

//go:noescape
func addToAVX2(dst, x *float32, n int)

//go:noescape
func reluAVX2(dst, x *float32, n int)

//go:noescape
func reluGradAVX2(dx, dy, y *float32, n int)

// vectorLen is how many of n elements the 16-float AVX2 loops below take
// (0 without AVX2); the callers finish the rest in Go.
func vectorLen(n int) int {
	if !cpu.AVX2FMA {
		return 0
	}
	return n &^ 15
}

// addToPrefix adds the longest prefix of x a multiple of 16 long into dst
// with vector code and returns its length.
func addToPrefix(dst, x []float32) int {
	n := vectorLen(len(x))
	if n > 0 {
		addToAVX2(&dst[0], &x[0], n)
	}
	return n
}

// reluPrefix applies ReLU to the longest prefix of x a multiple of 16 long
// with vector code and returns its length.
func reluPrefix(dst, x []float32) int {
	n := vectorLen(len(x))
	if n > 0 {
		reluAVX2(&dst[0], &x[0], n)
	}
	return n
}

// reluGradPrefix is reluPrefix for ReLUGrad.
func reluGradPrefix(dx, dy, y []float32) int {
	n := vectorLen(len(dy))
	if n > 0 {
		reluGradAVX2(&dx[0], &dy[0], &y[0], n)
	}
	return n
}

//go:noescape
func widenScaleAVX2(acc *float64, w float64, x *float32, n int)

//go:noescape
func widenAxpyAVX2(acc *float64, w float64, x *float32, n int)

//go:noescape
func narrowAVX2(dst *float32, acc *float64, n int)

// widenScalePrefix is WidenScale's vector prefix; it returns its length.
func widenScalePrefix(acc []float64, w float64, x []float32) int {
	n := vectorLen(len(x))
	if n > 0 {
		widenScaleAVX2(&acc[0], w, &x[0], n)
	}
	return n
}

// widenAxpyPrefix is WidenAxpy's vector prefix; it returns its length.
func widenAxpyPrefix(acc []float64, w float64, x []float32) int {
	n := vectorLen(len(x))
	if n > 0 {
		widenAxpyAVX2(&acc[0], w, &x[0], n)
	}
	return n
}

// narrowPrefix is Narrow's vector prefix; it returns its length.
func narrowPrefix(dst []float32, acc []float64) int {
	n := vectorLen(len(acc))
	if n > 0 {
		narrowAVX2(&dst[0], &acc[0], n)
	}
	return n
}

//go:noescape
func addConstAVX2(dst, x *float32, b float32, n int)

// addConstPrefix is AddConst's vector prefix; it returns its length.
func addConstPrefix(dst, x []float32, b float32) int {
	n := vectorLen(len(x))
	if n > 0 {
		addConstAVX2(&dst[0], &x[0], b, n)
	}
	return n
}
