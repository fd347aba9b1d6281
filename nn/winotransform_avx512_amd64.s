//go:build amd64 && !purego

#include "textflag.h"

// The transforms of winotransform_amd64.s for two tiles at once: lanes
// 0-7 of every 512-bit vector belong to tile 0's 8 samples and lanes 8-15
// to tile 1's, so each instruction does the work of two AVX2 ones. Every
// lane goes through the same operations, in the same order, as in the AVX2
// kernels, so the results are the same bits. Tiles 0 and 1 are consecutive
// in V, dV and M (one 16-float vector) but anywhere in the padded inputs
// and the lanes buffers (two pointers). Constants 2, 5 and 4 are in Z13,
// Z14 and Z15; the intermediate tiles are on the stack.

#define CONSTSZ \
	MOVL         $0x40000000, AX; \
	VMOVD        AX, X13;         \
	VBROADCASTSS X13, Z13;        \
	MOVL         $0x40a00000, AX; \
	VMOVD        AX, X14;         \
	VBROADCASTSS X14, Z14;        \
	MOVL         $0x40800000, AX; \
	VMOVD        AX, X15;         \
	VBROADCASTSS X15, Z15

// BT6Z is BT6: v = Bᵀ d, d in Z0..Z5; v0..v5 in Z11, Z1, Z8, Z2, Z9, Z0.
#define BT6Z \
	VADDPS       Z2, Z1, Z6;   \
	VSUBPS       Z2, Z1, Z7;   \
	VSUBPS       Z3, Z4, Z8;   \
	VSUBPS       Z2, Z4, Z9;   \
	VSUBPS       Z1, Z3, Z10;  \
	VMOVAPS      Z4, Z11;      \
	VFMADD231PS  Z15, Z0, Z11; \
	VFNMADD231PS Z14, Z2, Z11; \
	VMOVAPS      Z5, Z0;       \
	VFMADD231PS  Z15, Z1, Z0;  \
	VFNMADD231PS Z14, Z3, Z0;  \
	VADDPS       Z4, Z3, Z1;   \
	VFNMADD231PS Z15, Z6, Z1;  \
	VFMADD231PS  Z15, Z7, Z8;  \
	VMOVAPS      Z9, Z2;       \
	VFMADD231PS  Z13, Z10, Z2; \
	VFNMADD231PS Z13, Z10, Z9

// B6Z is B6: d = B v, v in Z0..Z5; d0..d5 in Z1, Z11, Z2, Z3, Z10, Z5.
#define B6Z \
	VADDPS       Z2, Z1, Z6;    \
	VSUBPS       Z1, Z2, Z7;    \
	VADDPS       Z4, Z3, Z8;    \
	VSUBPS       Z3, Z4, Z9;    \
	VADDPS       Z5, Z7, Z10;   \
	VMULPS       Z13, Z9, Z11;  \
	VFMADD231PS  Z15, Z10, Z11; \
	VMOVAPS      Z8, Z2;        \
	VFNMSUB231PS Z14, Z0, Z2;   \
	VFNMADD231PS Z15, Z6, Z2;   \
	VMOVAPS      Z7, Z3;        \
	VFNMSUB231PS Z13, Z9, Z3;   \
	VFNMADD231PS Z14, Z5, Z3;   \
	VADDPS       Z6, Z0, Z10;   \
	VADDPS       Z8, Z10, Z10;  \
	VMULPS       Z15, Z0, Z1

// AT6Z is AT6: y = Aᵀ m, m in Z0..Z5; y0, y1 in Z10, Z11.
#define AT6Z \
	VADDPS      Z2, Z1, Z6;   \
	VSUBPS      Z2, Z1, Z7;   \
	VADDPS      Z4, Z3, Z8;   \
	VSUBPS      Z4, Z3, Z9;   \
	VADDPS      Z6, Z0, Z10;  \
	VADDPS      Z8, Z10, Z10; \
	VADDPS      Z5, Z7, Z11;  \
	VFMADD231PS Z13, Z9, Z11

// A6Z is A6: m = A y, y in Z0, Z1; m0..m5 in Z0, Z2, Z3, Z4, Z5, Z1.
#define A6Z \
	VADDPS       Z1, Z0, Z2;  \
	VSUBPS       Z1, Z0, Z3;  \
	VMOVAPS      Z0, Z4;      \
	VFMADD231PS  Z13, Z1, Z4; \
	VMOVAPS      Z0, Z5;      \
	VFNMADD231PS Z13, Z1, Z5

