package gemm

// kernel describes one micro-kernel and the cache blocking tuned for it.
//
// micro computes one mr×nr tile of C from a packed A micro-panel and a B
// micro-panel whose k-rows are ldb floats apart (nr when packed, or the
// caller's ldb when B is used in place):
//
//	C[i][j] = alpha*acc[i][j] + beta*C[i][j]   (C is not read when beta == 0)
//	acc[i][j] = Σ_{p<kc} a[p*mr+i] * b[p*ldb+j] accumulated in order p = 0, 1, …
//
// with C row-major at stride ldc. Every kernel accumulates each element in
// the same order, so which tile an element falls in never changes its value;
// that is what makes results independent of the thread split.
type kernel struct {
	name   string
	mr, nr int // register tile
	mc, nc int // rows of A and columns of B packed per block (multiples of mr, nr)
	micro  func(kc int, a, b, c *float32, ldb, ldc int, alpha, beta float32)
	// microRows, if not nil, is micro writing only the tile's first rows
	// rows (0 < rows < mr) of C, for a ragged last panel of packed A rows:
	// no scratch tile and copy. Same arithmetic per element.
	microRows func(kc int, a, b, c *float32, ldb, ldc int, alpha, beta float32, rows int)
	// half, if not nil, is micro for only the first nr/2 columns, used
	// for a last panel of B that narrow.
	half func(kc int, a, b, c *float32, ldb, ldc int, alpha, beta float32)
	// microA, if not nil, is micro with the A micro-panel read in place:
	// row i is a[i*lda : i*lda+kc], a matrix whose rows are k-contiguous
	// (see Engine.sgemmSwapped). Same arithmetic per element as micro.
	microA func(kc int, a *float32, lda int, b, c *float32, ldb, ldc int, alpha, beta float32)
	// microAG and microAGHalf, if not nil, are microA and its half-width
	// variant (B panels of at most nr/2 columns) with A's rows gathered:
	// row i of the A micro-panel is a[rows[i]:] (Engine.SgemmNTGathered).
	microAG, microAGHalf func(kc int, a *float32, rows *int, b, c *float32, ldb, ldc int, alpha, beta float32)
	// microG, if not nil, is micro with B gathered: k-row p of the B
	// micro-panel is b[rows[p]:] (Engine.SgemmGathered). Same arithmetic.
	microG func(kc int, a *float32, rows *int, b, c *float32, ldc int, alpha, beta float32)
	// transpose16, transpose8 and copyRows speed up packing; nil means
	// plain Go.
	transpose16 transposeFunc
	transpose8  transposeFunc
	transpose6  transposeFunc // 6 rows (transpose8's contract otherwise)
	copyRows    copyFunc
}

// kcMax is the depth of one packed block: the k dimension is cut into
// ceil(k/kcMax) nearly equal blocks. It is the same for every kernel and
// every thread count, because the cut points decide the rounding of the
// result (C is updated once per block). 256 keeps an AVX2 B micro-panel
// (256×16 floats = 16 KiB) and an AVX-512 one (32 KiB) inside a 48 KiB L1D
// next to the A micro-panel.
const kcMax = 256

// OneKBlock reports whether a product of depth k is summed in a single k
// block, so that each element of C is written once, as alpha*acc +
// beta*C: an update C += alpha·A·B then rounds once per element, exactly
// as computing the product and adding alpha times it with a fused
// multiply-add would.
func OneKBlock(k int) bool { return k <= kcMax }

// kBlocks returns the number of k blocks and the depth of all but the
// last, a pure function of k.
func kBlocks(k int) (blocks, kc int) {
	blocks = (k + kcMax - 1) / kcMax
	kc = (k + blocks - 1) / blocks
	return blocks, kc
}
