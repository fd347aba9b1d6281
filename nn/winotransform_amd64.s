//go:build amd64 && !purego

#include "textflag.h"

// The F(2×2, 5×5) transforms of winotransform.go over 8 lanes at once:
// lane l of every vector belongs to sample l of a group (convwino.go), so
// a kernel transforms one tile of one channel for 8 samples. Every kernel
// keeps 2, 5 and 4 broadcast in Y13, Y14 and Y15 and its intermediate
// 6×6 (or 2×6) tile on the stack.

#define CONSTS \
	MOVL         $0x40000000, AX; \
	VMOVD        AX, X13;         \
	VBROADCASTSS X13, Y13;        \
	MOVL         $0x40a00000, AX; \
	VMOVD        AX, X14;         \
	VBROADCASTSS X14, Y14;        \
	MOVL         $0x40800000, AX; \
	VMOVD        AX, X15;         \
	VBROADCASTSS X15, Y15

// BT6: v = Bᵀ d, d in Y0..Y5; v0..v5 in Y11, Y1, Y8, Y2, Y9, Y0.
#define BT6 \
	VADDPS       Y2, Y1, Y6;   \ // s12 = d1 + d2
	VSUBPS       Y2, Y1, Y7;   \ // d12 = d1 − d2
	VSUBPS       Y3, Y4, Y8;   \ // e34 = d4 − d3
	VSUBPS       Y2, Y4, Y9;   \ // e42 = d4 − d2
	VSUBPS       Y1, Y3, Y10;  \ // f31 = d3 − d1
	VMOVAPS      Y4, Y11;      \
	VFMADD231PS  Y15, Y0, Y11; \ // d4 + 4 d0
	VFNMADD231PS Y14, Y2, Y11; \ // v0 = … − 5 d2
	VMOVAPS      Y5, Y0;       \
	VFMADD231PS  Y15, Y1, Y0;  \ // d5 + 4 d1
	VFNMADD231PS Y14, Y3, Y0;  \ // v5 = … − 5 d3
	VADDPS       Y4, Y3, Y1;   \ // d3 + d4
	VFNMADD231PS Y15, Y6, Y1;  \ // v1 = … − 4 s12
	VFMADD231PS  Y15, Y7, Y8;  \ // v2 = e34 + 4 d12
	VMOVAPS      Y9, Y2;       \
	VFMADD231PS  Y13, Y10, Y2; \ // v3 = e42 + 2 f31
	VFNMADD231PS Y13, Y10, Y9    // v4 = e42 − 2 f31

// B6: d = B v, v in Y0..Y5; d0..d5 in Y1, Y11, Y2, Y3, Y10, Y5.
#define B6 \
	VADDPS       Y2, Y1, Y6;   \ // s12 = v1 + v2
	VSUBPS       Y1, Y2, Y7;   \ // d21 = v2 − v1
	VADDPS       Y4, Y3, Y8;   \ // s34 = v3 + v4
	VSUBPS       Y3, Y4, Y9;   \ // d43 = v4 − v3
	VADDPS       Y5, Y7, Y10;  \ // d21 + v5
	VMULPS       Y13, Y9, Y11; \ // 2 d43
	VFMADD231PS  Y15, Y10, Y11; \ // d1 = 2 d43 + 4 (d21 + v5)
	VMOVAPS      Y8, Y2;       \
	VFNMSUB231PS Y14, Y0, Y2;  \ // −5 v0 − s34
	VFNMADD231PS Y15, Y6, Y2;  \ // d2 = … − 4 s12
	VMOVAPS      Y7, Y3;       \
	VFNMSUB231PS Y13, Y9, Y3;  \ // −2 d43 − d21
	VFNMADD231PS Y14, Y5, Y3;  \ // d3 = … − 5 v5
	VADDPS       Y6, Y0, Y10;  \
	VADDPS       Y8, Y10, Y10; \ // d4 = v0 + s12 + s34
	VMULPS       Y15, Y0, Y1     // d0 = 4 v0

// AT6: y = Aᵀ m, m in Y0..Y5; y0, y1 in Y10, Y11.
#define AT6 \
	VADDPS      Y2, Y1, Y6;  \ // s12
	VSUBPS      Y2, Y1, Y7;  \ // d12 = m1 − m2
	VADDPS      Y4, Y3, Y8;  \ // s34
	VSUBPS      Y4, Y3, Y9;  \ // d34 = m3 − m4
	VADDPS      Y6, Y0, Y10; \
	VADDPS      Y8, Y10, Y10; \ // y0 = m0 + s12 + s34
	VADDPS      Y5, Y7, Y11; \
	VFMADD231PS Y13, Y9, Y11   // y1 = d12 + m5 + 2 d34

// A6: m = A y, y in Y0, Y1; m0..m5 in Y0, Y2, Y3, Y4, Y5, Y1.
#define A6 \
	VADDPS       Y1, Y0, Y2; \ // y0 + y1
	VSUBPS       Y1, Y0, Y3; \ // y0 − y1
	VMOVAPS      Y0, Y4;     \
	VFMADD231PS  Y13, Y1, Y4; \ // y0 + 2 y1
	VMOVAPS      Y0, Y5;     \
	VFNMADD231PS Y13, Y1, Y5   // y0 − 2 y1

