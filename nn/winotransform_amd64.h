// The F(4×4, 5×5) transforms' constants and 1-D transforms, shared by
// the AVX2 kernels (winotransform_amd64.s, with Y registers) and the
// AVX-512 pair kernels (winotransform_avx512_amd64.s, with Z registers):
// each macro takes the 16 registers r0..r15 it may use, so both run the
// same operations lane for lane. The constants are operands in memory
// (winoC8: each a 64-byte row of one float).

#define C525 ·winoC8+0(SB) // 5.25
#define C425 ·winoC8+64(SB) // 4.25
#define C025 ·winoC8+128(SB) // 0.25
#define C125 ·winoC8+192(SB) // 1.25
#define C05 ·winoC8+256(SB) // 0.5
#define C25 ·winoC8+320(SB) // 2.5
#define C2 ·winoC8+384(SB) // 2
#define C4 ·winoC8+448(SB) // 4
#define C5 ·winoC8+512(SB) // 5
#define C8 ·winoC8+576(SB) // 8
#define C0125 ·winoC8+640(SB) // 0.125
#define C16 ·winoC8+704(SB) // 16
#define CM29 ·winoC8+768(SB) // −2/9
#define C190 ·winoC8+832(SB) // 1/90
#define C145 ·winoC8+896(SB) // 1/45
#define C245 ·winoC8+960(SB) // 2/45
#define C445 ·winoC8+1024(SB) // 4/45
#define C845 ·winoC8+1088(SB) // 8/45
#define C1645 ·winoC8+1152(SB) // 16/45
#define C3245 ·winoC8+1216(SB) // 32/45

// SD8 sets r8..r13 to the sums and differences of the pairs (r1, r2),
// (r3, r4) and (r5, r6): s12, d12, s34, d34, s56, d56.
#define SD8(r1, r2, r3, r4, r5, r6, r8, r9, r10, r11, r12, r13) \
	VADDPS r2, r1, r8;  \
	VSUBPS r2, r1, r9;  \
	VADDPS r4, r3, r10; \
	VSUBPS r4, r3, r11; \
	VADDPS r6, r5, r12; \
	VSUBPS r6, r5, r13

// BT8: v = Bᵀ d, d in r0..r7; v0..v7 in r9, r0, r7, r12, r13, r14, r15, r11.
#define BT8(r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15) \
	VSUBPS       r2, r4, r8;     \ // d4 − d2
	VSUBPS       r6, r0, r9;     \ // d0 − d6
	VFMADD231PS  C525, r8, r9;   \ // v0 = d0 − d6 + 5.25 (d4 − d2)
	VSUBPS       r5, r3, r10;    \ // d3 − d5
	VSUBPS       r1, r7, r11;    \ // d7 − d1
	VFMADD231PS  C525, r10, r11; \ // v7 = d7 − d1 + 5.25 (d3 − d5)
	VADDPS       r6, r2, r8;     \
	VFNMADD231PS C425, r4, r8;   \ // p1 = d2 + d6 − 4.25 d4
	VADDPS       r5, r1, r10;    \
	VFNMADD231PS C425, r3, r10;  \ // q1 = d1 + d5 − 4.25 d3
	VADDPS       r10, r8, r0;    \ // v1 = p1 + q1
	VSUBPS       r10, r8, r7;    \ // v2 = p1 − q1
	VMOVAPS      r6, r8;         \
	VFMADD231PS  C025, r2, r8;   \
	VFNMADD231PS C125, r4, r8;   \ // p2 = d6 + d2/4 − 1.25 d4
	VMULPS       C05, r1, r10;   \
	VFNMADD231PS C25, r3, r10;   \
	VFMADD231PS  C2, r5, r10;    \ // q2 = d1/2 − 2.5 d3 + 2 d5
	VADDPS       r10, r8, r12;   \ // v3 = p2 + q2
	VSUBPS       r10, r8, r13;   \ // v4 = p2 − q2
	VFMADD231PS  C4, r2, r6;     \
	VFNMADD231PS C5, r4, r6;     \ // p3 = d6 + 4 d2 − 5 d4
	VMULPS       C2, r1, r10;    \
	VFNMADD231PS C25, r3, r10;   \
	VFMADD231PS  C05, r5, r10;   \ // q3 = 2 d1 − 2.5 d3 + d5/2
	VADDPS       r10, r6, r14;   \ // v5 = p3 + q3
	VSUBPS       r10, r6, r15      // v6 = p3 − q3

