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
