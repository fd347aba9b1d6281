//go:build amd64 && !purego

package nn

//go:noescape
func pool2x2AVX2(top, bot, out *float32, idx *int32, groups int, start, w int32)

// pool2x2Row pools one output row of a 2×2, stride 2 max-pool with AVX2, 8
// outputs at a time, and reports whether it did: the last group may run
// past the row (into the next row's inputs and outputs, which the caller
// computes afterwards and so overwrites), so x from top and the outputs
// from out must extend that far. top is the row pair's top row, w the
// input width, start top's offset for idx.
func pool2x2Row(x []float32, top, w int, out []float32, idx []int32, wo, start int) bool {
	groups := (wo + 7) / 8
	if !haveAVX2 || top+w+16*groups > len(x) || 8*groups > len(out) || 8*groups > len(idx) ||
		start+w+16*groups > 1<<31-1 {
		return false
	}
	pool2x2AVX2(&x[top], &x[top+w], &out[0], &idx[0], groups, int32(start), int32(w))
	return true
}
