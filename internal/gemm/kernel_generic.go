package gemm

import (
	"runtime"
	"unsafe"
)

// portable is the pure-Go kernel: the fallback on CPUs without AVX2/FMA, on
// other architectures and under the purego build tag. Its tile is as large
// as the target's floating-point registers hold without spilling in the
// inner loop: amd64 has 16 (X15 is reserved), enough for a 2×4 tile (8
// accumulators, 4 of B, 1 of A; a 4×4 tile spills and ran at half the
// speed), while arm64, ppc64, riscv64 and friends have 32, enough for 4×4.
var portable = portableFor(runtime.GOARCH)

var (
	portable2x4 = &kernel{name: "portable", mr: 2, nr: 4, mc: 128, nc: 1024, micro: microPortable2x4}
	portable4x4 = &kernel{name: "portable", mr: 4, nr: 4, mc: 128, nc: 1024, micro: microPortable4x4}
)

func portableFor(goarch string) *kernel {
	switch goarch {
	case "amd64", "386":
		return portable2x4
	}
	return portable4x4
}

func microPortable2x4(kc int, ap, bp, cp *float32, ldb, ldc int, alpha, beta float32) {
	a := unsafe.Slice(ap, kc*2)
	b := unsafe.Slice(bp, (kc-1)*ldb+4)
	var c00, c01, c02, c03 float32
	var c10, c11, c12, c13 float32
	for p := 0; p < kc; p++ {
		bb := b[p*ldb : p*ldb+4 : p*ldb+4]
		b0, b1, b2, b3 := bb[0], bb[1], bb[2], bb[3]
		aa := a[p*2 : p*2+2 : p*2+2]
		a0, a1 := aa[0], aa[1]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
	}
	c := unsafe.Slice(cp, ldc+4)
	update4(c[0:4:4], c00, c01, c02, c03, alpha, beta)
	update4(c[ldc:ldc+4:ldc+4], c10, c11, c12, c13, alpha, beta)
}

func microPortable4x4(kc int, ap, bp, cp *float32, ldb, ldc int, alpha, beta float32) {
	a := unsafe.Slice(ap, kc*4)
	b := unsafe.Slice(bp, (kc-1)*ldb+4)
	var c00, c01, c02, c03 float32
	var c10, c11, c12, c13 float32
	var c20, c21, c22, c23 float32
	var c30, c31, c32, c33 float32
	for p := 0; p < kc; p++ {
		bb := b[p*ldb : p*ldb+4 : p*ldb+4]
		b0, b1, b2, b3 := bb[0], bb[1], bb[2], bb[3]
		aa := a[p*4 : p*4+4 : p*4+4]
		a0 := aa[0]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		a1 := aa[1]
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a2 := aa[2]
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		a3 := aa[3]
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	c := unsafe.Slice(cp, 3*ldc+4)
	update4(c[0:4:4], c00, c01, c02, c03, alpha, beta)
	update4(c[ldc:ldc+4:ldc+4], c10, c11, c12, c13, alpha, beta)
	update4(c[2*ldc:2*ldc+4:2*ldc+4], c20, c21, c22, c23, alpha, beta)
	update4(c[3*ldc:3*ldc+4:3*ldc+4], c30, c31, c32, c33, alpha, beta)
}

// update4 writes one row of a tile: c = alpha*acc + beta*c, or alpha*acc
// without reading c when beta is zero (so NaN already in C is ignored).
func update4(c []float32, s0, s1, s2, s3, alpha, beta float32) {
	c = c[:4]
	if beta == 0 {
		c[0], c[1], c[2], c[3] = alpha*s0, alpha*s1, alpha*s2, alpha*s3
		return
	}
	c[0] = alpha*s0 + beta*c[0]
	c[1] = alpha*s1 + beta*c[1]
	c[2] = alpha*s2 + beta*c[2]
	c[3] = alpha*s3 + beta*c[3]
}
