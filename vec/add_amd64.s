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

// func reluAVX2(dst, x *float32, n int)
// dst[i] = x[i] with its bits cleared when the sign bit is set (negative
// values, −0 and negative NaNs become +0), n a multiple of 16.
TEXT ·reluAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
reluloop:
	CMPQ AX, CX
	JGE reludone
	VMOVDQU (SI)(AX*4), Y0
	VMOVDQU 32(SI)(AX*4), Y1
	VPSRAD $31, Y0, Y2
	VPSRAD $31, Y1, Y3
	VPANDN Y0, Y2, Y0 // ~sign-mask & x
	VPANDN Y1, Y3, Y1
	VMOVDQU Y0, (DI)(AX*4)
	VMOVDQU Y1, 32(DI)(AX*4)
	ADDQ $16, AX
	JMP reluloop
reludone:
	VZEROUPPER
	RET

// func reluGradAVX2(dx, dy, y *float32, n int)
// dx[i] = dy[i] where y[i]'s bits are non-zero, else +0; n a multiple of 16.
TEXT ·reluGradAVX2(SB), NOSPLIT, $0-32
	MOVQ dx+0(FP), DI
	MOVQ dy+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	VPXOR Y7, Y7, Y7
	XORQ AX, AX
rgloop:
	CMPQ AX, CX
	JGE rgdone
	VPCMPEQD (DX)(AX*4), Y7, Y2   // all ones where y == 0
	VPCMPEQD 32(DX)(AX*4), Y7, Y3
	VPANDN (SI)(AX*4), Y2, Y0     // ~zero-mask & dy
	VPANDN 32(SI)(AX*4), Y3, Y1
	VMOVDQU Y0, (DI)(AX*4)
	VMOVDQU Y1, 32(DI)(AX*4)
	ADDQ $16, AX
	JMP rgloop
rgdone:
	VZEROUPPER
	RET
