//go:build !amd64 || purego

package nn

func sgdFast(w, g, v []float32, lr, mu, wd float32, nesterov bool) int { return 0 }

func sgdFuses() bool { return false }