// B8: d = B v, v in r0..r7; d0..d7 in r0, r4, r1, r5, r2, r6, r3, r7.
#define B8(r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15) \
	VADDPS       r2, r1, r8;    \ // s12
	VSUBPS       r2, r1, r11;   \ // a = v1 − v2
	VADDPS       r4, r3, r9;    \ // s34
	VSUBPS       r4, r3, r12;   \ // b = v3 − v4
	VADDPS       r6, r5, r10;   \ // s56
	VSUBPS       r6, r5, r13;   \ // c = v5 − v6
	VMOVAPS      r8, r1;        \
	VFMADD231PS  C025, r9, r1;  \
	VFMADD231PS  C4, r10, r1;   \
	VFNMADD231PS C525, r0, r1;  \ // d2 = s12 + s34/4 + 4 s56 − 5.25 v0
	VMULPS       C525, r0, r2;  \
	VFNMADD231PS C425, r8, r2;  \
	VFNMADD231PS C125, r9, r2;  \
	VFNMADD231PS C5, r10, r2;   \ // d4 = 5.25 v0 − 4.25 s12 − 1.25 s34 − 5 s56
	VSUBPS       r0, r8, r3;    \
	VADDPS       r9, r3, r3;    \
	VADDPS       r10, r3, r3;   \ // d6 = s12 − v0 + s34 + s56
	VSUBPS       r7, r11, r4;   \
	VFMADD231PS  C05, r12, r4;  \
	VFMADD231PS  C2, r13, r4;   \ // d1 = a − v7 + b/2 + 2c
	VMULPS       C525, r7, r5;  \
	VFNMADD231PS C425, r11, r5; \
	VFNMADD231PS C25, r12, r5;  \
	VFNMADD231PS C25, r13, r5;  \ // d3 = 5.25 v7 − 4.25 a − 2.5 b − 2.5 c
	VMOVAPS      r11, r6;       \
	VFMADD231PS  C2, r12, r6;   \
	VFMADD231PS  C05, r13, r6;  \
	VFNMADD231PS C525, r7, r6     // d5 = a + 2b + c/2 − 5.25 v7

// AT8: y = Aᵀ m, m in r0..r7; y0..y3 in r0..r3.
#define AT8(r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15) \
	SD8(r1, r2, r3, r4, r5, r6, r8, r9, r10, r11, r12, r13); \
	VADDPS      r8, r0, r0;     \
	VADDPS      r10, r0, r0;    \
	VADDPS      r12, r0, r0;    \ // y0 = m0 + s12 + s34 + s56
	VADDPS      r7, r9, r3;     \
	VFMADD231PS C8, r11, r3;    \
	VFMADD231PS C0125, r13, r3; \ // y3 = d12 + m7 + 8 d34 + d56/8
	VMOVAPS     r9, r1;         \
	VFMADD231PS C2, r11, r1;    \
	VFMADD231PS C05, r13, r1;   \ // y1 = d12 + 2 d34 + d56/2
	VMOVAPS     r8, r2;         \
	VFMADD231PS C4, r10, r2;    \
	VFMADD231PS C025, r12, r2     // y2 = s12 + 4 s34 + s56/4

