//go:build !amd64 || purego

package nn

func pool2x2Row(x []float32, top, w int, out []float32, idx []int32, wo, start int) bool {
	return false
}
