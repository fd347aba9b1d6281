// Package gemm multiplies float32 matrices: C = alpha*op(A)*op(B) + beta*C in
// row-major storage. It is the one hot kernel of local training (dense layers
// and convolutions through im2col). Reference is the plain triple loop used as
// the oracle in tests; Engine is the fast path.
//
// # Algorithm
//
// Engine follows Goto & van de Geijn, "Anatomy of high-performance matrix
// multiplication" (ACM TOMS 34(3), 2008) as refined by BLIS: op(B) is packed
// in blocks of kc×nc and op(A) in blocks of mc×kc into buffers the Engine
// owns, laid out as micro-panels that a register-tile micro-kernel streams
// with unit stride. Three micro-kernels exist, chosen at run time:
//
//	avx512    8×32 tile, Go assembly, AVX-512F (16 zmm accumulators)
//	avx2      6×16 tile, Go assembly, AVX2 + FMA (12 ymm accumulators)
//	portable  pure Go: 2×4 on amd64/386 (16 float registers), 4×4 elsewhere
//
// The assembly kernels are used only when CPUID reports the instructions and
// XGETBV reports that the OS saves the wide registers; the purego build tag
// and other architectures get the portable kernel, and NewPortable forces it.
// Blocking: kc ≤ 256 for every kernel (see kBlocks); mc = 96 (avx512), 120
// (avx2), 128 (portable) rows; nc = 1024 columns.
//
// Three measured shortcuts matter for the products of a small network at
// batch 32: an operand stored with k contiguous is packed with a 16×16
// (AVX-512) or 8×8 (AVX) transpose; for blocks of at most 8 tile rows a
// non-transposed B is read in place instead of being packed (one pass over
// the large operand saved); and a last B panel of at most half a tile wide
// runs a half-width kernel (8×16, 6×8) instead of a zero-padded one.
//
// A fourth is for C = A·Bᵀ with both operands k-contiguous, a batch of
// inputs times a weight matrix stored out × in (a dense layer's forward
// pass, a convolution's weight gradient), which would transpose all of B
// into panels on every call: when k > m (k > 2m if C is read) and m fills
// whole tile columns, it is computed as Cᵀ = B·Aᵀ into a scratch buffer
// with B read in place by an assembly variant of the kernel that loads its
// A rows at stride (microA), and Cᵀ is transposed into C. Each element is
// the same products in the same order, so the bits do not change. The
// 784→256 layer at batch 32 went from 43 to 59 GFLOP/s on one AVX2 thread
// (87 to 101 with AVX-512), 64×800×224 (the FEMNIST CNN's conv2 weight
// gradient) from 46 to 56 (AVX2; level with AVX-512).
//
// A left operand shared by many products (a convolution's weights, one
// product per sample) can be packed once with PackA and used by
// SgemmPacked, which gives Sgemm's bits without packing it again.
//
// Operands whose rows are runs of another slice, wherever they start (a
// stride-1 convolution's column matrix is the runs of its padded input),
// need not be copied into a matrix first: SgemmGathered takes B's rows as
// offsets into a slice and its kernels (microG) load each k-row of a B
// panel through them, and SgemmNTGathered does the same for C = A·Bᵀ by
// computing Cᵀ with the gathered rows as the in-place A (microAG, with a
// half-width variant for C of at most nr/2 columns; a ragged last panel of
// rows goes through the same kernel with its offsets padded). That Cᵀ is
// also available as it is (SgemmGatheredNT), for callers that sum many such
// products and transpose the sum once. All give the bits of the
// materialised product; the portable kernel copies the rows instead.
//
// # Determinism
//
// Every kernel computes each element of C the same way wherever it sits: one
// accumulator, products added in increasing k within a k block, then
// C = alpha*acc + beta*C (C = alpha*acc when beta == 0, without reading C),
// with beta = 1 for later k blocks. The k blocks are a function of k alone:
// ceil(k/256) nearly equal blocks. Ragged edge tiles run the same kernel on
// a scratch tile, or, for a last panel of rows short of mr at full width,
// a variant that writes only those rows (AVX2's microAVX2Rows: 64×64×32,
// the Winograd products' shape, took 3.35 → 3.19 µs). Threads split C into blocks of whole register tiles and
// never split k. Hence:
//
//   - a given kernel gives bit-identical results for every thread count,
//     GOMAXPROCS, and run;
//   - avx2 and avx512 give identical bits (both fuse each multiply-add, with
//     the same blocking);
//   - portable rounds each product before adding it (unless the compiler
//     fuses, as it does on arm64), so its results differ in the last bits
//     from the assembly kernels, deterministically. Engine.Kernel names the
//     kernel so a run can record it.
//
// # Threads
//
// An Engine with Threads > 1 starts Threads-1 helper goroutines on its first
// product big enough to split (at least 2×256K multiply-adds, measured by
// BenchmarkThreshold) and keeps them until Close (or until the Engine is
// garbage collected). C is split along its larger dimension, so that the
// operand every part packs again is the smaller one. Helpers spin for up to
// 300 µs before parking (a wake-up cost 50–500 µs on a 2-core VM), so the
// calls of a training step reach them awake, and the caller runs any part a
// helper has not yet started. A helper with no work thus burns up to 300
// µs of CPU before it sleeps. The number of parts is capped by GOMAXPROCS.
// Splitting pays only on otherwise idle cores; where cores are shared with
// other busy work, one thread per Engine is faster.
//
// Steady-state calls allocate nothing: packing buffers grow to the largest
// shape seen and are reused, and a call's parts are handed over as plain
// values.
package gemm
