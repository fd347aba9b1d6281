//go:build amd64 && !purego

package nn

//go:noescape
func pooledGrad5AVX2(acc *float32, x *float32, pitch int, grad *float32, pos *int32, n int, sub int)

// pooledGradVec runs pooledGrad's 5×5 case in AVX2 (poolgrad_amd64.s) and
// reports whether it did.
func pooledGradVec(acc []float32, k int, x []float32, pitch int, g []float32, pos []int32, sub int) bool {
	if !haveAVX2 || k != 5 || len(g) == 0 {
		return false
	}
	pooledGrad5AVX2(&acc[0], &x[0], pitch, &g[0], &pos[0], len(g), sub)
	return true
}
