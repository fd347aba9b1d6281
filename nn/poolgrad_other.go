//go:build !amd64 || purego

package nn

func pooledGradVec(acc []float32, k int, x []float32, pitch int, g []float32, pos []int32, sub int) bool {
	return false
}
