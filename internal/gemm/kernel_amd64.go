//go:build amd64 && !purego

package gemm

import "github.com/trellis-fl/trellis/internal/cpu"

// microAVX2 is the 6×16 AVX2/FMA micro-kernel (kernel_avx2_amd64.s), with
// the contract of kernel.micro.
//
//go:noescape
func microAVX2(kc int, a, b, c *float32, ldb, ldc int, alpha, beta float32)

// microAVX2Rows is microAVX2 writing only the first rows rows of the tile
// (kernel.microRows).
//
//go:noescape
func microAVX2Rows(kc int, a, b, c *float32, ldb, ldc int, alpha, beta float32, rows int)

// microAVX2Half is the 6×8 variant of microAVX2, for B panels of at most 8
// columns.
//
//go:noescape
func microAVX2Half(kc int, a, b, c *float32, ldb, ldc int, alpha, beta float32)

// microAVX2A is microAVX2 with A read in place at stride lda (the
// contract of kernel.microA).
//
//go:noescape
func microAVX2A(kc int, a *float32, lda int, b, c *float32, ldb, ldc int, alpha, beta float32)

// microAVX2G is microAVX2 with B gathered through row offsets (the
// contract of kernel.microG).
//
//go:noescape
func microAVX2G(kc int, a *float32, rows *int, b, c *float32, ldc int, alpha, beta float32)

// microAVX2AG and microAVX2AGHalf are microAVX2A and its 6×8 half with
// A's rows gathered through offsets (kernel.microAG).
//
//go:noescape
func microAVX2AG(kc int, a *float32, rows *int, b, c *float32, ldb, ldc int, alpha, beta float32)

//go:noescape
func microAVX2AGHalf(kc int, a *float32, rows *int, b, c *float32, ldb, ldc int, alpha, beta float32)

// avx2 blocks for a 6×16 tile: the A block (120×256 floats = 120 KiB) sits
// in L2 with room for the B panel stream; nc bounds the packed B block to
// 256×1024 floats = 1 MiB, read from L2/L3 by every row block. (A larger nc
// saves only re-packing A, m×k per 1024 columns, and every Engine holds a
// B buffer, one per model in a simulation of many nodes.)
var avx2 = &kernel{
	name: "avx2",
	mr:   6, nr: 16,
	mc: 120, nc: 1024,
	micro:       microAVX2,
	microRows:   microAVX2Rows,
	half:        microAVX2Half,
	microA:      microAVX2A,
	microG:      microAVX2G,
	microAG:     microAVX2AG,
	microAGHalf: microAVX2AGHalf,

	transpose8: transpose8,
	transpose6: transpose6,
	copyRows:   copyRows,
}

// microAVX512 is the 8×32 AVX-512 micro-kernel (kernel_avx512_amd64.s).
//
//go:noescape
func microAVX512(kc int, a, b, c *float32, ldb, ldc int, alpha, beta float32)

// microAVX512Rows is microAVX512 writing only the first rows rows of the
// tile (kernel.microRows).
//
//go:noescape
func microAVX512Rows(kc int, a, b, c *float32, ldb, ldc int, alpha, beta float32, rows int)

// microAVX512Half is the 8×16 variant of microAVX512, for B panels of at
// most 16 columns.
//
//go:noescape
func microAVX512Half(kc int, a, b, c *float32, ldb, ldc int, alpha, beta float32)

// microAVX512A is microAVX512 with A read in place at stride lda.
//
//go:noescape
func microAVX512A(kc int, a *float32, lda int, b, c *float32, ldb, ldc int, alpha, beta float32)

// microAVX512G is microAVX512 with B gathered through row offsets.
//
//go:noescape
func microAVX512G(kc int, a *float32, rows *int, b, c *float32, ldc int, alpha, beta float32)

// microAVX512AG and microAVX512AGHalf are microAVX512A and its 8×16 half
// with A's rows gathered (kernel.microAG). They need B packed (ldb = nr),
// which it always is for gathered A.
//
//go:noescape
func microAVX512AG(kc int, a *float32, rows *int, b, c *float32, ldb, ldc int, alpha, beta float32)

//go:noescape
func microAVX512AGHalf(kc int, a *float32, rows *int, b, c *float32, ldb, ldc int, alpha, beta float32)

// avx512 blocks for an 8×32 tile: A block 96×256 floats (96 KiB) in L2, B
// block as for avx2.
var avx512 = &kernel{
	name: "avx512",
	mr:   8, nr: 32,
	mc: 96, nc: 1024,
	micro:       microAVX512,
	microRows:   microAVX512Rows,
	half:        microAVX512Half,
	microA:      microAVX512A,
	microG:      microAVX512G,
	microAG:     microAVX512AG,
	microAGHalf: microAVX512AGHalf,

	transpose16: transpose16,
	transpose8:  transpose8,
	copyRows:    copyRows,
}

// transpose8 is the AVX 8×8 transpose of pack_amd64.s (a transposeFunc).
//
//go:noescape
func transpose8(dst *float32, ldd int, src *float32, lds int, blocks int)

// transpose8Down is the AVX transpose of 8×8 blocks stacked down an
// 8-column matrix into blocks side by side (pack_amd64.s), Transpose8Down's
// fast path.
//
//go:noescape
func transpose8Down(dst *float32, ldd int, src *float32, blocks int)

// transpose6 is the AVX transpose of 6 rows by 8-column blocks of
// pack_amd64.s (a transposeFunc for r < 6), for the AVX2 kernel's A panels.
//
//go:noescape
func transpose6(dst *float32, ldd int, src *float32, lds int, blocks int)

// transpose16 is the AVX-512 16×16 transpose of pack_avx512_amd64.s (a
// transposeFunc).
//
//go:noescape
func transpose16(dst *float32, ldd int, src *float32, lds int, blocks int)

// copyRows is the AVX strided copy of pack_amd64.s (a copyFunc).
//
//go:noescape
func copyRows(dst *float32, ldd int, src *float32, lds int, rows int, width int)

var hasAVX2, hasAVX512 = cpu.AVX2FMA, cpu.AVX512

func defaultKernel() *kernel {
	switch {
	case hasAVX512:
		return avx512
	case hasAVX2:
		return avx2
	}
	return portable
}

// available lists the kernels this machine can run, portable first.
func available() []*kernel {
	ks := []*kernel{portable}
	if hasAVX2 {
		ks = append(ks, avx2)
	}
	if hasAVX512 {
		ks = append(ks, avx512)
	}
	return ks
}
