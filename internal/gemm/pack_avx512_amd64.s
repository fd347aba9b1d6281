//go:build amd64 && !purego

#include "textflag.h"

// func transpose16(dst *float32, ldd int, src *float32, lds int, blocks int)
//
// Transposes blocks consecutive 16×16 blocks with AVX-512: dst[p*ldd+r] =
// src[r*lds+p] for r < 16, p < 16*blocks. It serves the same packing as
// transpose8 with a quarter of the load and store instructions and two
// thirds of the shuffles per element. The three stages interleave pairs of
// rows (32-bit), pairs of pairs (64-bit), then 128-bit lanes across four
// registers (VSHUFF32X4 twice).
//	SI  src block   R8 lds bytes   R10 3*lds bytes   AX  src row-group pointer
//	DI  dst block   R9 ldd bytes   R12 3*ldd bytes   DX  dst row-group pointer
TEXT ·transpose16(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R9
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), R8
	MOVQ blocks+32(FP), CX
	SHLQ $2, R8
	SHLQ $2, R9
	LEAQ (R8)(R8*2), R10
	LEAQ (R9)(R9*2), R12
	TESTQ CX, CX
	JZ    done16

loop16:
	// Rows 0-15 of the block into Z0-Z15.
	VMOVUPS (SI), Z0
	VMOVUPS (SI)(R8*1), Z1
	VMOVUPS (SI)(R8*2), Z2
	VMOVUPS (SI)(R10*1), Z3
	LEAQ    (SI)(R8*4), AX
	VMOVUPS (AX), Z4
	VMOVUPS (AX)(R8*1), Z5
	VMOVUPS (AX)(R8*2), Z6
	VMOVUPS (AX)(R10*1), Z7
	LEAQ    (AX)(R8*4), AX
	VMOVUPS (AX), Z8
	VMOVUPS (AX)(R8*1), Z9
	VMOVUPS (AX)(R8*2), Z10
	VMOVUPS (AX)(R10*1), Z11
	LEAQ    (AX)(R8*4), AX
	VMOVUPS (AX), Z12
	VMOVUPS (AX)(R8*1), Z13
	VMOVUPS (AX)(R8*2), Z14
	VMOVUPS (AX)(R10*1), Z15

	// Stage 1: 32-bit interleave of row pairs.
	VUNPCKLPS Z1, Z0, Z16
	VUNPCKHPS Z1, Z0, Z17
	VUNPCKLPS Z3, Z2, Z18
	VUNPCKHPS Z3, Z2, Z19
	VUNPCKLPS Z5, Z4, Z20
	VUNPCKHPS Z5, Z4, Z21
	VUNPCKLPS Z7, Z6, Z22
	VUNPCKHPS Z7, Z6, Z23
	VUNPCKLPS Z9, Z8, Z24
	VUNPCKHPS Z9, Z8, Z25
	VUNPCKLPS Z11, Z10, Z26
	VUNPCKHPS Z11, Z10, Z27
	VUNPCKLPS Z13, Z12, Z28
	VUNPCKHPS Z13, Z12, Z29
	VUNPCKLPS Z15, Z14, Z30
	VUNPCKHPS Z15, Z14, Z31

	// Stage 2: 64-bit interleave; Z(4g+j) holds rows 4g..4g+3 of columns
	// j, j+4, j+8, j+12 (one per 128-bit lane).
	VUNPCKLPD Z18, Z16, Z0
	VUNPCKHPD Z18, Z16, Z1
	VUNPCKLPD Z19, Z17, Z2
	VUNPCKHPD Z19, Z17, Z3
	VUNPCKLPD Z22, Z20, Z4
	VUNPCKHPD Z22, Z20, Z5
	VUNPCKLPD Z23, Z21, Z6
	VUNPCKHPD Z23, Z21, Z7
	VUNPCKLPD Z26, Z24, Z8
	VUNPCKHPD Z26, Z24, Z9
	VUNPCKLPD Z27, Z25, Z10
	VUNPCKHPD Z27, Z25, Z11
	VUNPCKLPD Z30, Z28, Z12
	VUNPCKHPD Z30, Z28, Z13
	VUNPCKLPD Z31, Z29, Z14
	VUNPCKHPD Z31, Z29, Z15

	// Stage 3a: pair lanes of row groups (0,1) and (2,2) for each j.
	VSHUFF32X4 $0x44, Z4, Z0, Z16
	VSHUFF32X4 $0xEE, Z4, Z0, Z17
	VSHUFF32X4 $0x44, Z12, Z8, Z18
	VSHUFF32X4 $0xEE, Z12, Z8, Z19
	VSHUFF32X4 $0x44, Z5, Z1, Z20
	VSHUFF32X4 $0xEE, Z5, Z1, Z21
	VSHUFF32X4 $0x44, Z13, Z9, Z22
	VSHUFF32X4 $0xEE, Z13, Z9, Z23
	VSHUFF32X4 $0x44, Z6, Z2, Z24
	VSHUFF32X4 $0xEE, Z6, Z2, Z25
	VSHUFF32X4 $0x44, Z14, Z10, Z26
	VSHUFF32X4 $0xEE, Z14, Z10, Z27
	VSHUFF32X4 $0x44, Z7, Z3, Z28
	VSHUFF32X4 $0xEE, Z7, Z3, Z29
	VSHUFF32X4 $0x44, Z15, Z11, Z30
	VSHUFF32X4 $0xEE, Z15, Z11, Z31

	// Stage 3b: output column c = j + 4L. For j: (w0,w1,w2,w3) =
	// (Z16,Z17,Z18,Z19) for j=0, (Z20..Z23) j=1, (Z24..Z27) j=2, (Z28..Z31) j=3.
	VSHUFF32X4 $0x88, Z18, Z16, Z0  // col 0
	VSHUFF32X4 $0xDD, Z18, Z16, Z4  // col 4
	VSHUFF32X4 $0x88, Z19, Z17, Z8  // col 8
	VSHUFF32X4 $0xDD, Z19, Z17, Z12 // col 12
	VSHUFF32X4 $0x88, Z22, Z20, Z1  // col 1
	VSHUFF32X4 $0xDD, Z22, Z20, Z5  // col 5
	VSHUFF32X4 $0x88, Z23, Z21, Z9  // col 9
	VSHUFF32X4 $0xDD, Z23, Z21, Z13 // col 13
	VSHUFF32X4 $0x88, Z26, Z24, Z2  // col 2
	VSHUFF32X4 $0xDD, Z26, Z24, Z6  // col 6
	VSHUFF32X4 $0x88, Z27, Z25, Z10 // col 10
	VSHUFF32X4 $0xDD, Z27, Z25, Z14 // col 14
	VSHUFF32X4 $0x88, Z30, Z28, Z3  // col 3
	VSHUFF32X4 $0xDD, Z30, Z28, Z7  // col 7
	VSHUFF32X4 $0x88, Z31, Z29, Z11 // col 11
	VSHUFF32X4 $0xDD, Z31, Z29, Z15 // col 15

	VMOVUPS Z0, (DI)
	VMOVUPS Z1, (DI)(R9*1)
	VMOVUPS Z2, (DI)(R9*2)
	VMOVUPS Z3, (DI)(R12*1)
	LEAQ    (DI)(R9*4), DX
	VMOVUPS Z4, (DX)
	VMOVUPS Z5, (DX)(R9*1)
	VMOVUPS Z6, (DX)(R9*2)
	VMOVUPS Z7, (DX)(R12*1)
	LEAQ    (DX)(R9*4), DX
	VMOVUPS Z8, (DX)
	VMOVUPS Z9, (DX)(R9*1)
	VMOVUPS Z10, (DX)(R9*2)
	VMOVUPS Z11, (DX)(R12*1)
	LEAQ    (DX)(R9*4), DX
	VMOVUPS Z12, (DX)
	VMOVUPS Z13, (DX)(R9*1)
	VMOVUPS Z14, (DX)(R9*2)
	VMOVUPS Z15, (DX)(R12*1)

	ADDQ $64, SI
	LEAQ (DX)(R9*4), DI
	DECQ CX
	JNZ  loop16

done16:
	VZEROUPPER
	RET
