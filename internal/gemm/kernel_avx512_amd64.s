//go:build amd64 && !purego

#include "textflag.h"
#include "micro_amd64.h"

// AVX-512 micro-kernel, 8×32 register tile. Same arithmetic as the AVX2
// kernel (one FMA chain per element in k order, then c = alpha*acc + beta*c),
// on vectors twice as wide. Register use:
//	Z0, Z1      one k-row of the B micro-panel (32 floats)
//	Z2, Z3      broadcasts of two elements of the A micro-panel
//	Z16..Z31    the 8×32 accumulator tile, row i in Z(16+2i), Z(17+2i)
// 8 rows make a batch of 32 (the training batch) exactly four tiles, and 16
// independent chains cover the FMA latency on two 512-bit pipes.
//	SI  A micro-panel (8 floats per k)   DI  B micro-panel (32 floats per k, R10 bytes apart)
//	DX  C tile                           R8  ldc in bytes
//	CX  k steps left                     BX  unrolled iterations

#define STEP512 \
	VMOVUPS      (DI), Z0;         \
	VMOVUPS      64(DI), Z1;       \
	VBROADCASTSS (SI), Z2;         \
	VBROADCASTSS 4(SI), Z3;        \
	VFMADD231PS  Z0, Z2, Z16;      \
	VFMADD231PS  Z1, Z2, Z17;      \
	VFMADD231PS  Z0, Z3, Z18;      \
	VFMADD231PS  Z1, Z3, Z19;      \
	VBROADCASTSS 8(SI), Z2;        \
	VBROADCASTSS 12(SI), Z3;       \
	VFMADD231PS  Z0, Z2, Z20;      \
	VFMADD231PS  Z1, Z2, Z21;      \
	VFMADD231PS  Z0, Z3, Z22;      \
	VFMADD231PS  Z1, Z3, Z23;      \
	VBROADCASTSS 16(SI), Z2;       \
	VBROADCASTSS 20(SI), Z3;       \
	VFMADD231PS  Z0, Z2, Z24;      \
	VFMADD231PS  Z1, Z2, Z25;      \
	VFMADD231PS  Z0, Z3, Z26;      \
	VFMADD231PS  Z1, Z3, Z27;      \
	VBROADCASTSS 24(SI), Z2;       \
	VBROADCASTSS 28(SI), Z3;       \
	VFMADD231PS  Z0, Z2, Z28;      \
	VFMADD231PS  Z1, Z2, Z29;      \
	VFMADD231PS  Z0, Z3, Z30;      \
	VFMADD231PS  Z1, Z3, Z31;      \
	ADDQ         $32, SI;          \
	ADDQ         R10, DI

// c = alpha*acc + beta*c; Z0 holds alpha, Z1 beta.
#define ROW512_BETA(lo, hi) \
	VMULPS      (DX), Z1, Z2;   \
	VMULPS      64(DX), Z1, Z3; \
	VFMADD231PS Z0, lo, Z2;     \
	VFMADD231PS Z0, hi, Z3;     \
	VMOVUPS     Z2, (DX);       \
	VMOVUPS     Z3, 64(DX);     \
	ADDQ        R8, DX

// c = alpha*acc, c not read.
#define ROW512_ZERO(lo, hi) \
	VMULPS  Z0, lo, lo;  \
	VMULPS  Z0, hi, hi;  \
	VMOVUPS lo, (DX);    \
	VMOVUPS hi, 64(DX);  \
	ADDQ    R8, DX

#define PREFETCH_ROW \
	PREFETCHT0 (R9);    \
	PREFETCHT0 64(R9);  \
	PREFETCHT0 124(R9); \
	ADDQ       R8, R9

// The accumulator tile's set-up and write-back, shared by every variant of
// the 8×32 kernel (and of its 8×16 half).
#define ZERO_TILE512 \
	VPXORD Z16, Z16, Z16; VPXORD Z17, Z17, Z17; VPXORD Z18, Z18, Z18; VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; VPXORD Z21, Z21, Z21; VPXORD Z22, Z22, Z22; VPXORD Z23, Z23, Z23; \
	VPXORD Z24, Z24, Z24; VPXORD Z25, Z25, Z25; VPXORD Z26, Z26, Z26; VPXORD Z27, Z27, Z27; \
	VPXORD Z28, Z28, Z28; VPXORD Z29, Z29, Z29; VPXORD Z30, Z30, Z30; VPXORD Z31, Z31, Z31

