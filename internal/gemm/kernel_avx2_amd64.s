//go:build amd64 && !purego

#include "textflag.h"
#include "micro_amd64.h"

// AVX2/FMA micro-kernel, 6×16 register tile (the BLIS Haswell sgemm shape).
// Register use:
//	Y0, Y1    one k-row of the B micro-panel (16 floats)
//	Y2, Y3    broadcasts of two elements of the A micro-panel
//	Y4..Y15   the 6×16 accumulator tile, row i in Y(4+2i), Y(5+2i)
// Each k step issues 12 independent FMAs; 12 chains cover the 4-cycle FMA
// latency on two FMA pipes with room to spare.
//	SI  A micro-panel (6 floats per k)   DI  B micro-panel (16 floats per k, R10 bytes apart)
//	DX  C tile                           R8  ldc in bytes
//	CX  k steps left                     BX  unrolled iterations

// One k step: acc[i][:] += a[i] * b[:] for the 6 rows, then advance.
#define STEP \
	VMOVUPS      (DI), Y0;        \
	VMOVUPS      32(DI), Y1;      \
	VBROADCASTSS (SI), Y2;        \
	VBROADCASTSS 4(SI), Y3;       \
	VFMADD231PS  Y0, Y2, Y4;      \
	VFMADD231PS  Y1, Y2, Y5;      \
	VFMADD231PS  Y0, Y3, Y6;      \
	VFMADD231PS  Y1, Y3, Y7;      \
	VBROADCASTSS 8(SI), Y2;       \
	VBROADCASTSS 12(SI), Y3;      \
	VFMADD231PS  Y0, Y2, Y8;      \
	VFMADD231PS  Y1, Y2, Y9;      \
	VFMADD231PS  Y0, Y3, Y10;     \
	VFMADD231PS  Y1, Y3, Y11;     \
	VBROADCASTSS 16(SI), Y2;      \
	VBROADCASTSS 20(SI), Y3;      \
	VFMADD231PS  Y0, Y2, Y12;     \
	VFMADD231PS  Y1, Y2, Y13;     \
	VFMADD231PS  Y0, Y3, Y14;     \
	VFMADD231PS  Y1, Y3, Y15;     \
	ADDQ         $24, SI;         \
	ADDQ         R10, DI

// C row update, general beta: c = alpha*acc + beta*c, as one FMA onto the
// rounded beta*c. Y0 holds alpha, Y1 beta.
#define ROW_BETA(lo, hi) \
	VMULPS      (DX), Y1, Y2;   \
	VMULPS      32(DX), Y1, Y3; \
	VFMADD231PS Y0, lo, Y2;     \
	VFMADD231PS Y0, hi, Y3;     \
	VMOVUPS     Y2, (DX);       \
	VMOVUPS     Y3, 32(DX);     \
	ADDQ        R8, DX

// C row update, beta == 0: c = alpha*acc without reading c.
#define ROW_ZERO(lo, hi) \
	VMULPS  Y0, lo, lo;   \
	VMULPS  Y0, hi, hi;   \
	VMOVUPS lo, (DX);     \
	VMOVUPS hi, 32(DX);   \
	ADDQ    R8, DX

// The accumulator tile's set-up and write-back, shared by every variant of
// the 6×16 kernel (and of its 6×8 half).
#define ZERO_TILE \
	VXORPS Y4, Y4, Y4; VXORPS Y5, Y5, Y5; VXORPS Y6, Y6, Y6;    \
	VXORPS Y7, Y7, Y7; VXORPS Y8, Y8, Y8; VXORPS Y9, Y9, Y9;    \
	VXORPS Y10, Y10, Y10; VXORPS Y11, Y11, Y11; VXORPS Y12, Y12, Y12; \
	VXORPS Y13, Y13, Y13; VXORPS Y14, Y14, Y14; VXORPS Y15, Y15, Y15

#define STORE_TILE_ZERO \
	ROW_ZERO(Y4, Y5); ROW_ZERO(Y6, Y7); ROW_ZERO(Y8, Y9); \
	ROW_ZERO(Y10, Y11); ROW_ZERO(Y12, Y13); ROW_ZERO(Y14, Y15)

#define STORE_TILE_BETA \
	ROW_BETA(Y4, Y5); ROW_BETA(Y6, Y7); ROW_BETA(Y8, Y9); \
	ROW_BETA(Y10, Y11); ROW_BETA(Y12, Y13); ROW_BETA(Y14, Y15)

