//go:build !amd64 || purego

package cpu

func features() (avx2FMA, avx512 bool) { return false, false }
