//go:build amd64 && !purego

package vec

import "github.com/trellis-fl/trellis/internal/cpu"

//go:noescape
func addToAVX2(dst, x *float32, n int)

// addToPrefix adds the longest prefix of x a multiple of 16 long into dst
// with vector code and returns its length.
func addToPrefix(dst, x []float32) int {
	n := len(x) &^ 15
	if !cpu.AVX2FMA || n == 0 {
		return 0
	}
	addToAVX2(&dst[0], &x[0], n)
	return n
}

//go:noescape
func reluAVX2(dst, x *float32, n int)

//go:noescape
func reluGradAVX2(dx, dy, y *float32, n int)

// reluPrefix applies ReLU to the longest prefix of x a multiple of 16 long
// with vector code and returns its length.
func reluPrefix(dst, x []float32) int {
	n := len(x) &^ 15
	if !cpu.AVX2FMA || n == 0 {
		return 0
	}
	reluAVX2(&dst[0], &x[0], n)
	return n
}

// reluGradPrefix is reluPrefix for ReLUGrad.
func reluGradPrefix(dx, dy, y []float32) int {
	n := len(dy) &^ 15
	if !cpu.AVX2FMA || n == 0 {
		return 0
	}
	reluGradAVX2(&dx[0], &dy[0], &y[0], n)
	return n
}