// PREFETCH_ROW starts pulling the C row at R9 (64 bytes) into cache and
// moves R9 to the next row.
#define PREFETCH_ROW PREFETCHT0 (R9); PREFETCHT0 60(R9); ADDQ R8, R9

// STORE_ROWS(ROW) writes the tile's first R11 rows with ROW (ROW_ZERO or
// ROW_BETA), then jumps to done.
#define STORE_ROWS(ROW) \
	ROW(Y4, Y5); DECQ R11; JZ done;   \
	ROW(Y6, Y7); DECQ R11; JZ done;   \
	ROW(Y8, Y9); DECQ R11; JZ done;   \
	ROW(Y10, Y11); DECQ R11; JZ done; \
	ROW(Y12, Y13); DECQ R11; JZ done; \
	ROW(Y14, Y15); JMP done

// MICRO_BODY is microAVX2 up to the write-back: the arguments kc, a, b,
// c, ldb and ldc loaded, the 6×16 tile accumulated over kc steps, alpha in
// Y0 and beta in Y1, and a jump to general unless beta is zero. It is
// shared by microAVX2 and microAVX2Rows, which differ only in how many
// rows they write (labels are local to each TEXT block).
#define MICRO_BODY \
	MICRO_ARGS;       \
	MOVQ DX, R9;      \
	PREFETCH_ROW; PREFETCH_ROW; PREFETCH_ROW; \
	PREFETCH_ROW; PREFETCH_ROW; PREFETCH_ROW; \
	ZERO_TILE;        \
	K_LOOP(STEP)      \
	ALPHA_BETA(Y0, Y1, X1)

// func microAVX2(kc int, a, b, c *float32, ldb, ldc int, alpha, beta float32)
//
// The C tile's rows start being pulled into cache at the start (they are
// needed only at the end).
TEXT ·microAVX2(SB), NOSPLIT, $0-56
	MICRO_BODY
	STORE_TILE_ZERO
	VZEROUPPER
	RET

general:
	STORE_TILE_BETA
	VZEROUPPER
	RET

// func microAVX2Rows(kc int, a, b, c *float32, ldb, ldc int, alpha, beta float32, rows int)
//
// microAVX2 writing only the tile's first rows rows (1 to 6) of C: a
// ragged last row panel (zero-padded when packed) goes straight to C
// instead of through a scratch tile and a copy. Same arithmetic per
// element. R11 counts the rows left to write.
TEXT ·microAVX2Rows(SB), NOSPLIT, $0-64
	MICRO_BODY
	MOVQ rows+56(FP), R11
	STORE_ROWS(ROW_ZERO)

general:
	MOVQ rows+56(FP), R11
	STORE_ROWS(ROW_BETA)

done:
	VZEROUPPER
	RET

// The 6×8 half of the kernel above, for a last B panel of at most 8
// columns. Same arithmetic per element.
//	Y0 one k-row of B (8 floats)  Y2, Y3 broadcasts  Y4..Y9 accumulators
#define STEPH \
	VMOVUPS      (DI), Y0;    \
	VBROADCASTSS (SI), Y2;    \
	VBROADCASTSS 4(SI), Y3;   \
	VFMADD231PS  Y0, Y2, Y4;  \
	VFMADD231PS  Y0, Y3, Y5;  \
	VBROADCASTSS 8(SI), Y2;   \
	VBROADCASTSS 12(SI), Y3;  \
	VFMADD231PS  Y0, Y2, Y6;  \
	VFMADD231PS  Y0, Y3, Y7;  \
	VBROADCASTSS 16(SI), Y2;  \
	VBROADCASTSS 20(SI), Y3;  \
	VFMADD231PS  Y0, Y2, Y8;  \
	VFMADD231PS  Y0, Y3, Y9;  \
	ADDQ         $24, SI;     \
	ADDQ         R10, DI

#define ROWH_BETA(acc) \
	VMULPS      (DX), Y1, Y2; \
	VFMADD231PS Y0, acc, Y2;  \
	VMOVUPS     Y2, (DX);     \
	ADDQ        R8, DX

#define ROWH_ZERO(acc) \
	VMULPS  Y0, acc, acc; \
	VMOVUPS acc, (DX);    \
	ADDQ    R8, DX

#define ZERO_HALF \
	VXORPS Y4, Y4, Y4; VXORPS Y5, Y5, Y5; VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; VXORPS Y8, Y8, Y8; VXORPS Y9, Y9, Y9

