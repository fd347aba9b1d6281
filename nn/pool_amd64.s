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

// func pool2x2AVX2(top, bot, out *float32, idx *int32, groups int, start, w int32)
// For g < groups and lanes l < 8, output j = 8g + l: the maximum of the 2×2
// window top[2j], top[2j+1], bot[2j], bot[2j+1] (compared by orderKey, first
// maximum wins) into out[j], and its offset start + 2j + {0, 1, w, w+1} into
// idx[j]. Lanes are processed in the order 0 1 4 5 2 3 6 7 (what VSHUFPS
// leaves) and put back in order before the stores.
TEXT ·pool2x2AVX2(SB), NOSPLIT, $0-48
	MOVQ top+0(FP), SI
	MOVQ bot+8(FP), DX
	MOVQ out+16(FP), DI
	MOVQ idx+24(FP), R8
	MOVQ groups+32(FP), CX
	// Y14 = 1, Y13 = w, Y12 = w+1 (window offsets 1, 2, 3).
	VPCMPEQD     Y14, Y14, Y14
	VPSRLD       $31, Y14, Y14
	MOVL         w+44(FP), AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13
	VPADDD       Y14, Y13, Y12
	// Y15 = start + 2·(0 1 4 5 2 3 6 7), the top-left offsets of the lanes.
	MOVL         start+40(FP), AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	VMOVDQU      ·poolLanes(SB), Y0
	VPADDD       Y0, Y15, Y15

loop:
	TESTQ     CX, CX
	JZ        done
	VMOVUPS   (SI), Y0
	VMOVUPS   32(SI), Y1
	VMOVUPS   (DX), Y2
	VMOVUPS   32(DX), Y3
	VSHUFPS   $0x88, Y1, Y0, Y4 // window position 0 (top left)
	VSHUFPS   $0xDD, Y1, Y0, Y5 // 1 (top right)
	VSHUFPS   $0x88, Y3, Y2, Y6 // 2 (bottom left)
	VSHUFPS   $0xDD, Y3, Y2, Y7 // 3 (bottom right)
	KEY(Y4, Y8, Y11)
	VPXOR     Y9, Y9, Y9
	KEY(Y5, Y10, Y11)
	PICK(Y5, Y10, Y14)
	KEY(Y6, Y10, Y11)
	PICK(Y6, Y10, Y13)
	KEY(Y7, Y10, Y11)
	PICK(Y7, Y10, Y12)
	VPADDD    Y15, Y9, Y9
	VPERMPD   $0xD8, Y4, Y4 // lanes back in order
	VPERMQ    $0xD8, Y9, Y9
	VMOVUPS   Y4, (DI)
	VMOVDQU   Y9, (R8)
	VPSLLD    $4, Y14, Y0 // 16 = 2·8 inputs further on
	VPADDD    Y0, Y15, Y15
	ADDQ      $64, SI
	ADDQ      $64, DX
	ADDQ      $32, DI
	ADDQ      $32, R8
	DECQ      CX
	JMP       loop

done:
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
