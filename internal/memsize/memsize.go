// Package memsize is what the Go heap spends on an allocation (the
// allocator's size classes and pages) and byte arithmetic that saturates
// instead of overflowing. Packages that report their own memory footprint
// (nn, aggregate, internal/gemm) count with it, so the footprints of
// absurd configs (10^12 parameters × 10^5 nodes) stay positive and
// comparable.
package memsize

import (
	"math"
	"slices"
)

// Max is where sizes saturate (Mul, Add).
const Max = math.MaxInt64 / 4

// Mul is the product of xs, saturating at Max; 0 if any is ≤ 0.
func Mul(xs ...int64) int64 {
	p := int64(1)
	for _, x := range xs {
		if x <= 0 {
			return 0
		}
		if p > Max/x {
			return Max
		}
		p *= x
	}
	return p
}

// Add is the sum of xs, saturating at Max.
func Add(xs ...int64) int64 {
	s := int64(0)
	for _, x := range xs {
		s += x
		if s > Max {
			return Max
		}
	}
	return s
}

// sizeClasses are the Go allocator's small-object sizes
// (internal/runtime/gc/sizeclasses.go); larger objects take whole 8 KiB
// pages.
var sizeClasses = []int64{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288,
	320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688,
	3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336,
	16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// Alloc is what the heap spends on one allocation of b bytes.
func Alloc(b int64) int64 {
	switch {
	case b <= 0:
		return 0
	case b <= 32768:
		i, _ := slices.BinarySearch(sizeClasses, b)
		return sizeClasses[i]
	case b >= Max:
		return Max
	}
	return (b + 8191) / 8192 * 8192
}

// Floats is Alloc of one []float32 (or []int32) of n values.
func Floats(n int64) int64 { return Alloc(Mul(4, n)) }
