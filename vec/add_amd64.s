//go:build amd64 && !purego

#include "textflag.h"

// func addToAVX2(dst, x *float32, n int)
// dst[i] += x[i] for i < n, n a multiple of 16.
TEXT ·addToAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	VMOVUPS (DI)(AX*4), Y0
	VMOVUPS 32(DI)(AX*4), Y1
	VADDPS (SI)(AX*4), Y0, Y0
	VADDPS 32(SI)(AX*4), Y1, Y1
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	ADDQ $16, AX
	JMP loop
done:
	VZEROUPPER
	RET
