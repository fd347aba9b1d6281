//go:build amd64 && !purego

#include "textflag.h"

// Bulk Gaussian kernels (gauss.go, gauss_amd64.go). xoshiro128++ step of
// one state set (s0..s3), output in out (Blackman and Vigna):
//	out = rotl(s0 + s3, 7) + s0
//	t = s1 << 9; s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t
//	s3 = rotl(s3, 11)

// rotl32 for AVX2, which has no vector rotate.
#define ROTL(k, r, tmp) \
	VPSLLD $k, r, tmp;        \
	VPSRLD $(32-k), r, r;     \
	VPOR   tmp, r, r

#define XOSHIRO2(s0, s1, s2, s3, out, t) \
	VPADDD s3, s0, out;  \
	ROTL(7, out, t);     \
	VPADDD s0, out, out; \
	VPSLLD $9, s1, t;    \
	VPXOR  s0, s2, s2;   \
	VPXOR  s1, s3, s3;   \
	VPXOR  s2, s1, s1;   \
	VPXOR  s3, s0, s0;   \
	VPXOR  t, s2, s2;    \
	ROTL(11, s3, t)

// func gaussFillAVX2(w *uint32, n int, s *lanes)
// State: lanes 0-7 in Y0, Y2, Y4, Y6 (s0..s3), lanes 8-15 in Y1, Y3, Y5, Y7.
TEXT ·gaussFillAVX2(SB), NOSPLIT, $0-24
	MOVQ w+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ s+16(FP), SI
	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 64(SI), Y2
	VMOVDQU 96(SI), Y3
	VMOVDQU 128(SI), Y4
	VMOVDQU 160(SI), Y5
	VMOVDQU 192(SI), Y6
	VMOVDQU 224(SI), Y7
	SHRQ    $4, CX

fill2:
	XOSHIRO2(Y0, Y2, Y4, Y6, Y8, Y9)
	XOSHIRO2(Y1, Y3, Y5, Y7, Y10, Y11)
	VMOVDQU Y8, 0(DI)
	VMOVDQU Y10, 32(DI)
	ADDQ    $64, DI
	DECQ    CX
	JNZ     fill2

	VMOVDQU Y0, 0(SI)
	VMOVDQU Y1, 32(SI)
	VMOVDQU Y2, 64(SI)
	VMOVDQU Y3, 96(SI)
	VMOVDQU Y4, 128(SI)
	VMOVDQU Y5, 160(SI)
	VMOVDQU Y6, 192(SI)
	VMOVDQU Y7, 224(SI)
	VZEROUPPER
	RET

// func gaussFillAVX512(w *uint32, n int, s *lanes)
// State: s0..s3 of the 16 lanes in Z0..Z3.
TEXT ·gaussFillAVX512(SB), NOSPLIT, $0-24
	MOVQ      w+0(FP), DI
	MOVQ      n+8(FP), CX
	MOVQ      s+16(FP), SI
	VMOVDQU32 0(SI), Z0
	VMOVDQU32 64(SI), Z1
	VMOVDQU32 128(SI), Z2
	VMOVDQU32 192(SI), Z3
	SHRQ      $4, CX

fill512:
	VPADDD    Z3, Z0, Z4
	VPROLD    $7, Z4, Z4
	VPADDD    Z0, Z4, Z4
	VMOVDQU32 Z4, (DI)
	VPSLLD    $9, Z1, Z5
	VPXORD    Z0, Z2, Z2
	VPXORD    Z1, Z3, Z3
	VPXORD    Z2, Z1, Z1
	VPXORD    Z3, Z0, Z0
	VPXORD    Z5, Z2, Z2
	VPROLD    $11, Z3, Z3
	ADDQ      $64, DI
	DECQ      CX
	JNZ       fill512

	VMOVDQU32 Z0, 0(SI)
	VMOVDQU32 Z1, 64(SI)
	VMOVDQU32 Z2, 128(SI)
	VMOVDQU32 Z3, 192(SI)
	VZEROUPPER
	RET

