//go:build amd64 && !purego

#include "textflag.h"

// STEP adds grad[q]·(the window's 5 rows) into a0..a4 for the q at
// byte offset off of grad (R8) and pos (R9), with g as the broadcast.
#define STEP(off, g, a0, a1, a2, a3, a4) \
	MOVLQSX      off(R9), AX;        \
	SUBQ         R10, AX;            \
	LEAQ         (SI)(AX*4), BX;     \
	LEAQ         (BX)(DX*2), R11;    \
	VBROADCASTSS off(R8), g;         \
	VFMADD231PS  (BX), g, a0;        \
	VFMADD231PS  (BX)(DX*1), g, a1;  \
	VFMADD231PS  (R11), g, a2;       \
	VFMADD231PS  (R11)(DX*1), g, a3; \
	VFMADD231PS  (R11)(DX*2), g, a4

// func pooledGrad5AVX2(acc *float32, x *float32, pitch int, grad *float32, pos *int32, n int, sub int)
// For q < n, rows r < 5, lanes l < 8:
//
//	acc[8r + l] += grad[q] · x[pos[q] − sub + r·pitch + l]
//
// with fused multiply-adds: the even q into acc's running sums (Y0–Y4),
// the odd q into sums of their own from zero (Y6–Y10), added to acc at the
// end, so two chains per row hide the multiply-add's latency. A 5×5
// window's weight-gradient contributions (lanes 5–7 collect values past
// the window, which the caller drops). pitch is in floats.
TEXT ·pooledGrad5AVX2(SB), NOSPLIT, $0-56
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ pitch+16(FP), DX
	SHLQ $2, DX
	MOVQ grad+24(FP), R8
	MOVQ pos+32(FP), R9
	MOVQ n+40(FP), CX
	MOVQ sub+48(FP), R10
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VXORPS  Y6, Y6, Y6
	VXORPS  Y7, Y7, Y7
	VXORPS  Y8, Y8, Y8
	VXORPS  Y9, Y9, Y9
	VXORPS  Y10, Y10, Y10
	MOVQ    CX, R12
	SHRQ    $1, R12
	JZ      tail

pair:
	STEP(0, Y5, Y0, Y1, Y2, Y3, Y4)
	STEP(4, Y11, Y6, Y7, Y8, Y9, Y10)
	ADDQ         $8, R8
	ADDQ         $8, R9
	DECQ         R12
	JNZ          pair

tail:
	TESTQ        $1, CX
	JZ           done
	STEP(0, Y5, Y0, Y1, Y2, Y3, Y4)

done:
	VADDPS  Y6, Y0, Y0
	VADDPS  Y7, Y1, Y1
	VADDPS  Y8, Y2, Y2
	VADDPS  Y9, Y3, Y3
	VADDPS  Y10, Y4, Y4
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VZEROUPPER
	RET