#define STORE_TILE512_ZERO \
	ROW512_ZERO(Z16, Z17); ROW512_ZERO(Z18, Z19); ROW512_ZERO(Z20, Z21); ROW512_ZERO(Z22, Z23); \
	ROW512_ZERO(Z24, Z25); ROW512_ZERO(Z26, Z27); ROW512_ZERO(Z28, Z29); ROW512_ZERO(Z30, Z31)

#define STORE_TILE512_BETA \
	ROW512_BETA(Z16, Z17); ROW512_BETA(Z18, Z19); ROW512_BETA(Z20, Z21); ROW512_BETA(Z22, Z23); \
	ROW512_BETA(Z24, Z25); ROW512_BETA(Z26, Z27); ROW512_BETA(Z28, Z29); ROW512_BETA(Z30, Z31)

// MICRO_BODY512 is microAVX512 up to the write-back (as MICRO_BODY in
// kernel_avx2_amd64.s): the 8×32 tile accumulated, alpha in Z0, beta in
// Z1, and a jump to general unless beta is zero.
#define MICRO_BODY512 \
	MICRO_ARGS;       \
	MOVQ DX, R9;      \
	PREFETCH_ROW; PREFETCH_ROW; PREFETCH_ROW; PREFETCH_ROW; \
	PREFETCH_ROW; PREFETCH_ROW; PREFETCH_ROW; PREFETCH_ROW; \
	ZERO_TILE512;     \
	K_LOOP(STEP512)   \
	ALPHA_BETA(Z0, Z1, X1)

// STORE_ROWS512(ROW) writes the tile's first R11 rows with ROW, then jumps
// to done.
#define STORE_ROWS512(ROW) \
	ROW(Z16, Z17); DECQ R11; JZ done; \
	ROW(Z18, Z19); DECQ R11; JZ done; \
	ROW(Z20, Z21); DECQ R11; JZ done; \
	ROW(Z22, Z23); DECQ R11; JZ done; \
	ROW(Z24, Z25); DECQ R11; JZ done; \
	ROW(Z26, Z27); DECQ R11; JZ done; \
	ROW(Z28, Z29); DECQ R11; JZ done; \
	ROW(Z30, Z31); JMP done

// func microAVX512(kc int, a, b, c *float32, ldb, ldc int, alpha, beta float32)
TEXT ·microAVX512(SB), NOSPLIT, $0-56
	MICRO_BODY512
	STORE_TILE512_ZERO
	VZEROUPPER
	RET

general:
	STORE_TILE512_BETA
	VZEROUPPER
	RET

// func microAVX512Rows(kc int, a, b, c *float32, ldb, ldc int, alpha, beta float32, rows int)
//
// microAVX512 writing only the tile's first rows rows (1 to 8) of C
// (microAVX2Rows' contract).
TEXT ·microAVX512Rows(SB), NOSPLIT, $0-64
	MICRO_BODY512
	MOVQ rows+56(FP), R11
	STORE_ROWS512(ROW512_ZERO)

general:
	MOVQ rows+56(FP), R11
	STORE_ROWS512(ROW512_BETA)

done:
	VZEROUPPER
	RET

