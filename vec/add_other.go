//go:build !amd64 || purego

package vec

func addToPrefix(dst, x []float32) int { return 0 }

func reluPrefix(dst, x []float32) int { return 0 }

func reluGradPrefix(dx, dy, y []float32) int { return 0 }