// LOAD6S loads 6 vectors at p, p+s, …, p+5s (s a register of bytes, t a
// scratch register) into Y0..Y5.
#define LOAD6S(p, s, t) \
	VMOVUPS (p), Y0;       \
	VMOVUPS (p)(s*1), Y1;  \
	VMOVUPS (p)(s*2), Y2;  \
	LEAQ    (p)(s*2), t;   \
	VMOVUPS (t)(s*1), Y3;  \
	VMOVUPS (t)(s*2), Y4;  \
	LEAQ    (t)(s*2), t;   \
	VMOVUPS (t)(s*1), Y5

// LOAD6C loads 6 vectors at p + 0, 32, …, 160 into Y0..Y5.
#define LOAD6C(p) \
	VMOVUPS (p), Y0;    \
	VMOVUPS 32(p), Y1;  \
	VMOVUPS 64(p), Y2;  \
	VMOVUPS 96(p), Y3;  \
	VMOVUPS 128(p), Y4; \
	VMOVUPS 160(p), Y5

// LOAD6R loads 6 vectors at p + 0, 192, …, 960 (a column of the stack
// tile) into Y0..Y5.
#define LOAD6R(p) \
	VMOVUPS (p), Y0;    \
	VMOVUPS 192(p), Y1; \
	VMOVUPS 384(p), Y2; \
	VMOVUPS 576(p), Y3; \
	VMOVUPS 768(p), Y4; \
	VMOVUPS 960(p), Y5

// func winoInputAVX2(dst *float32, stride int, src *float32, pitch int)
// dst[ξ·stride + l] = (Bᵀ d_l B)[ξ] for lanes l < 8, d_l[i][j] =
// src[i·pitch + 8j + l].
TEXT ·winoInputAVX2(SB), $1152-32
	MOVQ dst+0(FP), DI
	MOVQ stride+8(FP), BX
	SHLQ $2, BX
	MOVQ src+16(FP), SI
	MOVQ pitch+24(FP), DX
	SHLQ $2, DX
	CONSTS
	// Columns: t[a][j] = (Bᵀ d[·][j])[a] at SP + 192a + 32j.
	MOVQ SP, R8
	MOVQ $6, CX

incol:
	LOAD6S(SI, DX, R9)
	BT6
	VMOVUPS Y11, (R8)
	VMOVUPS Y1, 192(R8)
	VMOVUPS Y8, 384(R8)
	VMOVUPS Y2, 576(R8)
	VMOVUPS Y9, 768(R8)
	VMOVUPS Y0, 960(R8)
	ADDQ    $32, SI
	ADDQ    $32, R8
	DECQ    CX
	JNZ     incol

	// Rows: V[6a + b] = (Bᵀ t[a][·])[b].
	MOVQ SP, R8
	MOVQ $6, CX

inrow:
	LOAD6C(R8)
	BT6
	VMOVUPS Y11, (DI)
	VMOVUPS Y1, (DI)(BX*1)
	VMOVUPS Y8, (DI)(BX*2)
	LEAQ    (DI)(BX*2), R9
	VMOVUPS Y2, (R9)(BX*1)
	VMOVUPS Y9, (R9)(BX*2)
	LEAQ    (R9)(BX*2), R9
	VMOVUPS Y0, (R9)(BX*1)
	LEAQ    (R9)(BX*2), DI
	ADDQ    $192, R8
	DECQ    CX
	JNZ     inrow
	VZEROUPPER
	RET

// func winoInputGradAVX2(dst *float32, pitch int, dv *float32, stride int)
// dst[i·pitch + 8j + l] += (B dV_l Bᵀ)[i][j] for lanes l < 8, dV_l[ξ] =
// dv[ξ·stride + l].
TEXT ·winoInputGradAVX2(SB), $1152-32
	MOVQ dst+0(FP), DI
	MOVQ pitch+8(FP), DX
	SHLQ $2, DX
	MOVQ dv+16(FP), SI
	MOVQ stride+24(FP), BX
	SHLQ $2, BX
	CONSTS
	// Rows: t[a][j] = (B dV[a][·])[j] at SP + 192a + 32j.
	MOVQ SP, R8
	MOVQ $6, CX

igrow:
	LOAD6S(SI, BX, R9)
	B6
	VMOVUPS Y1, (R8)
	VMOVUPS Y11, 32(R8)
	VMOVUPS Y2, 64(R8)
	VMOVUPS Y3, 96(R8)
	VMOVUPS Y10, 128(R8)
	VMOVUPS Y5, 160(R8)
	LEAQ    (R9)(BX*2), SI
	ADDQ    $192, R8
	DECQ    CX
	JNZ     igrow

	// Columns: dst[i][j] += (B t[·][j])[i].
	MOVQ SP, R8
	MOVQ $6, CX

