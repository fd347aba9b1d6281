//go:build amd64 && !purego

#include "textflag.h"

// Go's assembler lists FMA operands in reverse of Intel's:
// VFMADD231PS A, B, C  means  C = B*A + C;
// VFMADD213PS A, B, C  means  C = B*C + A;
// VFNMADD231PS A, B, C means  C = C - B*A.

// FLUSH_CONSTANTS loads Y6 = the |x| mask and Y7 = the smallest normal
// float32 (clobbers BX); FLUSH_V then sets each lane of v (Y5) whose
// magnitude is below it to +0 (clobbers Y8), as nn's flushDenormal does.
#define FLUSH_CONSTANTS \
	MOVL $0x7fffffff, BX \
	VMOVD BX, X6 \
	VPBROADCASTD X6, Y6 \
	MOVL $0x00800000, BX \
	VMOVD BX, X7 \
	VPBROADCASTD X7, Y7

#define FLUSH_V \
	VANDPS Y5, Y6, Y8 \
	VCMPPS $0x1d, Y7, Y8, Y8 \
	VANDPS Y8, Y5, Y5

// func sgdAVX2(w, grad *float32, n int, lr, wd float32)
// w -= lr * (g + wd*w), n a multiple of 8.
TEXT ·sgdAVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS lr+24(FP), Y0
	VBROADCASTSS wd+28(FP), Y2
	XORQ AX, AX
sgdloop:
	CMPQ AX, CX
	JGE sgddone
	VMOVUPS (DI)(AX*4), Y3
	VMOVUPS (SI)(AX*4), Y4
	VFMADD231PS Y3, Y2, Y4  // g += wd*w
	VFNMADD231PS Y4, Y0, Y3 // w -= lr*g
	VMOVUPS Y3, (DI)(AX*4)
	ADDQ $8, AX
	JMP sgdloop
sgddone:
	VZEROUPPER
	RET

// func momentumAVX2(w, grad, v *float32, n int, lr, mu, wd float32)
// g' = g + wd*w; v = mu*v + g', flushed to 0 below the smallest normal; w -= lr*v.
TEXT ·momentumAVX2(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ v+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS lr+32(FP), Y0
	VBROADCASTSS mu+36(FP), Y1
	VBROADCASTSS wd+40(FP), Y2
	FLUSH_CONSTANTS
	XORQ AX, AX
momloop:
	CMPQ AX, CX
	JGE momdone
	VMOVUPS (DI)(AX*4), Y3
	VMOVUPS (SI)(AX*4), Y4
	VMOVUPS (DX)(AX*4), Y5
	VFMADD231PS Y3, Y2, Y4  // g += wd*w
	VFMADD213PS Y4, Y1, Y5  // v = mu*v + g
	FLUSH_V
	VFNMADD231PS Y5, Y0, Y3 // w -= lr*v
	VMOVUPS Y3, (DI)(AX*4)
	VMOVUPS Y5, (DX)(AX*4)
	ADDQ $8, AX
	JMP momloop
momdone:
	VZEROUPPER
	RET

// func nesterovAVX2(w, grad, v *float32, n int, lr, mu, wd float32)
// g' = g + wd*w; v = mu*v + g', flushed to 0 below the smallest normal;
// w -= lr*(g' + mu*v).
TEXT ·nesterovAVX2(SB), NOSPLIT, $0-44
	MOVQ w+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ v+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS lr+32(FP), Y0
	VBROADCASTSS mu+36(FP), Y1
	VBROADCASTSS wd+40(FP), Y2
	FLUSH_CONSTANTS
	XORQ AX, AX
nesloop:
	CMPQ AX, CX
	JGE nesdone
	VMOVUPS (DI)(AX*4), Y3
	VMOVUPS (SI)(AX*4), Y4
	VMOVUPS (DX)(AX*4), Y5
	VFMADD231PS Y3, Y2, Y4  // g += wd*w
	VFMADD213PS Y4, Y1, Y5  // v = mu*v + g
	FLUSH_V
	VFMADD231PS Y5, Y1, Y4  // g += mu*v
	VFNMADD231PS Y4, Y0, Y3 // w -= lr*g
	VMOVUPS Y3, (DI)(AX*4)
	VMOVUPS Y5, (DX)(AX*4)
	ADDQ $8, AX
	JMP nesloop
nesdone:
	VZEROUPPER
	RET