// PAIR loads the 8 floats at a (tile 0) and b (tile 1) into the low and
// high halves of Zn (Yn is its low half).
#define PAIR(a, b, Yn, Zn) \
	VMOVUPS      a, Yn; \
	VINSERTF64X4 $1, b, Zn, Zn

// LOAD6S2 loads rows p, p+s, …, p+5s of tile 0 and q, q+s, … of tile 1
// into Z0..Z5 (s a register of bytes, t and u scratch registers).
#define LOAD6S2(p, q, s, t, u) \
	PAIR((p), (q), Y0, Z0);             \
	PAIR((p)(s*1), (q)(s*1), Y1, Z1);   \
	PAIR((p)(s*2), (q)(s*2), Y2, Z2);   \
	LEAQ (p)(s*2), t;                   \
	LEAQ (q)(s*2), u;                   \
	PAIR((t)(s*1), (u)(s*1), Y3, Z3);   \
	PAIR((t)(s*2), (u)(s*2), Y4, Z4);   \
	LEAQ (t)(s*2), t;                   \
	LEAQ (u)(s*2), u;                   \
	PAIR((t)(s*1), (u)(s*1), Y5, Z5)

// LOAD6SZ loads 6 vectors at p, p+s, …, p+5s into Z0..Z5 (t scratch; it
// ends at p+4s).
#define LOAD6SZ(p, s, t) \
	VMOVUPS (p), Z0;       \
	VMOVUPS (p)(s*1), Z1;  \
	VMOVUPS (p)(s*2), Z2;  \
	LEAQ    (p)(s*2), t;   \
	VMOVUPS (t)(s*1), Z3;  \
	VMOVUPS (t)(s*2), Z4;  \
	LEAQ    (t)(s*2), t;   \
	VMOVUPS (t)(s*1), Z5

// LOAD6CZ loads 6 vectors at p + 0, 64, …, 320 into Z0..Z5.
#define LOAD6CZ(p) \
	VMOVUPS (p), Z0;    \
	VMOVUPS 64(p), Z1;  \
	VMOVUPS 128(p), Z2; \
	VMOVUPS 192(p), Z3; \
	VMOVUPS 256(p), Z4; \
	VMOVUPS 320(p), Z5

// LOAD6RZ loads 6 vectors at p + 0, 384, …, 1920 (a column of a stack
// tile) into Z0..Z5.
#define LOAD6RZ(p) \
	VMOVUPS (p), Z0;     \
	VMOVUPS 384(p), Z1;  \
	VMOVUPS 768(p), Z2;  \
	VMOVUPS 1152(p), Z3; \
	VMOVUPS 1536(p), Z4; \
	VMOVUPS 1920(p), Z5

// STORE6S stores Za..Zf at p, p+s, …, p+5s and leaves p at p+6s (t
// scratch).
#define STORE6S(p, s, t, Za, Zb, Zc, Zd, Ze, Zf) \
	VMOVUPS Za, (p);      \
	VMOVUPS Zb, (p)(s*1); \
	VMOVUPS Zc, (p)(s*2); \
	LEAQ    (p)(s*2), t;  \
	VMOVUPS Zd, (t)(s*1); \
	VMOVUPS Ze, (t)(s*2); \
	LEAQ    (t)(s*2), t;  \
	VMOVUPS Zf, (t)(s*1); \
	LEAQ    (t)(s*2), p

// func winoInputAVX512(dst *float32, stride int, src0, src1 *float32, pitch int)
// dst[ξ·stride + 8k + l] = (Bᵀ d B)[ξ] of lane l of tile k, d[i][j] =
// srck[i·pitch + 8j + l].
TEXT ·winoInputAVX512(SB), $2304-40
	MOVQ dst+0(FP), DI
	MOVQ stride+8(FP), BX
	SHLQ $2, BX
	MOVQ src0+16(FP), SI
	MOVQ src1+24(FP), R10
	MOVQ pitch+32(FP), DX
	SHLQ $2, DX
	CONSTSZ
	// Columns: t[a][j] = (Bᵀ d[·][j])[a] at SP + 384a + 64j.
	MOVQ SP, R8
	MOVQ $6, CX

