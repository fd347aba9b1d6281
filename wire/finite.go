package wire

import "github.com/trellis-fl/trellis/vec"

// firstNonFinite returns the index of the first NaN or ±Inf in xs, or -1.
//
// Every received model is scanned, so this is vec's scan: 32 lanes at a
// time with AVX2 and a portable branch-free loop otherwise. wire once kept
// a scalar copy to import nothing from the module; in a 100-node simulation
// that copy was ~4 % of the CPU, and vec imports nothing but internal/cpu.
func firstNonFinite(xs []float32) int {
	_, i := vec.AllFinite(xs)
	return i
}
