//go:build amd64 && !purego

#include "textflag.h"

// KEY computes orderKey (pool.go) of the 8 floats in v into k, with tmp as
// scratch: k = (b ^ (s >>> 1)) − s, b = v's bits, s = b >> 31 (arithmetic).
#define KEY(v, k, tmp) \
	VPSRAD $31, v, tmp; \
	VPSRLD $1, tmp, k;  \
	VPXOR  v, k, k;     \
	VPSUBD tmp, k, k

// PICK replaces the running winner (value Y4, key Y8, offset Y9) with the
// candidate (value v, key k) where the candidate's key is greater: pick in
// pool.go, lane by lane. off is the candidate's window offset.
#define PICK(v, k, off) \
	VPCMPGTD  Y8, k, Y11;       \
	VPBLENDVB Y11, k, Y8, Y8;   \
	VBLENDVPS Y11, v, Y4, Y4;   \
	VPBLENDVB Y11, off, Y9, Y9

// func pool2x2RowsAVX2(top, out *float32, idx *int32, rows, groups int, start, w, wo int32)
// For each of rows row pairs, and g < groups, lanes l < 8, output j = 8g+l:
// the maximum of the 2×2 window top[2j], top[2j+1], bot[2j], bot[2j+1]
// (compared by orderKey, first maximum wins; bot = top + w) into out[j],
// and its offset start + 2j + {0, 1, w, w+1} into idx[j]. Row pair r has
// its top row at top + 2w·r, its outputs at out + wo·r and idx + wo·r,
// and its offsets from start + 2w·r. A row's last group may run past the
// row into the next row's outputs, which the next row then overwrites, so
// rows run in order. Lanes are processed in the order 0 1 4 5 2 3 6 7
// (what VSHUFPS leaves) and put back in order before the stores.
TEXT ·pool2x2RowsAVX2(SB), NOSPLIT, $0-52
	MOVQ top+0(FP), SI
	MOVQ out+8(FP), DI
	MOVQ idx+16(FP), R8
	MOVQ rows+24(FP), R9
	MOVLQSX w+44(FP), R10
	MOVLQSX wo+48(FP), R11
	MOVL start+40(FP), R12
	// Y14 = 1, Y13 = w, Y12 = w+1 (window offsets 1, 2, 3).
	VPCMPEQD     Y14, Y14, Y14
	VPSRLD       $31, Y14, Y14
	MOVL         R10, AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13
	VPADDD       Y14, Y13, Y12

row:
	TESTQ R9, R9
	JZ    rowsdone
	// Y15 = start + 2·(0 1 4 5 2 3 6 7) for this row pair.
	VMOVD        R12, X15
	VPBROADCASTD X15, Y15
	VMOVDQU      ·poolLanes(SB), Y0
	VPADDD       Y0, Y15, Y15
	MOVQ         groups+32(FP), CX
	LEAQ         (SI)(R10*4), DX // bottom row
	MOVQ         SI, R13
	MOVQ         DI, BX
	MOVQ         R8, AX

group:
	VMOVUPS   (R13), Y0
	VMOVUPS   32(R13), Y1
	VMOVUPS   (DX), Y2
	VMOVUPS   32(DX), Y3
	VSHUFPS   $0x88, Y1, Y0, Y4
	VSHUFPS   $0xDD, Y1, Y0, Y5
	VSHUFPS   $0x88, Y3, Y2, Y6
	VSHUFPS   $0xDD, Y3, Y2, Y7
	KEY(Y4, Y8, Y11)
	VPXOR     Y9, Y9, Y9
	KEY(Y5, Y10, Y11)
	PICK(Y5, Y10, Y14)
	KEY(Y6, Y10, Y11)
	PICK(Y6, Y10, Y13)
	KEY(Y7, Y10, Y11)
	PICK(Y7, Y10, Y12)
	VPADDD    Y15, Y9, Y9
	VPERMPD   $0xD8, Y4, Y4
	VPERMQ    $0xD8, Y9, Y9
	VMOVUPS   Y4, (BX)
	VMOVDQU   Y9, (AX)
	VPSLLD    $4, Y14, Y0
	VPADDD    Y0, Y15, Y15
	ADDQ      $64, R13
	ADDQ      $64, DX
	ADDQ      $32, BX
	ADDQ      $32, AX
	DECQ      CX
	JNZ       group

	// Next row pair: 2w inputs and wo outputs further on.
	LEAQ (SI)(R10*8), SI
	LEAQ (DI)(R11*4), DI
	LEAQ (R8)(R11*4), R8
	ADDL R10, R12
	ADDL R10, R12
	DECQ R9
	JMP  row

rowsdone:
	VZEROUPPER
	RET

// 2·(0 1 4 5 2 3 6 7) as int32.
DATA ·poolLanes+0(SB)/4, $0
DATA ·poolLanes+4(SB)/4, $2
DATA ·poolLanes+8(SB)/4, $8
DATA ·poolLanes+12(SB)/4, $10
DATA ·poolLanes+16(SB)/4, $4
DATA ·poolLanes+20(SB)/4, $6
DATA ·poolLanes+24(SB)/4, $12
DATA ·poolLanes+28(SB)/4, $14
GLOBL ·poolLanes(SB), RODATA|NOPTR, $32