incol:
	LOAD6S2(SI, R10, DX, R9, R11)
	BT6Z
	VMOVUPS Z11, (R8)
	VMOVUPS Z1, 384(R8)
	VMOVUPS Z8, 768(R8)
	VMOVUPS Z2, 1152(R8)
	VMOVUPS Z9, 1536(R8)
	VMOVUPS Z0, 1920(R8)
	ADDQ    $32, SI
	ADDQ    $32, R10
	ADDQ    $64, R8
	DECQ    CX
	JNZ     incol

	// Rows: V[6a + b] = (Bᵀ t[a][·])[b].
	MOVQ SP, R8
	MOVQ $6, CX

inrow:
	LOAD6CZ(R8)
	BT6Z
	STORE6S(DI, BX, R9, Z11, Z1, Z8, Z2, Z9, Z0)
	ADDQ $384, R8
	DECQ CX
	JNZ  inrow
	VZEROUPPER
	RET

// ADDROW adds the 6 values of one row of a tile, 8 lanes each at p + 0, 64,
// …, 320, onto dst + 0, 32, …, 160.
#define ADDROW(p, dst) \
	VMOVUPS (p), Y0;       \
	VADDPS  (dst), Y0, Y0; \
	VMOVUPS Y0, (dst);     \
	VMOVUPS 64(p), Y1;     \
	VADDPS  32(dst), Y1, Y1; \
	VMOVUPS Y1, 32(dst);   \
	VMOVUPS 128(p), Y2;    \
	VADDPS  64(dst), Y2, Y2; \
	VMOVUPS Y2, 64(dst);   \
	VMOVUPS 192(p), Y3;    \
	VADDPS  96(dst), Y3, Y3; \
	VMOVUPS Y3, 96(dst);   \
	VMOVUPS 256(p), Y4;    \
	VADDPS  128(dst), Y4, Y4; \
	VMOVUPS Y4, 128(dst);  \
	VMOVUPS 320(p), Y5;    \
	VADDPS  160(dst), Y5, Y5; \
	VMOVUPS Y5, 160(dst)

// func winoInputGradAVX512(dst0, dst1 *float32, pitch int, dv *float32, stride int)
// dstk[i·pitch + 8j + l] += (B dV Bᵀ)[i][j] of lane l of tile k, dV[ξ] =
// dv[ξ·stride + 8k + l]. Tile 0's 36 sums are added before tile 1's, as
// two AVX2 calls would (the patches of neighbouring tiles overlap).
TEXT ·winoInputGradAVX512(SB), $4608-40
	MOVQ dst0+0(FP), DI
	MOVQ dst1+8(FP), R10
	MOVQ pitch+16(FP), DX
	SHLQ $2, DX
	MOVQ dv+24(FP), SI
	MOVQ stride+32(FP), BX
	SHLQ $2, BX
	CONSTSZ
	// Rows: t[a][j] = (B dV[a][·])[j] at SP + 384a + 64j.
	MOVQ SP, R8
	MOVQ $6, CX

igrow:
	LOAD6SZ(SI, BX, R9)
	B6Z
	VMOVUPS Z1, (R8)
	VMOVUPS Z11, 64(R8)
	VMOVUPS Z2, 128(R8)
	VMOVUPS Z3, 192(R8)
	VMOVUPS Z10, 256(R8)
	VMOVUPS Z5, 320(R8)
	LEAQ    (R9)(BX*2), SI
	ADDQ    $384, R8
	DECQ    CX
	JNZ     igrow

	// Columns: r[i][j] = (B t[·][j])[i] at SP + 2304 + 384i + 64j.
	MOVQ SP, R8
	LEAQ 2304(SP), R11
	MOVQ $6, CX

igcol:
	LOAD6RZ(R8)
	B6Z
	VMOVUPS Z1, (R11)
	VMOVUPS Z11, 384(R11)
	VMOVUPS Z2, 768(R11)
	VMOVUPS Z3, 1152(R11)
	VMOVUPS Z10, 1536(R11)
	VMOVUPS Z5, 1920(R11)
	ADDQ    $64, R8
	ADDQ    $64, R11
	DECQ    CX
	JNZ     igcol

	// dst0 += tile 0's rows (the low halves), then dst1 += tile 1's.
	LEAQ 2304(SP), R8
	MOVQ $6, CX

igadd0:
	ADDROW(R8, DI)
	ADDQ $384, R8
	ADDQ DX, DI
	DECQ CX
	JNZ  igadd0
	LEAQ 2336(SP), R8
	MOVQ $6, CX