// The 8×16 half of the kernel above, for a last B panel of at most 16
// columns (n = 196 for a 14×14 feature map leaves 4): it does half the work
// of the full tile on zero padding. Same arithmetic per element.
//	Z0 one k-row of B (16 floats)  Z2, Z3 broadcasts  Z16..Z23 accumulators
#define STEP512H \
	VMOVUPS      (DI), Z0;         \
	VBROADCASTSS (SI), Z2;         \
	VBROADCASTSS 4(SI), Z3;        \
	VFMADD231PS  Z0, Z2, Z16;      \
	VFMADD231PS  Z0, Z3, Z17;      \
	VBROADCASTSS 8(SI), Z2;        \
	VBROADCASTSS 12(SI), Z3;       \
	VFMADD231PS  Z0, Z2, Z18;      \
	VFMADD231PS  Z0, Z3, Z19;      \
	VBROADCASTSS 16(SI), Z2;       \
	VBROADCASTSS 20(SI), Z3;       \
	VFMADD231PS  Z0, Z2, Z20;      \
	VFMADD231PS  Z0, Z3, Z21;      \
	VBROADCASTSS 24(SI), Z2;       \
	VBROADCASTSS 28(SI), Z3;       \
	VFMADD231PS  Z0, Z2, Z22;      \
	VFMADD231PS  Z0, Z3, Z23;      \
	ADDQ         $32, SI;          \
	ADDQ         R10, DI

#define ROW512H_BETA(acc) \
	VMULPS      (DX), Z1, Z2; \
	VFMADD231PS Z0, acc, Z2;  \
	VMOVUPS     Z2, (DX);     \
	ADDQ        R8, DX

#define ROW512H_ZERO(acc) \
	VMULPS  Z0, acc, acc; \
	VMOVUPS acc, (DX);    \
	ADDQ    R8, DX

#define ZERO_HALF512 \
	VPXORD Z16, Z16, Z16; VPXORD Z17, Z17, Z17; VPXORD Z18, Z18, Z18; VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; VPXORD Z21, Z21, Z21; VPXORD Z22, Z22, Z22; VPXORD Z23, Z23, Z23

#define STORE_HALF512_ZERO \
	ROW512H_ZERO(Z16); ROW512H_ZERO(Z17); ROW512H_ZERO(Z18); ROW512H_ZERO(Z19); \
	ROW512H_ZERO(Z20); ROW512H_ZERO(Z21); ROW512H_ZERO(Z22); ROW512H_ZERO(Z23)

#define STORE_HALF512_BETA \
	ROW512H_BETA(Z16); ROW512H_BETA(Z17); ROW512H_BETA(Z18); ROW512H_BETA(Z19); \
	ROW512H_BETA(Z20); ROW512H_BETA(Z21); ROW512H_BETA(Z22); ROW512H_BETA(Z23)

// func microAVX512Half(kc int, a, b, c *float32, ldb, ldc int, alpha, beta float32)
TEXT ·microAVX512Half(SB), NOSPLIT, $0-56
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldb+32(FP), R10
	SHLQ $2, R10
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8

	ZERO_HALF512

	MOVQ CX, BX
	SHRQ $2, BX
	JZ   htail

hloop4:
	STEP512H
	STEP512H
	STEP512H
	STEP512H
	DECQ BX
	JNZ  hloop4

htail:
	ANDQ $3, CX
	JZ   hupdate

hloop1:
	STEP512H
	DECQ CX
	JNZ  hloop1

hupdate:
	VBROADCASTSS alpha+48(FP), Z0
	VBROADCASTSS beta+52(FP), Z1
	VXORPS       X2, X2, X2
	VUCOMISS     X2, X1
	JNE          hgeneral
	JP           hgeneral

	STORE_HALF512_ZERO
	VZEROUPPER
	RET

hgeneral:
	STORE_HALF512_BETA
	VZEROUPPER
	RET