// A8: m = A y, y in r0..r3; m0..m7 in r0, r4, r5, r6, r7, r10, r11, r3.
#define A8(r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15) \
	VADDPS      r2, r0, r8;    \ // e1 = y0 + y2
	VADDPS      r3, r1, r9;    \ // o1 = y1 + y3
	VADDPS      r9, r8, r4;    \ // m1 = e1 + o1
	VSUBPS      r9, r8, r5;    \ // m2 = e1 − o1
	VMOVAPS     r0, r8;        \
	VFMADD231PS C4, r2, r8;    \ // e2 = y0 + 4 y2
	VMULPS      C8, r3, r9;    \
	VFMADD231PS C2, r1, r9;    \ // o2 = 2 y1 + 8 y3
	VADDPS      r9, r8, r6;    \ // m3
	VSUBPS      r9, r8, r7;    \ // m4
	VMOVAPS     r0, r8;        \
	VFMADD231PS C025, r2, r8;  \ // e3 = y0 + y2/4
	VMULPS      C0125, r3, r9; \
	VFMADD231PS C05, r1, r9;   \ // o3 = y1/2 + y3/8
	VADDPS      r9, r8, r10;   \ // m5
	VSUBPS      r9, r8, r11      // m6

// GT5: r = G v (the filter transform, convwino.go's G), v in r0..r4;
// r0..r7 in r0, r7, r8, r9, r10, r11, r12, r4. G's rows 1–2, 3–4 and 5–6
// are ±-pairs: −2/9·(1, ±1, 1, ±1, 1), 1/90·(1, ±2, 4, ±8, 16) and
// 2/45·(16, ±8, 4, ±2, 1).
#define GT5(r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15) \
	VADDPS      r2, r0, r5;    \
	VADDPS      r4, r5, r5;    \ // e = v0 + v2 + v4
	VADDPS      r3, r1, r6;    \ // o = v1 + v3
	VADDPS      r6, r5, r7;    \
	VMULPS      CM29, r7, r7;  \ // r1 = −2/9 (e + o)
	VSUBPS      r6, r5, r8;    \
	VMULPS      CM29, r8, r8;  \ // r2 = −2/9 (e − o)
	VMOVAPS     r0, r5;        \
	VFMADD231PS C4, r2, r5;    \
	VFMADD231PS C16, r4, r5;   \ // e1 = v0 + 4 v2 + 16 v4
	VMULPS      C2, r1, r6;    \
	VFMADD231PS C8, r3, r6;    \ // o1 = 2 v1 + 8 v3
	VADDPS      r6, r5, r9;    \
	VMULPS      C190, r9, r9;  \ // r3 = (e1 + o1)/90
	VSUBPS      r6, r5, r10;   \
	VMULPS      C190, r10, r10; \ // r4 = (e1 − o1)/90
	VMOVAPS     r4, r5;        \
	VFMADD231PS C16, r0, r5;   \
	VFMADD231PS C4, r2, r5;    \ // e2 = 16 v0 + 4 v2 + v4
	VMULPS      C8, r1, r6;    \
	VFMADD231PS C2, r3, r6;    \ // o2 = 8 v1 + 2 v3
	VADDPS      r6, r5, r11;   \
	VMULPS      C245, r11, r11; \ // r5 = 2/45 (e2 + o2)
	VSUBPS      r6, r5, r12;   \
	VMULPS      C245, r12, r12   // r6 = 2/45 (e2 − o2)