igadd1:
	ADDROW(R8, R10)
	ADDQ $384, R8
	ADDQ DX, R10
	DECQ CX
	JNZ  igadd1
	VZEROUPPER
	RET

// func winoOutputAVX512(y0, y1 *float32, pitch int, m *float32, stride int, b float32)
// yk[i·pitch + 8j + l] = (Aᵀ M A)[i][j] + b of lane l of tile k, M[ξ] =
// m[ξ·stride + 8k + l].
TEXT ·winoOutputAVX512(SB), $768-44
	MOVQ y0+0(FP), DI
	MOVQ y1+8(FP), R10
	MOVQ pitch+16(FP), DX
	SHLQ $2, DX
	MOVQ m+24(FP), SI
	MOVQ stride+32(FP), BX
	SHLQ $2, BX
	CONSTSZ
	VBROADCASTSS b+40(FP), Z12
	// Rows: r_j[a] = (Aᵀ M[a][·])[j]: r_0 at SP + 64a, r_1 at SP + 384 + 64a.
	MOVQ SP, R8
	MOVQ $6, CX

orow:
	LOAD6SZ(SI, BX, R9)
	AT6Z
	VMOVUPS Z10, (R8)
	VMOVUPS Z11, 384(R8)
	LEAQ    (R9)(BX*2), SI
	ADDQ    $64, R8
	DECQ    CX
	JNZ     orow

	LOAD6CZ(SP)
	AT6Z
	VADDPS        Z12, Z10, Z10
	VADDPS        Z12, Z11, Z11
	VMOVUPS       Y10, (DI)       // Y[0][0]
	VMOVUPS       Y11, (DI)(DX*1) // Y[1][0]
	VEXTRACTF64X4 $1, Z10, (R10)
	VEXTRACTF64X4 $1, Z11, (R10)(DX*1)
	LEAQ          384(SP), R8
	LOAD6CZ(R8)
	AT6Z
	VADDPS        Z12, Z10, Z10
	VADDPS        Z12, Z11, Z11
	VMOVUPS       Y10, 32(DI)       // Y[0][1]
	VMOVUPS       Y11, 32(DI)(DX*1) // Y[1][1]
	VEXTRACTF64X4 $1, Z10, 32(R10)
	VEXTRACTF64X4 $1, Z11, 32(R10)(DX*1)
	VZEROUPPER
	RET

// func winoOutputGradAVX512(dst *float32, stride int, dy0, dy1 *float32, pitch int)
// dst[ξ·stride + 8k + l] = (A dY Aᵀ)[ξ] of lane l of tile k, dY[i][j] =
// dyk[i·pitch + 8j + l].
TEXT ·winoOutputGradAVX512(SB), $768-40
	MOVQ dst+0(FP), DI
	MOVQ stride+8(FP), BX
	SHLQ $2, BX
	MOVQ dy0+16(FP), SI
	MOVQ dy1+24(FP), R10
	MOVQ pitch+32(FP), DX
	SHLQ $2, DX
	CONSTSZ
	// Columns: c_j = A dY[·][j] at SP + 384j + 64a.
	PAIR((SI), (R10), Y0, Z0)
	PAIR((SI)(DX*1), (R10)(DX*1), Y1, Z1)
	A6Z
	VMOVUPS Z0, (SP)
	VMOVUPS Z2, 64(SP)
	VMOVUPS Z3, 128(SP)
	VMOVUPS Z4, 192(SP)
	VMOVUPS Z5, 256(SP)
	VMOVUPS Z1, 320(SP)
	PAIR(32(SI), 32(R10), Y0, Z0)
	PAIR(32(SI)(DX*1), 32(R10)(DX*1), Y1, Z1)
	A6Z
	VMOVUPS Z0, 384(SP)
	VMOVUPS Z2, 448(SP)
	VMOVUPS Z3, 512(SP)
	VMOVUPS Z4, 576(SP)
	VMOVUPS Z5, 640(SP)
	VMOVUPS Z1, 704(SP)

	// Rows: dM[6a + b] = (A (c_0[a], c_1[a]))[b].
	MOVQ SP, R8
	MOVQ $6, CX

ogrow:
	VMOVUPS (R8), Z0
	VMOVUPS 384(R8), Z1
	A6Z
	STORE6S(DI, BX, R9, Z0, Z2, Z3, Z4, Z5, Z1)
	ADDQ $64, R8
	DECQ CX
	JNZ  ogrow
	VZEROUPPER
	RET