#define STORE_HALF_ZERO \
	ROWH_ZERO(Y4); ROWH_ZERO(Y5); ROWH_ZERO(Y6); \
	ROWH_ZERO(Y7); ROWH_ZERO(Y8); ROWH_ZERO(Y9)

#define STORE_HALF_BETA \
	ROWH_BETA(Y4); ROWH_BETA(Y5); ROWH_BETA(Y6); \
	ROWH_BETA(Y7); ROWH_BETA(Y8); ROWH_BETA(Y9)

// func microAVX2Half(kc int, a, b, c *float32, ldb, ldc int, alpha, beta float32)
TEXT ·microAVX2Half(SB), NOSPLIT, $0-56
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldb+32(FP), R10
	SHLQ $2, R10
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8

	ZERO_HALF

	MOVQ CX, BX
	SHRQ $2, BX
	JZ   htail

hloop4:
	STEPH
	STEPH
	STEPH
	STEPH
	DECQ BX
	JNZ  hloop4

htail:
	ANDQ $3, CX
	JZ   hupdate

hloop1:
	STEPH
	DECQ CX
	JNZ  hloop1

hupdate:
	VBROADCASTSS alpha+48(FP), Y0
	VBROADCASTSS beta+52(FP), Y1
	VXORPS       X2, X2, X2
	VUCOMISS     X2, X1
	JNE          hgeneral
	JP           hgeneral

	STORE_HALF_ZERO
	VZEROUPPER
	RET

hgeneral:
	STORE_HALF_BETA
	VZEROUPPER
	RET

// The 6×16 kernel with A read in place: row i of the A micro-panel is
// a[i*lda + p] (A's rows k-contiguous, as a weight matrix stored out × in),
// not a packed panel. Same arithmetic per element as microAVX2, so the
// result is the same bits. Rows 0–2 are addressed from SI, rows 3–5 from
// R12 = SI + 3·lda; R11 is lda in bytes.
#define STEPA \
	VMOVUPS      (DI), Y0;           \
	VMOVUPS      32(DI), Y1;         \
	VBROADCASTSS (SI), Y2;           \
	VBROADCASTSS (SI)(R11*1), Y3;    \
	VFMADD231PS  Y0, Y2, Y4;         \
	VFMADD231PS  Y1, Y2, Y5;         \
	VFMADD231PS  Y0, Y3, Y6;         \
	VFMADD231PS  Y1, Y3, Y7;         \
	VBROADCASTSS (SI)(R11*2), Y2;    \
	VBROADCASTSS (R12), Y3;          \
	VFMADD231PS  Y0, Y2, Y8;         \
	VFMADD231PS  Y1, Y2, Y9;         \
	VFMADD231PS  Y0, Y3, Y10;        \
	VFMADD231PS  Y1, Y3, Y11;        \
	VBROADCASTSS (R12)(R11*1), Y2;   \
	VBROADCASTSS (R12)(R11*2), Y3;   \
	VFMADD231PS  Y0, Y2, Y12;        \
	VFMADD231PS  Y1, Y2, Y13;        \
	VFMADD231PS  Y0, Y3, Y14;        \
	VFMADD231PS  Y1, Y3, Y15;        \
	ADDQ         $4, SI;             \
	ADDQ         $4, R12;            \
	ADDQ         R10, DI