// G5T: r = Gᵀ v, v in r0..r7; r0..r4 in r0, r1, r2, r3, r7.
#define G5T(r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15) \
	SD8(r1, r2, r3, r4, r5, r6, r8, r9, r10, r11, r12, r13); \
	VFMADD231PS CM29, r8, r0;   \
	VFMADD231PS C190, r10, r0;  \
	VFMADD231PS C3245, r12, r0; \ // r0 = v0 − 2/9 s12 + s34/90 + 32/45 s56
	VMULPS      CM29, r9, r1;   \
	VFMADD231PS C145, r11, r1;  \
	VFMADD231PS C1645, r13, r1; \ // r1 = −2/9 d12 + d34/45 + 16/45 d56
	VMULPS      CM29, r8, r2;   \
	VFMADD231PS C245, r10, r2;  \
	VFMADD231PS C845, r12, r2;  \ // r2 = −2/9 s12 + 2/45 s34 + 8/45 s56
	VMULPS      CM29, r9, r3;   \
	VFMADD231PS C445, r11, r3;  \
	VFMADD231PS C445, r13, r3;  \ // r3 = −2/9 d12 + 4/45 (d34 + d56)
	VFMADD231PS CM29, r8, r7;   \
	VFMADD231PS C845, r10, r7;  \
	VFMADD231PS C245, r12, r7     // r4 = v7 − 2/9 s12 + 8/45 s34 + 2/45 s56

// LOAD5K loads the 5 vectors at p + k·off, k < 5, into r0..r4.
#define LOAD5K(p, off, r0, r1, r2, r3, r4) \
	VMOVUPS (p), r0;        \
	VMOVUPS (1*off)(p), r1; \
	VMOVUPS (2*off)(p), r2; \
	VMOVUPS (3*off)(p), r3; \
	VMOVUPS (4*off)(p), r4

// STORE5K stores r0..r4 at p + k·off.
#define STORE5K(p, off, r0, r1, r2, r3, r4) \
	VMOVUPS r0, (p);        \
	VMOVUPS r1, (1*off)(p); \
	VMOVUPS r2, (2*off)(p); \
	VMOVUPS r3, (3*off)(p); \
	VMOVUPS r4, (4*off)(p)

// LOADK loads the 8 vectors at p + k·off, k < 8, into r0..r7.
#define LOADK(p, off, r0, r1, r2, r3, r4, r5, r6, r7) \
	LOAD5K(p, off, r0, r1, r2, r3, r4); \
	VMOVUPS (5*off)(p), r5;             \
	VMOVUPS (6*off)(p), r6;             \
	VMOVUPS (7*off)(p), r7

// STOREK stores r0..r7 at p + k·off.
#define STOREK(p, off, r0, r1, r2, r3, r4, r5, r6, r7) \
	STORE5K(p, off, r0, r1, r2, r3, r4); \
	VMOVUPS r5, (5*off)(p);              \
	VMOVUPS r6, (6*off)(p);              \
	VMOVUPS r7, (7*off)(p)

// LOAD8S loads 8 vectors at p, p+s, …, p+7s (s a register of bytes) into
// r0..r7; t ends at p+6s.
#define LOAD8S(p, s, t, r0, r1, r2, r3, r4, r5, r6, r7) \
	VMOVUPS (p), r0;      \
	VMOVUPS (p)(s*1), r1; \
	VMOVUPS (p)(s*2), r2; \
	LEAQ    (p)(s*2), t;  \
	VMOVUPS (t)(s*1), r3; \
	VMOVUPS (t)(s*2), r4; \
	LEAQ    (t)(s*2), t;  \
	VMOVUPS (t)(s*1), r5; \
	VMOVUPS (t)(s*2), r6; \
	LEAQ    (t)(s*2), t;  \
	VMOVUPS (t)(s*1), r7

// STORE8S stores r0..r7 at p, p+s, …, p+7s; t ends at p+6s.
#define STORE8S(p, s, t, r0, r1, r2, r3, r4, r5, r6, r7) \
	VMOVUPS r0, (p);      \
	VMOVUPS r1, (p)(s*1); \
	VMOVUPS r2, (p)(s*2); \
	LEAQ    (p)(s*2), t;  \
	VMOVUPS r3, (t)(s*1); \
	VMOVUPS r4, (t)(s*2); \
	LEAQ    (t)(s*2), t;  \
	VMOVUPS r5, (t)(s*1); \
	VMOVUPS r6, (t)(s*2); \
	LEAQ    (t)(s*2), t;  \
	VMOVUPS r7, (t)(s*1)
