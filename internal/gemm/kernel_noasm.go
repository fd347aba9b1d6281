//go:build !amd64 || purego

package gemm

var hasAVX2, hasAVX512 = false, false

func defaultKernel() *kernel { return portable }

// available lists the kernels this machine can run.
func available() []*kernel { return []*kernel{portable} }

func transpose8Down(dst *float32, ldd int, src *float32, blocks int) { panic("unreachable") }
