//go:build !amd64 || purego

package vec

func addToPrefix(dst, x []float32) int { return 0 }
