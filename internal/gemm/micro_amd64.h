// Pieces shared by the AVX2 and AVX-512 micro-kernels' assembly.

// MICRO_ARGS loads the arguments of kernel.micro's signature:
//	CX kc   SI a   DI b   DX c   R10 ldb in bytes   R8 ldc in bytes
#define MICRO_ARGS \
	MOVQ kc+0(FP), CX;    \
	MOVQ a+8(FP), SI;     \
	MOVQ b+16(FP), DI;    \
	MOVQ c+24(FP), DX;    \
	MOVQ ldb+32(FP), R10; \
	SHLQ $2, R10;         \
	MOVQ ldc+40(FP), R8;  \
	SHLQ $2, R8

// K_LOOP runs STEP CX times, four at a time, then falls through to the
// label update (labels are local to each TEXT block).
#define K_LOOP(STEP) \
	MOVQ CX, BX;  \
	SHRQ $2, BX;  \
	JZ   tail;    \
loop4:            \
	STEP;         \
	STEP;         \
	STEP;         \
	STEP;         \
	DECQ BX;      \
	JNZ  loop4;   \
tail:             \
	ANDQ $3, CX;  \
	JZ   update;  \
loop1:            \
	STEP;         \
	DECQ CX;      \
	JNZ  loop1;   \
update:

// ALPHA_BETA broadcasts alpha into A and beta into B (vector registers
// whose low lane is XB) and jumps to general unless beta is zero (a NaN
// beta is not zero: NaN must propagate).
#define ALPHA_BETA(A, B, XB) \
	VBROADCASTSS alpha+48(FP), A; \
	VBROADCASTSS beta+52(FP), B;  \
	VXORPS       X2, X2, X2;      \
	VUCOMISS     X2, XB;          \
	JNE          general;         \
	JP           general