// The 8×32 kernel with A read in place (see microAVX2A): row i of the A
// micro-panel is a[i*lda + p]. Rows are addressed from three bases, SI,
// R12 = SI + 3·lda and R13 = SI + 6·lda, with R11 = lda in bytes:
// 0 (SI), 1 (SI)(R11), 2 (SI)(2·R11), 3 (R12), 4 (SI)(4·R11),
// 5 (R12)(2·R11), 6 (R13), 7 (R12)(4·R11).
#define STEP512A \
	VMOVUPS      (DI), Z0;           \
	VMOVUPS      64(DI), Z1;         \
	VBROADCASTSS (SI), Z2;           \
	VBROADCASTSS (SI)(R11*1), Z3;    \
	VFMADD231PS  Z0, Z2, Z16;        \
	VFMADD231PS  Z1, Z2, Z17;        \
	VFMADD231PS  Z0, Z3, Z18;        \
	VFMADD231PS  Z1, Z3, Z19;        \
	VBROADCASTSS (SI)(R11*2), Z2;    \
	VBROADCASTSS (R12), Z3;          \
	VFMADD231PS  Z0, Z2, Z20;        \
	VFMADD231PS  Z1, Z2, Z21;        \
	VFMADD231PS  Z0, Z3, Z22;        \
	VFMADD231PS  Z1, Z3, Z23;        \
	VBROADCASTSS (SI)(R11*4), Z2;    \
	VBROADCASTSS (R12)(R11*2), Z3;   \
	VFMADD231PS  Z0, Z2, Z24;        \
	VFMADD231PS  Z1, Z2, Z25;        \
	VFMADD231PS  Z0, Z3, Z26;        \
	VFMADD231PS  Z1, Z3, Z27;        \
	VBROADCASTSS (R13), Z2;          \
	VBROADCASTSS (R12)(R11*4), Z3;   \
	VFMADD231PS  Z0, Z2, Z28;        \
	VFMADD231PS  Z1, Z2, Z29;        \
	VFMADD231PS  Z0, Z3, Z30;        \
	VFMADD231PS  Z1, Z3, Z31;        \
	ADDQ         $4, SI;             \
	ADDQ         $4, R12;            \
	ADDQ         $4, R13;            \
	ADDQ         R10, DI