igcol:
	LOAD6R(R8)
	B6
	VADDPS  (DI), Y1, Y1
	VMOVUPS Y1, (DI)
	VADDPS  (DI)(DX*1), Y11, Y11
	VMOVUPS Y11, (DI)(DX*1)
	LEAQ    (DI)(DX*2), R9
	VADDPS  (R9), Y2, Y2
	VMOVUPS Y2, (R9)
	VADDPS  (R9)(DX*1), Y3, Y3
	VMOVUPS Y3, (R9)(DX*1)
	LEAQ    (R9)(DX*2), R9
	VADDPS  (R9), Y10, Y10
	VMOVUPS Y10, (R9)
	VADDPS  (R9)(DX*1), Y5, Y5
	VMOVUPS Y5, (R9)(DX*1)
	ADDQ    $32, DI
	ADDQ    $32, R8
	DECQ    CX
	JNZ     igcol
	VZEROUPPER
	RET

// func winoOutputAVX2(y *float32, pitch int, m *float32, stride int, b float32)
// y[i·pitch + 8j + l] = (Aᵀ M_l A)[i][j] + b for lanes l < 8, M_l[ξ] =
// m[ξ·stride + l].
TEXT ·winoOutputAVX2(SB), $384-36
	MOVQ y+0(FP), DI
	MOVQ pitch+8(FP), DX
	SHLQ $2, DX
	MOVQ m+16(FP), SI
	MOVQ stride+24(FP), BX
	SHLQ $2, BX
	CONSTS
	VBROADCASTSS b+32(FP), Y12
	// Rows: r_j[a] = (Aᵀ M[a][·])[j]: r_0 at SP + 32a, r_1 at SP + 192 + 32a.
	MOVQ SP, R8
	MOVQ $6, CX

orow:
	LOAD6S(SI, BX, R9)
	AT6
	VMOVUPS Y10, (R8)
	VMOVUPS Y11, 192(R8)
	LEAQ    (R9)(BX*2), SI
	ADDQ    $32, R8
	DECQ    CX
	JNZ     orow

	LOAD6C(SP)
	AT6
	VADDPS  Y12, Y10, Y10
	VADDPS  Y12, Y11, Y11
	VMOVUPS Y10, (DI)       // Y[0][0]
	VMOVUPS Y11, (DI)(DX*1) // Y[1][0]
	LEAQ    192(SP), R8
	LOAD6C(R8)
	AT6
	VADDPS  Y12, Y10, Y10
	VADDPS  Y12, Y11, Y11
	VMOVUPS Y10, 32(DI)       // Y[0][1]
	VMOVUPS Y11, 32(DI)(DX*1) // Y[1][1]
	VZEROUPPER
	RET

// func winoOutputGradAVX2(dst *float32, stride int, dy *float32, pitch int)
// dst[ξ·stride + l] = (A dY_l Aᵀ)[ξ] for lanes l < 8, dY_l[i][j] =
// dy[i·pitch + 8j + l].
TEXT ·winoOutputGradAVX2(SB), $384-32
	MOVQ dst+0(FP), DI
	MOVQ stride+8(FP), BX
	SHLQ $2, BX
	MOVQ dy+16(FP), SI
	MOVQ pitch+24(FP), DX
	SHLQ $2, DX
	CONSTS
	// Columns: c_j = A dY[·][j] at SP + 192j + 32a.
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(DX*1), Y1
	A6
	VMOVUPS Y0, (SP)
	VMOVUPS Y2, 32(SP)
	VMOVUPS Y3, 64(SP)
	VMOVUPS Y4, 96(SP)
	VMOVUPS Y5, 128(SP)
	VMOVUPS Y1, 160(SP)
	VMOVUPS 32(SI), Y0
	VMOVUPS 32(SI)(DX*1), Y1
	A6
	VMOVUPS Y0, 192(SP)
	VMOVUPS Y2, 224(SP)
	VMOVUPS Y3, 256(SP)
	VMOVUPS Y4, 288(SP)
	VMOVUPS Y5, 320(SP)
	VMOVUPS Y1, 352(SP)

	// Rows: dM[6a + b] = (A (c_0[a], c_1[a]))[b].
	MOVQ SP, R8
	MOVQ $6, CX

ogrow:
	VMOVUPS (R8), Y0
	VMOVUPS 192(R8), Y1
	A6
	VMOVUPS Y0, (DI)
	VMOVUPS Y2, (DI)(BX*1)
	VMOVUPS Y3, (DI)(BX*2)
	LEAQ    (DI)(BX*2), R9
	VMOVUPS Y4, (R9)(BX*1)
	VMOVUPS Y5, (R9)(BX*2)
	LEAQ    (R9)(BX*2), R9
	VMOVUPS Y1, (R9)(BX*1)
	LEAQ    (R9)(BX*2), DI
	ADDQ    $32, R8
	DECQ    CX
	JNZ     ogrow
	VZEROUPPER
	RET
