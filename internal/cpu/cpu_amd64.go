//go:build amd64 && !purego

package cpu

// The standard library's internal/cpu is not importable, and three bits do
// not justify a module dependency, so the package asks the CPU directly.

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

func xgetbv() (eax, edx uint32)

func features() (avx2FMA, avx512 bool) {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false, false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const (
		fma     = 1 << 12
		osxsave = 1 << 27
		avx     = 1 << 28
	)
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false, false
	}
	xcr0, _ := xgetbv()
	const (
		xmmYmm  = 1<<1 | 1<<2        // SSE and AVX state
		zmmMask = 1<<5 | 1<<6 | 1<<7 // opmask, upper ZMM0-15, ZMM16-31
	)
	if xcr0&xmmYmm != xmmYmm {
		return false, false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const (
		avx2    = 1 << 5
		avx512f = 1 << 16
	)
	avx2FMA = ebx7&avx2 != 0
	avx512 = avx2FMA && ebx7&avx512f != 0 && xcr0&zmmMask == zmmMask
	return avx2FMA, avx512
}
