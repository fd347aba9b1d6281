//go:build amd64 && !purego

#include "textflag.h"
#include "winotransform_amd64.h"

// The F(4×4, 5×5) lane transforms of winotransform_amd64.s for two tiles
// at once: a 16-lane vector holds tile 0's 8 lanes in its low half and
// tile 1's in its high half, with the AVX2 kernels' operations lane for
// lane (winotransform_amd64.h's macros with Z registers), so the bits are the
// same (tested). The two tiles' transformed values (V, M, dM) sit side by
// side; their patches and outputs, in the padded input and the lanes
// buffer, are delta floats apart, loaded and stored by halves. The input
// gradient stays with the AVX2 kernel: its two patches overlap, and tile
// 0's sums must go in first.

// LOADP loads one row of two patches, at t (tile 0) and t + d (tile 1,
// d in bytes), into the halves of z (y is its low half); STOREP stores
// the halves of z the same way.
#define LOADP(t, d, y, z) VMOVUPS (t), y; VINSERTF64X4 $1, (t)(d*1), z, z
#define STOREP(t, d, y, z) VMOVUPS y, (t); VEXTRACTF64X4 $1, z, (t)(d*1)

// LOAD8P loads row i < 8 of two patches, at p + i·s (tile 0) and that plus
// d (tile 1), into the halves of Z0..Z7; t is scratch.
#define LOAD8P(p, s, d, t) \
	MOVQ p, t;                          \
	LOADP(t, d, Y0, Z0); ADDQ s, t;     \
	LOADP(t, d, Y1, Z1); ADDQ s, t;     \
	LOADP(t, d, Y2, Z2); ADDQ s, t;     \
	LOADP(t, d, Y3, Z3); ADDQ s, t;     \
	LOADP(t, d, Y4, Z4); ADDQ s, t;     \
	LOADP(t, d, Y5, Z5); ADDQ s, t;     \
	LOADP(t, d, Y6, Z6); ADDQ s, t;     \
	LOADP(t, d, Y7, Z7)

// func winoInputAVX512(dst *float32, stride int, src *float32, delta int, pitch int)
// dst[ξ·stride + 8k + l] = (Bᵀ d_kl B)[ξ] for tiles k < 2 and lanes l < 8,
// d_kl[i][j] = src[k·delta + i·pitch + 8j + l].
TEXT ·winoInputAVX512(SB), $4096-40
	MOVQ dst+0(FP), DI
	MOVQ stride+8(FP), BX
	SHLQ $2, BX
	MOVQ src+16(FP), SI
	MOVQ delta+24(FP), R10
	SHLQ $2, R10
	MOVQ pitch+32(FP), DX
	SHLQ $2, DX
	// Columns: t[a][j] = (Bᵀ d[·][j])[a] at SP + 512a + 64j.
	MOVQ SP, R8
	MOVQ $8, CX

incol:
	LOAD8P(SI, DX, R10, R9)
	BT8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	STOREK(R8, 512, Z9, Z0, Z7, Z12, Z13, Z14, Z15, Z11)
	ADDQ $32, SI
	ADDQ $64, R8
	DECQ CX
	JNZ  incol

	// Rows: V[8a + b] = (Bᵀ t[a][·])[b].
	MOVQ SP, R8
	MOVQ $8, CX

