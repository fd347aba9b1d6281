package gemm

import "unsafe"

// portable is the pure-Go kernel: a 4×4 register tile. Sixteen scalar
// accumulators plus one row of B and one element of A is what the Go
// compiler keeps in registers on amd64 and arm64 without spilling in the
// inner loop; wider tiles measured slower. It is the fallback on CPUs
// without AVX2/FMA, on other architectures and under the purego build tag.
var portable = &kernel{
	name: "portable",
	mr:   4, nr: 4,
	mc: 128, nc: 1024,
	micro: microPortable,
}

func microPortable(kc int, ap, bp, cp *float32, ldc int, alpha, beta float32) {
	a := unsafe.Slice(ap, kc*4)
	b := unsafe.Slice(bp, kc*4)
	var c00, c01, c02, c03 float32
	var c10, c11, c12, c13 float32
	var c20, c21, c22, c23 float32
	var c30, c31, c32, c33 float32
	for len(a) >= 4 && len(b) >= 4 {
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		a0 := a[0]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		a1 := a[1]
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a2 := a[2]
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		a3 := a[3]
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
		a, b = a[4:], b[4:]
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
