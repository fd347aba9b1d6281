//go:build amd64 && !purego

#include "textflag.h"

// func nonFiniteAVX2(x *float32, n int) bool
// Per lane: (bits & 0x7f800000) == 0x7f800000 marks Inf or NaN; the marks
// of 32 lanes a round are OR-ed into Y7, tested once at the end.
TEXT ·nonFiniteAVX2(SB), NOSPLIT, $0-17
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVL $0x7f800000, AX
	MOVD AX, X0
	VPBROADCASTD X0, Y0
	VPXOR Y7, Y7, Y7
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	VPAND (SI)(AX*4), Y0, Y1
	VPAND 32(SI)(AX*4), Y0, Y2
	VPAND 64(SI)(AX*4), Y0, Y3
	VPAND 96(SI)(AX*4), Y0, Y4
	VPCMPEQD Y0, Y1, Y1
	VPCMPEQD Y0, Y2, Y2
	VPCMPEQD Y0, Y3, Y3
	VPCMPEQD Y0, Y4, Y4
	VPOR Y1, Y2, Y1
	VPOR Y3, Y4, Y3
	VPOR Y1, Y7, Y7
	VPOR Y3, Y7, Y7
	ADDQ $32, AX
	JMP loop
done:
	VPTEST Y7, Y7
	SETNE ret+16(FP)
	VZEROUPPER
	RET
