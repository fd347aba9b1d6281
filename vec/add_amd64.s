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

// func widenScaleAVX2(acc *float64, w float64, x *float32, n int)
// acc[i] = w * float64(x[i]) for i < n, n a multiple of 16.
TEXT ·widenScaleAVX2(SB), NOSPLIT, $0-32
	MOVQ         acc+0(FP), DI
	VBROADCASTSD w+8(FP), Y8
	MOVQ         x+16(FP), SI
	MOVQ         n+24(FP), CX
	XORQ         AX, AX
scaleloop:
	CMPQ      AX, CX
	JGE       scaledone
	VCVTPS2PD (SI)(AX*4), Y0
	VCVTPS2PD 16(SI)(AX*4), Y1
	VCVTPS2PD 32(SI)(AX*4), Y2
	VCVTPS2PD 48(SI)(AX*4), Y3
	VMULPD    Y0, Y8, Y0 // w·x, in the scalar code's operand order
	VMULPD    Y1, Y8, Y1
	VMULPD    Y2, Y8, Y2
	VMULPD    Y3, Y8, Y3
	VMOVUPD   Y0, (DI)(AX*8)
	VMOVUPD   Y1, 32(DI)(AX*8)
	VMOVUPD   Y2, 64(DI)(AX*8)
	VMOVUPD   Y3, 96(DI)(AX*8)
	ADDQ      $16, AX
	JMP       scaleloop
scaledone:
	VZEROUPPER
	RET

// func widenAxpyAVX2(acc *float64, w float64, x *float32, n int)
// acc[i] += w * float64(x[i]) for i < n, n a multiple of 16: a rounded
// product, then a rounded sum (no FMA), as the scalar Go computes it.
TEXT ·widenAxpyAVX2(SB), NOSPLIT, $0-32
	MOVQ         acc+0(FP), DI
	VBROADCASTSD w+8(FP), Y8
	MOVQ         x+16(FP), SI
	MOVQ         n+24(FP), CX
	XORQ         AX, AX
axpyloop:
	CMPQ      AX, CX
	JGE       axpydone
	VCVTPS2PD (SI)(AX*4), Y0
	VCVTPS2PD 16(SI)(AX*4), Y1
	VCVTPS2PD 32(SI)(AX*4), Y2
	VCVTPS2PD 48(SI)(AX*4), Y3
	VMULPD    Y0, Y8, Y0
	VMULPD    Y1, Y8, Y1
	VMULPD    Y2, Y8, Y2
	VMULPD    Y3, Y8, Y3
	VMOVUPD   (DI)(AX*8), Y4
	VMOVUPD   32(DI)(AX*8), Y5
	VMOVUPD   64(DI)(AX*8), Y6
	VMOVUPD   96(DI)(AX*8), Y7
	VADDPD    Y4, Y0, Y4 // w·x + acc: the product is the first source,
	VADDPD    Y5, Y1, Y5 // whose NaN x86 keeps when both are NaN, as in
	VADDPD    Y6, Y2, Y6 // the compiled scalar loop (the test checks it)
	VADDPD    Y7, Y3, Y7
	VMOVUPD   Y4, (DI)(AX*8)
	VMOVUPD   Y5, 32(DI)(AX*8)
	VMOVUPD   Y6, 64(DI)(AX*8)
	VMOVUPD   Y7, 96(DI)(AX*8)
	ADDQ      $16, AX
	JMP       axpyloop
axpydone:
	VZEROUPPER
	RET

// func narrowAVX2(dst *float32, acc *float64, n int)
// dst[i] = float32(acc[i]) for i < n, n a multiple of 16, rounded to
// nearest even (the default MXCSR mode Go's conversion also uses).
TEXT ·narrowAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ acc+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
narrowloop:
	CMPQ       AX, CX
	JGE        narrowdone
	VCVTPD2PSY (SI)(AX*8), X0
	VCVTPD2PSY 32(SI)(AX*8), X1
	VCVTPD2PSY 64(SI)(AX*8), X2
	VCVTPD2PSY 96(SI)(AX*8), X3
	VMOVUPS    X0, (DI)(AX*4)
	VMOVUPS    X1, 16(DI)(AX*4)
	VMOVUPS    X2, 32(DI)(AX*4)
	VMOVUPS    X3, 48(DI)(AX*4)
	ADDQ       $16, AX
	JMP        narrowloop
narrowdone:
	VZEROUPPER
	RET

// func addConstAVX2(dst, x *float32, b float32, n int)
// dst[i] = x[i] + b for i < n, n a multiple of 16.
TEXT ·addConstAVX2(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	VBROADCASTSS b+16(FP), Y2
	MOVQ         n+24(FP), CX
	XORQ         AX, AX
constloop:
	CMPQ    AX, CX
	JGE     constdone
	VADDPS  (SI)(AX*4), Y2, Y0
	VADDPS  32(SI)(AX*4), Y2, Y1
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	ADDQ    $16, AX
	JMP     constloop
constdone:
	VZEROUPPER
	RET
