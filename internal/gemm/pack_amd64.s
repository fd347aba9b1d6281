//go:build amd64 && !purego

#include "textflag.h"

// TRANSPOSE8_BLOCK transposes the 8×8 block at SI (rows 0-3) and R11
// (rows 4-7), rows R8 bytes apart (R10 = 3·R8), into DI (rows 0-3) and R13
// (rows 4-7), rows R9 bytes apart (R12 = 3·R9). Rows r and r+4 are loaded
// into the two 128-bit lanes of one register, so two in-lane shuffle
// stages finish the transpose without a cross-lane one: after them, output
// row p holds rows 0-3 in its low lane and 4-7 in its high lane.
#define TRANSPOSE8_BLOCK \
	VMOVUPS     (SI), X0; \
	VINSERTF128 $1, (R11), Y0, Y0; \
	VMOVUPS     (SI)(R8*1), X1; \
	VINSERTF128 $1, (R11)(R8*1), Y1, Y1; \
	VMOVUPS     (SI)(R8*2), X2; \
	VINSERTF128 $1, (R11)(R8*2), Y2, Y2; \
	VMOVUPS     (SI)(R10*1), X3; \
	VINSERTF128 $1, (R11)(R10*1), Y3, Y3; \
	VMOVUPS     16(SI), X4; \
	VINSERTF128 $1, 16(R11), Y4, Y4; \
	VMOVUPS     16(SI)(R8*1), X5; \
	VINSERTF128 $1, 16(R11)(R8*1), Y5, Y5; \
	VMOVUPS     16(SI)(R8*2), X6; \
	VINSERTF128 $1, 16(R11)(R8*2), Y6, Y6; \
	VMOVUPS     16(SI)(R10*1), X7; \
	VINSERTF128 $1, 16(R11)(R10*1), Y7, Y7; \
	VUNPCKLPS Y1, Y0, Y8; \
	VUNPCKHPS Y1, Y0, Y9; \
	VUNPCKLPS Y3, Y2, Y10; \
	VUNPCKHPS Y3, Y2, Y11; \
	VSHUFPS   $0x44, Y10, Y8, Y0; \
	VSHUFPS   $0xEE, Y10, Y8, Y1; \
	VSHUFPS   $0x44, Y11, Y9, Y2; \
	VSHUFPS   $0xEE, Y11, Y9, Y3; \
	VMOVUPS   Y0, (DI); \
	VMOVUPS   Y1, (DI)(R9*1); \
	VMOVUPS   Y2, (DI)(R9*2); \
	VMOVUPS   Y3, (DI)(R12*1); \
	VUNPCKLPS Y5, Y4, Y8; \
	VUNPCKHPS Y5, Y4, Y9; \
	VUNPCKLPS Y7, Y6, Y10; \
	VUNPCKHPS Y7, Y6, Y11; \
	VSHUFPS   $0x44, Y10, Y8, Y4; \
	VSHUFPS   $0xEE, Y10, Y8, Y5; \
	VSHUFPS   $0x44, Y11, Y9, Y6; \
	VSHUFPS   $0xEE, Y11, Y9, Y7; \
	VMOVUPS   Y4, (R13); \
	VMOVUPS   Y5, (R13)(R9*1); \
	VMOVUPS   Y6, (R13)(R9*2); \
	VMOVUPS   Y7, (R13)(R12*1)

// func transpose8(dst *float32, ldd int, src *float32, lds int, blocks int)
//
// Transposes blocks consecutive 8×8 blocks: dst[p*ldd+r] = src[r*lds+p] for
// r < 8, p < 8*blocks. Packing is a transpose whenever the packed operand
// is stored with k contiguous (A not transposed, B transposed); done one
// float at a time it costs as much as the multiplication for a batch of 32.
//	SI  src rows 0-3   R11 src rows 4-7   R8  lds bytes   R10 3*lds bytes
//	DI  dst rows 0-3   R13 dst rows 4-7   R9  ldd bytes   R12 3*ldd bytes
TEXT ·transpose8(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R9
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), R8
	MOVQ blocks+32(FP), CX
	SHLQ $2, R8
	SHLQ $2, R9
	LEAQ (R8)(R8*2), R10
	LEAQ (R9)(R9*2), R12
	LEAQ (SI)(R8*4), R11
	LEAQ (DI)(R9*4), R13
	TESTQ CX, CX
	JZ    done

loop:
	TRANSPOSE8_BLOCK
	ADDQ $32, SI
	ADDQ $32, R11
	LEAQ (DI)(R9*8), DI
	LEAQ (R13)(R9*8), R13
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET

// func transpose8Down(dst *float32, ldd int, src *float32, blocks int)
//
// Transposes blocks 8×8 blocks stacked down a matrix of 8 columns into
// blocks side by side: dst[r*ldd+p] = src[p*8+r] for r < 8, p < 8*blocks
// (the inverse of transpose8 with ldd 8).
TEXT ·transpose8Down(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R9
	MOVQ src+16(FP), SI
	MOVQ blocks+24(FP), CX
	MOVQ $32, R8
	SHLQ $2, R9
	MOVQ $96, R10
	LEAQ (R9)(R9*2), R12
	LEAQ 128(SI), R11
	LEAQ (DI)(R9*4), R13
	TESTQ CX, CX
	JZ    ddone

dloop:
	TRANSPOSE8_BLOCK
	ADDQ $256, SI
	ADDQ $256, R11
	ADDQ $32, DI
	ADDQ $32, R13
	DECQ CX
	JNZ  dloop

ddone:
	VZEROUPPER
	RET

// func copyRows(dst *float32, ldd int, src *float32, lds int, rows int, width int)
//
// Copies rows runs of width floats (a multiple of 8): dst[r*ldd+j] =
// src[r*lds+j]. Packing a non-transposed operand is kc copies of one
// register-tile row each, too short for memmove's call overhead (the Go
// compiler calls memmove even for a [16]float32 assignment).
TEXT ·copyRows(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R9
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), R8
	MOVQ rows+32(FP), CX
	MOVQ width+40(FP), DX
	SHLQ $2, R8
	SHLQ $2, R9
	SHRQ $3, DX // 8-float chunks per row
	TESTQ CX, CX
	JZ    copydone
	TESTQ DX, DX
	JZ    copydone
	CMPQ  DX, $4
	JEQ   rows32
	CMPQ  DX, $2
	JEQ   rows16

rowloop:
	XORQ AX, AX
	MOVQ DX, BX

chunkloop:
	VMOVUPS (SI)(AX*1), Y0
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ    $32, AX
	DECQ    BX
	JNZ     chunkloop
	ADDQ    R8, SI
	ADDQ    R9, DI
	DECQ    CX
	JNZ     rowloop
	JMP     copydone

rows16: // width 16, the AVX2 B panel
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    R8, SI
	ADDQ    R9, DI
	DECQ    CX
	JNZ     rows16
	JMP     copydone

rows32: // width 32, the AVX-512 B panel
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    R8, SI
	ADDQ    R9, DI
	DECQ    CX
	JNZ     rows32

copydone:
	VZEROUPPER
	RET

// func transpose6(dst *float32, ldd int, src *float32, lds int, blocks int)
//
// transpose8 for 6 rows (the AVX2 kernel's A panels): dst[p*ldd+r] =
// src[r*lds+p] for r < 6, p < 8*blocks, each output row 6 floats (16 bytes
// from the low lane, 8 from the high). Rows 4 and 5 sit in the high lanes
// of the first two registers; the high lanes of the other two stay zero
// and are never stored.
//	SI  src rows 0-3   R11 src rows 4-5   R8  lds bytes   R10 3*lds bytes
//	DI  dst row        R9  ldd bytes
#define STORE6(y, x) \
	VMOVUPS      x, (DI);      \
	VEXTRACTF128 $1, y, X12;   \
	VMOVLPS      X12, 16(DI);  \
	ADDQ         R9, DI

TEXT ·transpose6(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R9
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), R8
	MOVQ blocks+32(FP), CX
	SHLQ $2, R8
	SHLQ $2, R9
	LEAQ (R8)(R8*2), R10
	LEAQ (SI)(R8*4), R11
	TESTQ CX, CX
	JZ    done6

loop6:
	VMOVUPS     (SI), X0
	VINSERTF128 $1, (R11), Y0, Y0
	VMOVUPS     (SI)(R8*1), X1
	VINSERTF128 $1, (R11)(R8*1), Y1, Y1
	VMOVUPS     (SI)(R8*2), X2
	VMOVUPS     (SI)(R10*1), X3
	VMOVUPS     16(SI), X4
	VINSERTF128 $1, 16(R11), Y4, Y4
	VMOVUPS     16(SI)(R8*1), X5
	VINSERTF128 $1, 16(R11)(R8*1), Y5, Y5
	VMOVUPS     16(SI)(R8*2), X6
	VMOVUPS     16(SI)(R10*1), X7

	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VSHUFPS   $0x44, Y10, Y8, Y0
	VSHUFPS   $0xEE, Y10, Y8, Y1
	VSHUFPS   $0x44, Y11, Y9, Y2
	VSHUFPS   $0xEE, Y11, Y9, Y3
	STORE6(Y0, X0)
	STORE6(Y1, X1)
	STORE6(Y2, X2)
	STORE6(Y3, X3)

	VUNPCKLPS Y5, Y4, Y8
	VUNPCKHPS Y5, Y4, Y9
	VUNPCKLPS Y7, Y6, Y10
	VUNPCKHPS Y7, Y6, Y11
	VSHUFPS   $0x44, Y10, Y8, Y4
	VSHUFPS   $0xEE, Y10, Y8, Y5
	VSHUFPS   $0x44, Y11, Y9, Y6
	VSHUFPS   $0xEE, Y11, Y9, Y7
	STORE6(Y4, X4)
	STORE6(Y5, X5)
	STORE6(Y6, X6)
	STORE6(Y7, X7)

	ADDQ $32, SI
	ADDQ $32, R11
	DECQ CX
	JNZ  loop6

done6:
	VZEROUPPER
	RET
