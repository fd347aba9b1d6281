//go:build !amd64 || purego

package vec

func anyNonFinitePrefix(x []float32) (int, bool) { return 0, false }
