//go:build !amd64 || purego

package privacy

func gaussAsmKernels() []*gaussKernel { return nil }
