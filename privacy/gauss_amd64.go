//go:build amd64 && !purego

package privacy

import (
	"math"
	"unsafe"

	"github.com/trellis-fl/trellis/internal/cpu"
)

// The bulk Gaussian kernels of gauss.go in AVX2 and AVX-512
// (gauss_amd64.s): 16 xoshiro128++ lanes in two YMM or one ZMM register
// per state word, and the ziggurat's fast path with its table lookups as
// gathers. They compute what gaussFillGo and gaussZigGo compute, bit for
// bit (TestGaussKernelsMatchPortable). The AVX-512 kernels use AVX-512 F
// instructions only (what internal/cpu's AVX512 reports); the AVX2 ones
// AVX2 and POPCNT, which every AVX2 processor has.

// gaussFillAVX2 and gaussFillAVX512: gaussFillGo on n words, n a positive
// multiple of 16.
//
//go:noescape
func gaussFillAVX2(w *uint32, n int, s *lanes)

//go:noescape
func gaussFillAVX512(w *uint32, n int, s *lanes)

// gaussZigAVX2 and gaussZigAVX512: gaussZigGo on n elements, n a positive
// multiple of 16, with 16 entries of slack in idx. AVX2 reads zig32 and
// compacts the rejected lanes through lut (zigCompress), AVX-512 reads
// zigPacked and compacts with VPCOMPRESSD.
//
//go:noescape
func gaussZigAVX2(dst *float32, w *uint32, n int, tab *zigTab32, scale, sd float32, idx *uint32, lut *[256]uint64) int

//go:noescape
func gaussZigAVX512(dst *float32, w *uint32, n int, tab *[256]uint64, scale, sd float32, idx *uint32) int

// zigCompress[m] lists the set bits of the 8-bit mask m, as bytes from
// the lowest: the AVX2 kernel's compaction of a half block's rejected
// lanes.
var zigCompress = func() (t [256]uint64) {
	for m := range t {
		k := 0
		for l := range 8 {
			if m>>l&1 != 0 {
				t[m] |= uint64(l) << (8 * k)
				k++
			}
		}
	}
	return t
}()

// zigPacked is zig32 for the AVX-512 kernel: k[i] | w[i]<<32 per strip,
// so that one 64-bit gather fetches both (half the loads of two 32-bit
// gathers: a third less time for the kernel).
var zigPacked = func() (t [256]uint64) {
	for i := range t {
		t[i] = uint64(zig32.k[i]) | uint64(math.Float32bits(zig32.w[i]))<<32
	}
	return t
}()

// zigTab32's layout is the assembly's: k at 0, w at 1024.
var _ = [1]struct{}{}[unsafe.Offsetof(zigTab32{}.w)-1024]

func gaussAsmKernels() []*gaussKernel {
	var ks []*gaussKernel
	if cpu.AVX2FMA {
		ks = append(ks, &gaussKernel{name: "avx2",
			fill: func(w []uint32, s *lanes) {
				if n := len(w) &^ 15; n > 0 {
					gaussFillAVX2(&w[0], n, s)
				}
			},
			zig: func(dst []float32, w []uint32, scale, sd float32, idx []uint32) int {
				n := len(dst) &^ 15
				if n == 0 {
					return 0
				}
				_, _ = w[n-1], idx[n+15]
				return gaussZigAVX2(&dst[0], &w[0], n, &zig32, scale, sd, &idx[0], &zigCompress)
			}})
	}
	if cpu.AVX512 {
		ks = append(ks, &gaussKernel{name: "avx512",
			fill: func(w []uint32, s *lanes) {
				if n := len(w) &^ 15; n > 0 {
					gaussFillAVX512(&w[0], n, s)
				}
			},
			zig: func(dst []float32, w []uint32, scale, sd float32, idx []uint32) int {
				n := len(dst) &^ 15
				if n == 0 {
					return 0
				}
				_, _ = w[n-1], idx[n+15]
				return gaussZigAVX512(&dst[0], &w[0], n, &zigPacked, scale, sd, &idx[0])
			}})
	}
	return ks
}