// func microAVX512A(kc int, a *float32, lda int, b, c *float32, ldb, ldc int, alpha, beta float32)
TEXT ·microAVX512A(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R11
	SHLQ $2, R11
	LEAQ (SI)(R11*2), R12
	ADDQ R11, R12
	LEAQ (R12)(R11*2), R13
	ADDQ R11, R13
	MOVQ b+24(FP), DI
	MOVQ c+32(FP), DX
	MOVQ ldb+40(FP), R10
	SHLQ $2, R10
	MOVQ ldc+48(FP), R8
	SHLQ $2, R8

	ZERO_TILE512

	MOVQ CX, BX
	SHRQ $2, BX
	JZ   atail

aloop4:
	STEP512A
	STEP512A
	STEP512A
	STEP512A
	DECQ BX
	JNZ  aloop4

atail:
	ANDQ $3, CX
	JZ   aupdate

aloop1:
	STEP512A
	DECQ CX
	JNZ  aloop1

aupdate:
	VBROADCASTSS alpha+56(FP), Z0
	VBROADCASTSS beta+60(FP), Z1
	VXORPS       X2, X2, X2
	VUCOMISS     X2, X1
	JNE          ageneral
	JP           ageneral

	STORE_TILE512_ZERO
	VZEROUPPER
	RET

ageneral:
	STORE_TILE512_BETA
	VZEROUPPER
	RET

// The 8×32 kernel with B gathered (see microAVX2G): k-row p of the B
// micro-panel is b[rows[p]:] (32 floats).
#define STEP512G \
	MOVQ         (R11), R9;        \
	ADDQ         $8, R11;          \
	VMOVUPS      (DI)(R9*4), Z0;   \
	VMOVUPS      64(DI)(R9*4), Z1; \
	VBROADCASTSS (SI), Z2;         \
	VBROADCASTSS 4(SI), Z3;        \
	VFMADD231PS  Z0, Z2, Z16;      \
	VFMADD231PS  Z1, Z2, Z17;      \
	VFMADD231PS  Z0, Z3, Z18;      \
	VFMADD231PS  Z1, Z3, Z19;      \
	VBROADCASTSS 8(SI), Z2;        \
	VBROADCASTSS 12(SI), Z3;       \
	VFMADD231PS  Z0, Z2, Z20;      \
	VFMADD231PS  Z1, Z2, Z21;      \
	VFMADD231PS  Z0, Z3, Z22;      \
	VFMADD231PS  Z1, Z3, Z23;      \
	VBROADCASTSS 16(SI), Z2;       \
	VBROADCASTSS 20(SI), Z3;       \
	VFMADD231PS  Z0, Z2, Z24;      \
	VFMADD231PS  Z1, Z2, Z25;      \
	VFMADD231PS  Z0, Z3, Z26;      \
	VFMADD231PS  Z1, Z3, Z27;      \
	VBROADCASTSS 24(SI), Z2;       \
	VBROADCASTSS 28(SI), Z3;       \
	VFMADD231PS  Z0, Z2, Z28;      \
	VFMADD231PS  Z1, Z2, Z29;      \
	VFMADD231PS  Z0, Z3, Z30;      \
	VFMADD231PS  Z1, Z3, Z31;      \
	ADDQ         $32, SI

// func microAVX512G(kc int, a *float32, rows *int, b, c *float32, ldc int, alpha, beta float32)
TEXT ·microAVX512G(SB), NOSPLIT, $0-56
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rows+16(FP), R11
	MOVQ b+24(FP), DI
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8

	ZERO_TILE512

	MOVQ CX, BX
	SHRQ $2, BX
	JZ   gtail

gloop4:
	STEP512G
	STEP512G
	STEP512G
	STEP512G
	DECQ BX
	JNZ  gloop4

gtail:
	ANDQ $3, CX
	JZ   gupdate

gloop1:
	STEP512G
	DECQ CX
	JNZ  gloop1

gupdate:
	VBROADCASTSS alpha+48(FP), Z0
	VBROADCASTSS beta+52(FP), Z1
	VXORPS       X2, X2, X2
	VUCOMISS     X2, X1
	JNE          ggeneral
	JP           ggeneral

	STORE_TILE512_ZERO
	VZEROUPPER
	RET

ggeneral:
	STORE_TILE512_BETA
	VZEROUPPER
	RET

// The 8×32 kernel with A's rows gathered (see microAVX2AG): row i of the A
// micro-panel is a[rows[i]:]. The eight row addresses stay in AX, BX, SI,
// R8, R9, R10, R11, R12 and R13 is the byte offset of the current k step,
// so B must be packed (k-rows nr = 32 floats apart; ldb is not read) and C
// and ldc are loaded only for the update.
#define ROWS8 \
	MOVQ (R13), AX;          \
	LEAQ (SI)(AX*4), AX;     \
	MOVQ 8(R13), BX;         \
	LEAQ (SI)(BX*4), BX;     \
	MOVQ 24(R13), R8;        \
	LEAQ (SI)(R8*4), R8;     \
	MOVQ 32(R13), R9;        \
	LEAQ (SI)(R9*4), R9;     \
	MOVQ 40(R13), R10;       \
	LEAQ (SI)(R10*4), R10;   \
	MOVQ 48(R13), R11;       \
	LEAQ (SI)(R11*4), R11;   \
	MOVQ 56(R13), R12;       \
	LEAQ (SI)(R12*4), R12;   \
	MOVQ 16(R13), R13;       \
	LEAQ (SI)(R13*4), SI;    \
	XORQ R13, R13

#define STEP512AG \
	VMOVUPS      (DI), Z0;          \
	VMOVUPS      64(DI), Z1;        \
	VBROADCASTSS (AX)(R13*1), Z2;   \
	VBROADCASTSS (BX)(R13*1), Z3;   \
	VFMADD231PS  Z0, Z2, Z16;       \
	VFMADD231PS  Z1, Z2, Z17;       \
	VFMADD231PS  Z0, Z3, Z18;       \
	VFMADD231PS  Z1, Z3, Z19;       \
	VBROADCASTSS (SI)(R13*1), Z2;   \
	VBROADCASTSS (R8)(R13*1), Z3;   \
	VFMADD231PS  Z0, Z2, Z20;       \
	VFMADD231PS  Z1, Z2, Z21;       \
	VFMADD231PS  Z0, Z3, Z22;       \
	VFMADD231PS  Z1, Z3, Z23;       \
	VBROADCASTSS (R9)(R13*1), Z2;   \
	VBROADCASTSS (R10)(R13*1), Z3;  \
	VFMADD231PS  Z0, Z2, Z24;       \
	VFMADD231PS  Z1, Z2, Z25;       \
	VFMADD231PS  Z0, Z3, Z26;       \
	VFMADD231PS  Z1, Z3, Z27;       \
	VBROADCASTSS (R11)(R13*1), Z2;  \
	VBROADCASTSS (R12)(R13*1), Z3;  \
	VFMADD231PS  Z0, Z2, Z28;       \
	VFMADD231PS  Z1, Z2, Z29;       \
	VFMADD231PS  Z0, Z3, Z30;       \
	VFMADD231PS  Z1, Z3, Z31;       \
	ADDQ         $4, R13;           \
	ADDQ         $128, DI

// func microAVX512AG(kc int, a *float32, rows *int, b, c *float32, ldb, ldc int, alpha, beta float32)
TEXT ·microAVX512AG(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rows+16(FP), R13
	ROWS8
	MOVQ b+24(FP), DI

	ZERO_TILE512

agloop4:
	CMPQ CX, $4
	JLT  agtail
	STEP512AG
	STEP512AG
	STEP512AG
	STEP512AG
	SUBQ $4, CX
	JMP  agloop4

agtail:
	TESTQ CX, CX
	JZ    agupdate
	STEP512AG
	DECQ  CX
	JMP   agtail

agupdate:
	MOVQ         c+32(FP), DX
	MOVQ         ldc+48(FP), R8
	SHLQ         $2, R8
	VBROADCASTSS alpha+56(FP), Z0
	VBROADCASTSS beta+60(FP), Z1
	VXORPS       X2, X2, X2
	VUCOMISS     X2, X1
	JNE          aggeneral
	JP           aggeneral

	STORE_TILE512_ZERO
	VZEROUPPER
	RET

aggeneral:
	STORE_TILE512_BETA
	VZEROUPPER
	RET

// The 8×16 half of microAVX512AG.
#define STEP512AGH \
	VMOVUPS      (DI), Z0;          \
	VBROADCASTSS (AX)(R13*1), Z2;   \
	VBROADCASTSS (BX)(R13*1), Z3;   \
	VFMADD231PS  Z0, Z2, Z16;       \
	VFMADD231PS  Z0, Z3, Z17;       \
	VBROADCASTSS (SI)(R13*1), Z2;   \
	VBROADCASTSS (R8)(R13*1), Z3;   \
	VFMADD231PS  Z0, Z2, Z18;       \
	VFMADD231PS  Z0, Z3, Z19;       \
	VBROADCASTSS (R9)(R13*1), Z2;   \
	VBROADCASTSS (R10)(R13*1), Z3;  \
	VFMADD231PS  Z0, Z2, Z20;       \
	VFMADD231PS  Z0, Z3, Z21;       \
	VBROADCASTSS (R11)(R13*1), Z2;  \
	VBROADCASTSS (R12)(R13*1), Z3;  \
	VFMADD231PS  Z0, Z2, Z22;       \
	VFMADD231PS  Z0, Z3, Z23;       \
	ADDQ         $4, R13;           \
	ADDQ         $128, DI

// func microAVX512AGHalf(kc int, a *float32, rows *int, b, c *float32, ldb, ldc int, alpha, beta float32)
TEXT ·microAVX512AGHalf(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rows+16(FP), R13
	ROWS8
	MOVQ b+24(FP), DI

	ZERO_HALF512

aghloop4:
	CMPQ CX, $4
	JLT  aghtail
	STEP512AGH
	STEP512AGH
	STEP512AGH
	STEP512AGH
	SUBQ $4, CX
	JMP  aghloop4

aghtail:
	TESTQ CX, CX
	JZ    aghupdate
	STEP512AGH
	DECQ  CX
	JMP   aghtail

aghupdate:
	MOVQ         c+32(FP), DX
	MOVQ         ldc+48(FP), R8
	SHLQ         $2, R8
	VBROADCASTSS alpha+56(FP), Z0
	VBROADCASTSS beta+60(FP), Z1
	VXORPS       X2, X2, X2
	VUCOMISS     X2, X1
	JNE          aghgeneral
	JP           aghgeneral

	STORE_HALF512_ZERO
	VZEROUPPER
	RET

aghgeneral:
	STORE_HALF512_BETA
	VZEROUPPER
	RET
