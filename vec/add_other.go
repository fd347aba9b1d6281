//go:build !amd64 || purego

package vec

func addToPrefix(dst, x []float32) int { return 0 }

func reluPrefix(dst, x []float32) int { return 0 }

func reluGradPrefix(dx, dy, y []float32) int { return 0 }

func widenScalePrefix(acc []float64, w float64, x []float32) int { return 0 }

func widenAxpyPrefix(acc []float64, w float64, x []float32) int { return 0 }

func narrowPrefix(dst []float32, acc []float64) int { return 0 }

func addConstPrefix(dst, x []float32, b float32) int { return 0 }
