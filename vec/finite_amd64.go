//go:build amd64 && !purego

package vec

import "github.com/trellis-fl/trellis/internal/cpu"

// nonFiniteAVX2 reports whether any of the n float32 at x (n a multiple of
// 32) has an all-ones exponent (Inf or NaN).
//
//go:noescape
func nonFiniteAVX2(x *float32, n int) bool

// anyNonFinitePrefix checks the longest prefix of x a multiple of 32 long
// with vector code; it returns the prefix length and whether it holds a
// non-finite value.
func anyNonFinitePrefix(x []float32) (int, bool) {
	n := len(x) &^ 31
	if !cpu.AVX2FMA || n == 0 {
		return 0, false
	}
	return n, nonFiniteAVX2(&x[0], n)
}