inrow:
	LOADK(R8, 64, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	BT8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	STORE8S(DI, BX, R9, Z9, Z0, Z7, Z12, Z13, Z14, Z15, Z11)
	LEAQ (R9)(BX*2), DI
	ADDQ $512, R8
	DECQ CX
	JNZ  inrow
	VZEROUPPER
	RET

// func winoOutputAVX512(y *float32, delta int, pitch int, m *float32, stride int, b float32)
// y[k·delta + i·pitch + 8j + l] = (Aᵀ M_kl A)[i][j] + b for tiles k < 2
// and lanes l < 8, M_kl[ξ] = m[ξ·stride + 8k + l].
TEXT ·winoOutputAVX512(SB), $2048-44
	MOVQ y+0(FP), DI
	MOVQ delta+8(FP), R10
	SHLQ $2, R10
	MOVQ pitch+16(FP), DX
	SHLQ $2, DX
	MOVQ m+24(FP), SI
	MOVQ stride+32(FP), BX
	SHLQ $2, BX
	VBROADCASTSS b+40(FP), Z15
	// Rows: r_j[a] = (Aᵀ M[a][·])[j] at SP + 512j + 64a.
	MOVQ SP, R8
	MOVQ $8, CX

orow:
	LOAD8S(SI, BX, R9, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	AT8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	VMOVUPS Z0, (R8)
	VMOVUPS Z1, 512(R8)
	VMOVUPS Z2, 1024(R8)
	VMOVUPS Z3, 1536(R8)
	LEAQ    (R9)(BX*2), SI
	ADDQ    $64, R8
	DECQ    CX
	JNZ     orow

	// Columns: Y[i][j] = (Aᵀ r_j)[i] + b, tile 0's half at y, tile 1's
	// delta further.
	MOVQ SP, R8
	MOVQ $4, CX

ocol:
	LOADK(R8, 64, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	AT8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	VADDPS        Z15, Z0, Z0
	VADDPS        Z15, Z1, Z1
	VADDPS        Z15, Z2, Z2
	VADDPS        Z15, Z3, Z3
	MOVQ          DI, R9
	STOREP(R9, R10, Y0, Z0)
	ADDQ          DX, R9
	STOREP(R9, R10, Y1, Z1)
	ADDQ          DX, R9
	STOREP(R9, R10, Y2, Z2)
	ADDQ          DX, R9
	STOREP(R9, R10, Y3, Z3)
	ADDQ          $32, DI
	ADDQ          $512, R8
	DECQ          CX
	JNZ           ocol
	VZEROUPPER
	RET

// func winoOutputGradAVX512(dst *float32, stride int, dy *float32, delta int, pitch int)
// dst[ξ·stride + 8k + l] = (A dY_kl Aᵀ)[ξ] for tiles k < 2 and lanes
// l < 8, dY_kl[i][j] = dy[k·delta + i·pitch + 8j + l].
TEXT ·winoOutputGradAVX512(SB), $2048-40
	MOVQ dst+0(FP), DI
	MOVQ stride+8(FP), BX
	SHLQ $2, BX
	MOVQ dy+16(FP), SI
	MOVQ delta+24(FP), R10
	SHLQ $2, R10
	MOVQ pitch+32(FP), DX
	SHLQ $2, DX
	// Columns: c_j[a] = (A dY[·][j])[a] at SP + 512j + 64a.
	MOVQ SP, R8
	MOVQ $4, CX

ogcol:
	MOVQ         SI, R9
	LOADP(R9, R10, Y0, Z0)
	ADDQ         DX, R9
	LOADP(R9, R10, Y1, Z1)
	ADDQ         DX, R9
	LOADP(R9, R10, Y2, Z2)
	ADDQ         DX, R9
	LOADP(R9, R10, Y3, Z3)
	A8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	STOREK(R8, 64, Z0, Z4, Z5, Z6, Z7, Z10, Z11, Z3)
	ADDQ $32, SI
	ADDQ $512, R8
	DECQ CX
	JNZ  ogcol

	// Rows: dM[8a + b] = (A (c_0[a], …, c_3[a]))[b].
	MOVQ SP, R8
	MOVQ $8, CX

ogrow:
	VMOVUPS (R8), Z0
	VMOVUPS 512(R8), Z1
	VMOVUPS 1024(R8), Z2
	VMOVUPS 1536(R8), Z3
	A8(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	STORE8S(DI, BX, R9, Z0, Z4, Z5, Z6, Z7, Z10, Z11, Z3)
	LEAQ (R9)(BX*2), DI
	ADDQ $64, R8
	DECQ CX
	JNZ  ogrow
	VZEROUPPER
	RET