// func microAVX2A(kc int, a *float32, lda int, b, c *float32, ldb, ldc int, alpha, beta float32)
TEXT ·microAVX2A(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R11
	SHLQ $2, R11
	LEAQ (SI)(R11*2), R12
	ADDQ R11, R12
	MOVQ b+24(FP), DI
	MOVQ c+32(FP), DX
	MOVQ ldb+40(FP), R10
	SHLQ $2, R10
	MOVQ ldc+48(FP), R8
	SHLQ $2, R8

	ZERO_TILE

	MOVQ CX, BX
	SHRQ $2, BX
	JZ   atail

aloop4:
	STEPA
	STEPA
	STEPA
	STEPA
	DECQ BX
	JNZ  aloop4

atail:
	ANDQ $3, CX
	JZ   aupdate

aloop1:
	STEPA
	DECQ CX
	JNZ  aloop1

aupdate:
	VBROADCASTSS alpha+56(FP), Y0
	VBROADCASTSS beta+60(FP), Y1
	VXORPS       X2, X2, X2
	VUCOMISS     X2, X1
	JNE          ageneral
	JP           ageneral

	STORE_TILE_ZERO
	VZEROUPPER
	RET

ageneral:
	STORE_TILE_BETA
	VZEROUPPER
	RET

// The 6×16 kernel with B gathered: k-row p of the B micro-panel is
// b[rows[p]:] (16 floats), rows an []int of offsets (a convolution's input
// read in place, each row of its column matrix one run of the padded
// image). Same arithmetic per element as microAVX2.
//	R11 rows (8 bytes per k step)   R9 the current row's offset
#define STEPG \
	MOVQ         (R11), R9;       \
	ADDQ         $8, R11;         \
	VMOVUPS      (DI)(R9*4), Y0;  \
	VMOVUPS      32(DI)(R9*4), Y1; \
	VBROADCASTSS (SI), Y2;        \
	VBROADCASTSS 4(SI), Y3;       \
	VFMADD231PS  Y0, Y2, Y4;      \
	VFMADD231PS  Y1, Y2, Y5;      \
	VFMADD231PS  Y0, Y3, Y6;      \
	VFMADD231PS  Y1, Y3, Y7;      \
	VBROADCASTSS 8(SI), Y2;       \
	VBROADCASTSS 12(SI), Y3;      \
	VFMADD231PS  Y0, Y2, Y8;      \
	VFMADD231PS  Y1, Y2, Y9;      \
	VFMADD231PS  Y0, Y3, Y10;     \
	VFMADD231PS  Y1, Y3, Y11;     \
	VBROADCASTSS 16(SI), Y2;      \
	VBROADCASTSS 20(SI), Y3;      \
	VFMADD231PS  Y0, Y2, Y12;     \
	VFMADD231PS  Y1, Y2, Y13;     \
	VFMADD231PS  Y0, Y3, Y14;     \
	VFMADD231PS  Y1, Y3, Y15;     \
	ADDQ         $24, SI

// func microAVX2G(kc int, a *float32, rows *int, b, c *float32, ldc int, alpha, beta float32)
TEXT ·microAVX2G(SB), NOSPLIT, $0-56
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rows+16(FP), R11
	MOVQ b+24(FP), DI
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8

	ZERO_TILE

	MOVQ CX, BX
	SHRQ $2, BX
	JZ   gtail

gloop4:
	STEPG
	STEPG
	STEPG
	STEPG
	DECQ BX
	JNZ  gloop4

gtail:
	ANDQ $3, CX
	JZ   gupdate

gloop1:
	STEPG
	DECQ CX
	JNZ  gloop1

gupdate:
	VBROADCASTSS alpha+48(FP), Y0
	VBROADCASTSS beta+52(FP), Y1
	VXORPS       X2, X2, X2
	VUCOMISS     X2, X1
	JNE          ggeneral
	JP           ggeneral

	STORE_TILE_ZERO
	VZEROUPPER
	RET

ggeneral:
	STORE_TILE_BETA
	VZEROUPPER
	RET

// The 6×16 kernel with A's rows gathered: row i of the A micro-panel is
// a[rows[i]:] (kc floats), rows an []int of offsets (a convolution's column
// matrix read in place from its padded input). Same arithmetic per element
// as microAVX2. The six row addresses stay in AX, BX, SI, R9, R11, R12;
// R13 is the byte offset of the current k step in every row.
#define STEPAG \
	VMOVUPS      (DI), Y0;          \
	VMOVUPS      32(DI), Y1;        \
	VBROADCASTSS (AX)(R13*1), Y2;   \
	VBROADCASTSS (BX)(R13*1), Y3;   \
	VFMADD231PS  Y0, Y2, Y4;        \
	VFMADD231PS  Y1, Y2, Y5;        \
	VFMADD231PS  Y0, Y3, Y6;        \
	VFMADD231PS  Y1, Y3, Y7;        \
	VBROADCASTSS (SI)(R13*1), Y2;   \
	VBROADCASTSS (R9)(R13*1), Y3;   \
	VFMADD231PS  Y0, Y2, Y8;        \
	VFMADD231PS  Y1, Y2, Y9;        \
	VFMADD231PS  Y0, Y3, Y10;       \
	VFMADD231PS  Y1, Y3, Y11;       \
	VBROADCASTSS (R11)(R13*1), Y2;  \
	VBROADCASTSS (R12)(R13*1), Y3;  \
	VFMADD231PS  Y0, Y2, Y12;       \
	VFMADD231PS  Y1, Y2, Y13;       \
	VFMADD231PS  Y0, Y3, Y14;       \
	VFMADD231PS  Y1, Y3, Y15;       \
	ADDQ         $4, R13;           \
	ADDQ         R10, DI

// ROWS6 loads the six row addresses a + 4·rows[i] (a in SI, rows in R13)
// into AX, BX, SI, R9, R11, R12 (rows 0–5) and zeroes R13; row 2 goes to
// SI last, once the base is no longer needed.
#define ROWS6 \
	MOVQ (R13), AX;          \
	LEAQ (SI)(AX*4), AX;     \
	MOVQ 8(R13), BX;         \
	LEAQ (SI)(BX*4), BX;     \
	MOVQ 24(R13), R9;        \
	LEAQ (SI)(R9*4), R9;     \
	MOVQ 32(R13), R11;       \
	LEAQ (SI)(R11*4), R11;   \
	MOVQ 40(R13), R12;       \
	LEAQ (SI)(R12*4), R12;   \
	MOVQ 16(R13), R13;       \
	LEAQ (SI)(R13*4), SI;    \
	XORQ R13, R13

// func microAVX2AG(kc int, a *float32, rows *int, b, c *float32, ldb, ldc int, alpha, beta float32)
TEXT ·microAVX2AG(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rows+16(FP), R13
	ROWS6
	MOVQ b+24(FP), DI
	MOVQ c+32(FP), DX
	MOVQ ldb+40(FP), R10
	SHLQ $2, R10
	MOVQ ldc+48(FP), R8
	SHLQ $2, R8

	ZERO_TILE

agloop4:
	CMPQ CX, $4
	JLT  agtail
	STEPAG
	STEPAG
	STEPAG
	STEPAG
	SUBQ $4, CX
	JMP  agloop4

agtail:
	TESTQ CX, CX
	JZ    agupdate
	STEPAG
	DECQ  CX
	JMP   agtail

agupdate:
	VBROADCASTSS alpha+56(FP), Y0
	VBROADCASTSS beta+60(FP), Y1
	VXORPS       X2, X2, X2
	VUCOMISS     X2, X1
	JNE          aggeneral
	JP           aggeneral

	STORE_TILE_ZERO
	VZEROUPPER
	RET

aggeneral:
	STORE_TILE_BETA
	VZEROUPPER
	RET

// The 6×8 half of microAVX2AG, for a last B panel of at most 8 columns.
#define STEPAGH \
	VMOVUPS      (DI), Y0;          \
	VBROADCASTSS (AX)(R13*1), Y2;   \
	VBROADCASTSS (BX)(R13*1), Y3;   \
	VFMADD231PS  Y0, Y2, Y4;        \
	VFMADD231PS  Y0, Y3, Y5;        \
	VBROADCASTSS (SI)(R13*1), Y2;   \
	VBROADCASTSS (R9)(R13*1), Y3;   \
	VFMADD231PS  Y0, Y2, Y6;        \
	VFMADD231PS  Y0, Y3, Y7;        \
	VBROADCASTSS (R11)(R13*1), Y2;  \
	VBROADCASTSS (R12)(R13*1), Y3;  \
	VFMADD231PS  Y0, Y2, Y8;        \
	VFMADD231PS  Y0, Y3, Y9;        \
	ADDQ         $4, R13;           \
	ADDQ         R10, DI

// func microAVX2AGHalf(kc int, a *float32, rows *int, b, c *float32, ldb, ldc int, alpha, beta float32)
TEXT ·microAVX2AGHalf(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rows+16(FP), R13
	ROWS6
	MOVQ b+24(FP), DI
	MOVQ c+32(FP), DX
	MOVQ ldb+40(FP), R10
	SHLQ $2, R10
	MOVQ ldc+48(FP), R8
	SHLQ $2, R8

	ZERO_HALF

aghloop4:
	CMPQ CX, $4
	JLT  aghtail
	STEPAGH
	STEPAGH
	STEPAGH
	STEPAGH
	SUBQ $4, CX
	JMP  aghloop4

aghtail:
	TESTQ CX, CX
	JZ    aghupdate
	STEPAGH
	DECQ  CX
	JMP   aghtail

aghupdate:
	VBROADCASTSS alpha+56(FP), Y0
	VBROADCASTSS beta+60(FP), Y1
	VXORPS       X2, X2, X2
	VUCOMISS     X2, X1
	JNE          aghgeneral
	JP           aghgeneral

	STORE_HALF_ZERO
	VZEROUPPER
	RET

aghgeneral:
	STORE_HALF_BETA
	VZEROUPPER
	RET