// The ziggurat's fast path on 8 words at off(SI) and 8 elements at
// off(DI); leaves the accepted lanes' sign bits in reg (VMOVMSKPS).
// Constants: Y15 magnitude mask, Y14 strip mask, Y13 sign bit, Y12 sd,
// Y11 scale; R8 the table.
#define ZIG8(off, reg) \
	VMOVDQU    off(SI), Y0;           \
	VPSRLD     $8, Y0, Y1;            \
	VPAND      Y15, Y1, Y1;           \
	VPAND      Y14, Y0, Y2;           \
	VPCMPEQD   Y3, Y3, Y3;            \
	VPGATHERDD Y3, (R8)(Y2*4), Y4;    \
	VPCMPEQD   Y3, Y3, Y3;            \
	VGATHERDPS Y3, 1024(R8)(Y2*4), Y5; \
	VPCMPGTD   Y1, Y4, Y6;            \
	VCVTDQ2PS  Y1, Y1;                \
	VMULPS     Y5, Y1, Y1;            \
	VPAND      Y13, Y0, Y0;           \
	VPOR       Y0, Y1, Y1;            \
	VMULPS     Y12, Y1, Y1;           \
	VMULPS     off(DI), Y11, Y7;      \
	VADDPS     Y1, Y7, Y8;            \
	VBLENDVPS  Y6, Y8, Y7, Y8;        \
	VMOVUPS    Y8, off(DI);           \
	VMOVMSKPS  Y6, reg

// COMPACT8 appends the rejected lanes of a half block to the index list:
// reg holds the accepted lanes' sign bits (VMOVMSKPS); every lane of Y10
// the half block's first element index; BX is the list's end, R9 the
// compaction table.
#define COMPACT8(reg) \
	NOTL      reg;              \
	ANDL      $0xff, reg;       \
	VMOVQ     (R9)(reg*8), X9;  \
	VPMOVZXBD X9, Y9;           \
	VPADDD    Y10, Y9, Y9;      \
	VMOVDQU   Y9, (BX);         \
	POPCNTL   reg, reg;         \
	LEAQ      (BX)(reg*4), BX;  \
	VPADDD    eight<>(SB), Y10, Y10

DATA eight<>+0(SB)/8, $0x0000000800000008
DATA eight<>+8(SB)/8, $0x0000000800000008
DATA eight<>+16(SB)/8, $0x0000000800000008
DATA eight<>+24(SB)/8, $0x0000000800000008
GLOBL eight<>(SB), RODATA|NOPTR, $32

DATA iota<>+0(SB)/8, $0x0000000100000000
DATA iota<>+8(SB)/8, $0x0000000300000002
DATA iota<>+16(SB)/8, $0x0000000500000004
DATA iota<>+24(SB)/8, $0x0000000700000006
DATA iota<>+32(SB)/8, $0x0000000900000008
DATA iota<>+40(SB)/8, $0x0000000b0000000a
DATA iota<>+48(SB)/8, $0x0000000d0000000c
DATA iota<>+56(SB)/8, $0x0000000f0000000e
GLOBL iota<>(SB), RODATA|NOPTR, $64

// func gaussZigAVX2(dst *float32, w *uint32, n int, tab *zigTab32, scale, sd float32, idx *uint32, lut *[256]uint64) int
TEXT ·gaussZigAVX2(SB), NOSPLIT, $0-64
	MOVQ         dst+0(FP), DI
	MOVQ         w+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVQ         tab+24(FP), R8
	VBROADCASTSS scale+32(FP), Y11
	VBROADCASTSS sd+36(FP), Y12
	MOVQ         idx+40(FP), BX
	MOVQ         lut+48(FP), R9
	MOVQ         BX, R10
	MOVL         $0x7fffff, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	MOVL         $255, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $0x80000000, AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13
	VPXOR        Y10, Y10, Y10
	SHRQ         $3, CX

zig2:
	ZIG8(0, AX)
	COMPACT8(AX)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  zig2
	SUBQ R10, BX
	SHRQ $2, BX
	MOVQ BX, ret+56(FP)
	VZEROUPPER
	RET

// zigEven<> is 0, 2, …, 30: the dword positions of k in two ZMM of
// gathered 64-bit entries.
DATA zigEven<>+0(SB)/8, $0x0000000200000000
DATA zigEven<>+8(SB)/8, $0x0000000600000004
DATA zigEven<>+16(SB)/8, $0x0000000a00000008
DATA zigEven<>+24(SB)/8, $0x0000000e0000000c
DATA zigEven<>+32(SB)/8, $0x0000001200000010
DATA zigEven<>+40(SB)/8, $0x0000001600000014
DATA zigEven<>+48(SB)/8, $0x0000001a00000018
DATA zigEven<>+56(SB)/8, $0x0000001e0000001c
GLOBL zigEven<>(SB), RODATA|NOPTR, $64

// func gaussZigAVX512(dst *float32, w *uint32, n int, tab *[256]uint64, scale, sd float32, idx *uint32) int
// Constants: Z31 magnitude mask, Z30 strip mask, Z29 sign bit, Z28 sd,
// Z27 scale, Z26 and Z25 the even and odd dword indices (the k and w
// halves of the gathered entries), Z23 16 in every lane; Z24 the block's
// element indices; R8 the packed table, BX the index list's end.
TEXT ·gaussZigAVX512(SB), NOSPLIT, $0-56
	MOVQ         dst+0(FP), DI
	MOVQ         w+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVQ         tab+24(FP), R8
	VBROADCASTSS scale+32(FP), Z27
	VBROADCASTSS sd+36(FP), Z28
	MOVQ         idx+40(FP), BX
	MOVQ         BX, R10
	MOVL         $0x7fffff, AX
	VPBROADCASTD AX, Z31
	MOVL         $255, AX
	VPBROADCASTD AX, Z30
	MOVL         $0x80000000, AX
	VPBROADCASTD AX, Z29
	VMOVDQU32    zigEven<>(SB), Z26
	MOVL         $1, AX
	VPBROADCASTD AX, Z25
	VPADDD       Z25, Z26, Z25
	MOVL         $16, AX
	VPBROADCASTD AX, Z23
	VMOVDQU32    iota<>(SB), Z24
	SHRQ         $4, CX

zig512:
	VMOVDQU32     (SI), Z0
	VPSRLD        $8, Z0, Z1
	VPANDD        Z31, Z1, Z1
	VPANDD        Z30, Z0, Z2
	VEXTRACTI64X4 $1, Z2, Y7
	KXNORW        K1, K1, K1
	VPGATHERDQ    (R8)(Y2*8), K1, Z3
	KXNORW        K2, K2, K2
	VPGATHERDQ    (R8)(Y7*8), K2, Z4
	VMOVDQA32     Z26, Z8
	VPERMI2D      Z4, Z3, Z8
	VPERMT2D      Z4, Z25, Z3
	VPCMPUD       $1, Z8, Z1, K3
	VCVTDQ2PS     Z1, Z5
	VMULPS        Z3, Z5, Z5
	VPTERNLOGD    $0xf8, Z29, Z0, Z5
	VMULPS        Z28, Z5, Z5
	VMULPS        (DI), Z27, Z6
	VADDPS        Z5, Z6, K3, Z6
	VMOVUPS       Z6, (DI)
	KNOTW         K3, K4
	VPCOMPRESSD   Z24, K4, Z9
	VMOVDQU32     Z9, (BX)
	KMOVW         K4, AX
	POPCNTL       AX, AX
	LEAQ          (BX)(AX*4), BX
	VPADDD        Z23, Z24, Z24
	ADDQ          $64, SI
	ADDQ          $64, DI
	DECQ          CX
	JNZ           zig512
	SUBQ          R10, BX
	SHRQ          $2, BX
	MOVQ          BX, ret+48(FP)
	VZEROUPPER
	RET
