package gemm

import (
	"fmt"
	"runtime"
)

// Engine multiplies matrices with up to Threads goroutines. An Engine owns its
// packing buffers, so steady-state calls do not allocate. It is not safe for
// concurrent use: give each concurrently training model its own Engine.
//
// Results are bit-identical for every thread count: threads split the output,
// never the inner dimension.
type Engine struct {
	threads int
	kern    *kernel
	// minPartWork is parallelMinWork; tests lower it to split tiny shapes.
	minPartWork int
	// noSwap turns swapped products off, for tests comparing the paths.
	noSwap  bool
	ws      []*workspace // ws[i] serves part i of a call; ws[0] is the caller's
	pool    *pool        // helper goroutines, started by the first parallel call
	jobs    []job        // the parts of the current call, reused
	ct      []float32    // Cᵀ of a product run transposed (runTransposed)
	serial  []*Engine    // serial[w] is worker w's one-thread engine (Each)
	cleanup runtime.Cleanup
}

// New returns an Engine using up to threads goroutines (values < 1 mean 1).
// It uses the fastest micro-kernel the CPU and OS support (see Kernel).
func New(threads int) *Engine { return newEngine(threads, defaultKernel()) }

// NewPortable returns an Engine that always uses the pure-Go kernel, even
// where an assembly kernel is available: for tests, and to reproduce results
// computed on a machine without AVX2.
func NewPortable(threads int) *Engine { return newEngine(threads, portable) }

func newEngine(threads int, kern *kernel) *Engine {
	if threads < 1 {
		threads = 1
	}
	return &Engine{threads: threads, kern: kern, minPartWork: parallelMinWork}
}

// Threads reports how many goroutines the engine may use.
func (e *Engine) Threads() int { return e.threads }

// Kernel names the micro-kernel in use ("avx512", "avx2" or "portable"),
// for benchmark records: kernels round differently, so results are
// reproducible only on the same kernel.
func (e *Engine) Kernel() string { return e.kern.name }

// Close releases the engine's worker goroutines. The engine must not be used
// afterwards. An Engine that is dropped without Close releases them when it
// is garbage collected.
func (e *Engine) Close() {
	if e.pool != nil {
		e.cleanup.Stop()
		e.pool.stop()
		e.pool = nil
	}
	e.ws, e.serial = nil, nil
}

// Workers is how many goroutines Each would run n ≥ Threads items on now:
// the engine's threads, capped by GOMAXPROCS (more parts than Ps cannot run
// at once).
func (e *Engine) Workers() int { return min(e.threads, runtime.GOMAXPROCS(0)) }

// Each splits the items [0, n) into contiguous ranges, one per worker, and
// calls fn(worker, lo, hi) for each range in parallel, returning when all
// are done. Worker w < Threads() gets [w·n/W, (w+1)·n/W) for W =
// min(Workers(), n) workers; worker 0 runs on the caller's goroutine.
//
// fn must make its results independent of the split (write item i's result
// where only item i writes; use the worker index only to pick scratch
// space), which keeps results independent of the thread count. Inside fn,
// matrix products go through Serial(worker), never through e itself: e's
// helpers are busy running the other ranges.
//
// Each allocates nothing when fn is a value the caller keeps (a method value
// built once), not a new closure per call.
func (e *Engine) Each(n int, fn func(worker, lo, hi int)) {
	w := min(e.Workers(), n)
	if w <= 1 {
		if n > 0 {
			fn(0, 0, n)
		}
		return
	}
	e.startPool()
	e.makeSerial() // on the caller's goroutine, so that Serial only reads
	jobs := e.jobs[:0]
	for q := 0; q < w; q++ {
		jobs = append(jobs, job{fn: fn, worker: q, m0: q * n / w, m1: (q + 1) * n / w})
	}
	e.jobs = jobs
	e.pool.run(jobs[1:], jobs[0])
	clear(jobs) // drop fn and what it holds
}

// Serial returns worker w's one-thread engine for use inside Each, with e's
// micro-kernel (so results match e's). For a one-thread engine it is e.
func (e *Engine) Serial(w int) *Engine {
	if e.threads == 1 {
		return e
	}
	if w < 0 || w >= e.threads {
		panic(fmt.Sprintf("gemm: Serial(%d) of an engine with %d threads", w, e.threads))
	}
	// Outside a split Each (worker 0's range when Each ran in one piece,
	// or a direct call) no helper runs, so making them here is safe.
	e.makeSerial()
	return e.serial[w]
}

// startPool starts the helper goroutines on the first parallel call.
func (e *Engine) startPool() {
	if e.pool == nil {
		e.pool = startPool(e.threads - 1)
		e.cleanup = runtime.AddCleanup(e, (*pool).stop, e.pool)
	}
}

func (e *Engine) makeSerial() {
	if e.serial == nil {
		e.serial = make([]*Engine, e.threads)
		for i := range e.serial {
			e.serial[i] = newEngine(1, e.kern)
		}
	}
}

// problem is one Sgemm call's arguments, copied to each part by value.
type problem struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	a              []float32
	lda            int
	b              []float32
	ldb            int
	c              []float32
	ldc            int
	// directA: read A in place with kern.microA (A not transposed; see
	// sgemmSwapped) instead of packing it.
	directA bool
	// packedA, if not nil, is op(A) already packed (PackA), a is unused.
	packedA []float32
	// arows, if not nil, gathers A: A[i][p] = a[arows[i]+p] (A not
	// transposed; SgemmNTGathered), read in place by kern.microAG.
	arows []int
	// brows, if not nil, gathers B: B[p][j] = b[brows[p]+j] (SgemmGathered;
	// transB and ldb are unused).
	brows []int
}

// PackedA is op(A) packed once for many products that share it (a
// convolution's weights, used by every sample of a batch), in the layout
// the engine's kernel streams: for each k block (kBlocks), ceil(m/mr)
// panels of kc×mr. The zero value is empty; PackA fills it.
type PackedA struct {
	kern *kernel
	m, k int
	buf  []float32
}

// PackA packs op(A) (m×k, transposed in storage if transA) into pa for
// SgemmPacked on engines with e's kernel, reusing pa's buffer. It panics
// like Sgemm on a short slice or leading dimension.
func (e *Engine) PackA(pa *PackedA, transA bool, m, k int, a []float32, lda int) {
	if m < 0 || k < 0 {
		panic(fmt.Sprintf("gemm: negative dimension m=%d k=%d", m, k))
	}
	checkMatrix("a", transA, m, k, a, lda)
	rows := roundUp(m, e.kern.mr)
	pa.kern, pa.m, pa.k = e.kern, m, k
	pa.buf = growAligned(pa.buf, rows*k)
	_, kcb := kBlocks(k)
	for pc := 0; pc < k; pc += kcb {
		// Block pc starts after the rows·kcb floats of each earlier block.
		packA(pa.buf[rows*pc:], a, lda, transA, 0, m, pc, min(kcb, k-pc), e.kern)
	}
}

// SgemmPacked is Sgemm with op(A) packed by PackA (m and k are pa's): the
// same bits as Sgemm on the unpacked A, without packing it again.
func (e *Engine) SgemmPacked(pa *PackedA, transB bool, n int, alpha float32, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if pa.kern != e.kern {
		panic("gemm: SgemmPacked with an A packed for another kernel")
	}
	m, k := pa.m, pa.k
	if n < 0 {
		panic(fmt.Sprintf("gemm: negative dimension n=%d", n))
	}
	checkMatrix("b", transB, k, n, b, ldb)
	checkMatrix("c", false, m, n, c, ldc)
	if trivial(m, n, k, alpha, beta, c, ldc) {
		return
	}
	e.run(problem{transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta,
		b: b, ldb: ldb, c: c, ldc: ldc, packedA: pa.buf})
}

// Sgemm computes C = alpha*op(A)*op(B) + beta*C where op(A) is m×k, op(B) is
// k×n and C is m×n, all row-major with leading dimensions lda, ldb, ldc.
// op(X) is X transposed when the matching flag is set. When beta == 0, C is
// overwritten and its previous contents (even NaN) are ignored. When
// alpha == 0 or k == 0, A and B are not read (as in BLAS), so C = beta*C.
// It panics if a dimension is negative or a slice or leading dimension is
// too small for the shape.
func (e *Engine) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkArgs(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if trivial(m, n, k, alpha, beta, c, ldc) {
		return
	}
	if e.swaps(transA, transB, m, k, beta) {
		e.sgemmSwapped(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	e.run(problem{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc, directA: e.readsAInPlace(transA, n)})
}

// readsAInPlace reports whether a product reads A in place (kern.microA)
// instead of packing it. Packing a non-transposed A is a transpose of m·k
// floats, repaid when the packed block is read by many B panels; with at
// most directAMaxPanels panels of C's columns it is read once or twice,
// and the kernel's broadcasts read the rows of A where they are just as
// well. Same bits: every element is the same products summed in the same
// order.
func (e *Engine) readsAInPlace(transA bool, n int) bool {
	return !e.noSwap && !transA && e.kern.microA != nil && n <= directAMaxPanels*e.kern.nr
}

// directAMaxPanels: Winograd's weight-gradient products (64×32, k = 64:
// one AVX-512 panel of C's columns, two AVX2 ones) spent a third of their
// time packing A. Read in place, 36 of them ran at 84 instead of 52
// GFLOP/s (AVX-512, one thread); with AVX2 (two panels), 29–40 before
// and 39–48 after.
const directAMaxPanels = 2

// swaps reports whether a product is computed as its transpose. With A not
// transposed and B transposed (C = A·Bᵀ, both stored k-contiguous: a batch
// of inputs times a weight matrix stored out × in), the plain path packs
// Bᵀ, n·k floats transposed, on every call, and a layer's weights change
// every step. Computed as Cᵀ = B·Aᵀ, B is read in place by the kernel's
// microA and only Aᵀ (m·k floats, packed on either path) and C (m·n, twice
// when C is read) are moved: fewer floats when k > m (k > 2m). m must fill
// whole register panels of Cᵀ's columns, or the padding would cost more
// than the transposes save. The result is the same bits: every element is
// the same products summed in the same order.
func (e *Engine) swaps(transA, transB bool, m, k int, beta float32) bool {
	if e.noSwap || transA || !transB || e.kern.microA == nil || m%e.kern.nr != 0 {
		return false
	}
	moves := 1
	if beta != 0 {
		moves = 2
	}
	return k > moves*m
}

// sgemmSwapped computes C = alpha·A·Bᵀ + beta·C as Cᵀ = alpha·B·Aᵀ +
// beta·Cᵀ into the engine's scratch, B read in place, then transposes Cᵀ
// into C (see swaps).
func (e *Engine) sgemmSwapped(m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	e.runTransposed(problem{transB: true, m: n, n: m, k: k, alpha: alpha, beta: beta,
		a: b, lda: ldb, b: a, ldb: lda, directA: true}, c, ldc)
}

// runTransposed runs p, which computes Cᵀ (p.m × p.n), into the engine's
// scratch and transposes the result into C (p.n × p.m at ldc), first
// copying C in when p reads it.
func (e *Engine) runTransposed(p problem, c []float32, ldc int) {
	m, n := p.n, p.m // C's shape
	e.ct = growAligned(e.ct, n*m)
	if p.beta != 0 {
		transposeStrip(e.kern, e.ct, m, c, ldc, m, n) // ct[j][i] = c[i][j]
	}
	p.c, p.ldc = e.ct, m
	e.run(p)
	transposeStrip(e.kern, c, ldc, e.ct, m, n, m) // c[i][j] = ct[j][i]
}

// SgemmGathered is SgemmPacked with B's rows gathered: B is k×n with row p
// the n floats b[rows[p]:], wherever they lie (they may overlap). A
// convolution's column matrix is such a B over its padded input, so the
// product reads the input in place instead of an im2col copy of it. The
// kernels read full panels through the offsets and copy only a ragged last
// panel; the portable kernel copies every panel. Same bits as SgemmPacked
// on the materialised B. It panics if rows has fewer than k entries or
// one of them puts its row outside b.
func (e *Engine) SgemmGathered(pa *PackedA, n int, alpha float32, b []float32, rows []int, beta float32, c []float32, ldc int) {
	if pa.kern != e.kern {
		panic("gemm: SgemmGathered with an A packed for another kernel")
	}
	m, k := pa.m, pa.k
	if n < 0 || len(rows) < k {
		panic(fmt.Sprintf("gemm: SgemmGathered with n=%d, %d row offsets for k=%d", n, len(rows), k))
	}
	checkMatrix("c", false, m, n, c, ldc)
	if trivial(m, n, k, alpha, beta, c, ldc) {
		return
	}
	checkRows("SgemmGathered", rows[:k], n, b)
	e.run(problem{m: m, n: n, k: k, alpha: alpha, beta: beta,
		b: b, c: c, ldc: ldc, packedA: pa.buf, brows: rows[:k]})
}

// GathersRows reports whether the engine's kernel reads gathered rows of A
// in place (SgemmNTGathered); without, SgemmNTGathered copies them, and a
// caller with the rows already materialised does better with Sgemm.
func (e *Engine) GathersRows() bool { return e.kern.microAG != nil }

// SgemmNTGathered is Sgemm(false, true, …) with B's rows gathered: C =
// alpha·A·Bᵀ + beta·C for A m×k at lda and B n×k whose row j is the k
// floats b[rows[j]:]. A convolution's weight gradient, dy·colᵀ, is such a
// product over its padded input, so the column matrix is never built. It is
// computed as Cᵀ = B·Aᵀ with B's rows read in place by the kernel
// (microAG), as Sgemm's swapped products are, and gives Sgemm's bits on the
// materialised B. It panics like Sgemm, and if rows has fewer than n
// entries or one puts its row outside b.
func (e *Engine) SgemmNTGathered(m, n, k int, alpha float32, a []float32, lda int, b []float32, rows []int, beta float32, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 || len(rows) < n {
		panic(fmt.Sprintf("gemm: SgemmNTGathered m=%d n=%d k=%d with %d row offsets", m, n, k, len(rows)))
	}
	checkMatrix("a", false, m, k, a, lda)
	checkMatrix("c", false, m, n, c, ldc)
	if trivial(m, n, k, alpha, beta, c, ldc) {
		return
	}
	checkRows("SgemmNTGathered", rows[:n], k, b)
	e.runTransposed(problem{transB: true, m: n, n: m, k: k, alpha: alpha, beta: beta,
		a: b, arows: rows[:n], b: a, ldb: lda}, c, ldc)
}

// SgemmGatheredNT is SgemmNTGathered's transpose: C = alpha·A·Bᵀ + beta·C
// for A m×k whose row i is the k floats a[rows[i]:] and B n×k at ldb. It
// is the product SgemmNTGathered runs before transposing its result, so
// Cᵀ here has SgemmNTGathered's bits for C. A caller that sums many such
// products (a convolution's weight gradient over a batch, one product per
// sample) sums them here and transposes once, instead of twice a product.
// It panics like SgemmNTGathered.
func (e *Engine) SgemmGatheredNT(m, n, k int, alpha float32, a []float32, rows []int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 || len(rows) < m {
		panic(fmt.Sprintf("gemm: SgemmGatheredNT m=%d n=%d k=%d with %d row offsets", m, n, k, len(rows)))
	}
	checkMatrix("b", false, n, k, b, ldb)
	checkMatrix("c", false, m, n, c, ldc)
	if trivial(m, n, k, alpha, beta, c, ldc) {
		return
	}
	checkRows("SgemmGatheredNT", rows[:m], k, a)
	e.run(problem{transB: true, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, arows: rows[:m], b: b, ldb: ldb, c: c, ldc: ldc})
}

// checkRows panics unless every row rows[j] of width floats lies inside b:
// the assembly does not bounds-check gathered rows.
func checkRows(fn string, rows []int, width int, b []float32) {
	for j, o := range rows {
		if o < 0 || o > len(b)-width {
			panic(fmt.Sprintf("gemm: %s row %d at %d: %d floats overrun len(b)=%d", fn, j, o, width, len(b)))
		}
	}
}

// trivial handles the products with nothing to multiply (C = beta·C when
// k or alpha is 0) and reports whether it did.
func trivial(m, n, k int, alpha, beta float32, c []float32, ldc int) bool {
	if m == 0 || n == 0 {
		return true
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return true
	}
	return false
}

// run computes the product p describes, split across the engine's threads.
func (e *Engine) run(p problem) {
	m, n, k := p.m, p.n, p.k
	parts, alongM := e.split(m, n, k)
	if len(e.ws) < parts {
		for len(e.ws) < parts {
			e.ws = append(e.ws, new(workspace))
		}
	}
	if parts == 1 {
		e.ws[0].run(e.kern, &p, 0, m, 0, n)
		return
	}
	e.startPool()
	// Part q gets a contiguous run of whole register tiles along the split
	// dimension; tile boundaries never move, so neither does any rounding.
	unit, size := e.kern.mr, m
	if !alongM {
		unit, size = e.kern.nr, n
	}
	tiles := (size + unit - 1) / unit
	bound := func(q int) int { return min(q*tiles/parts*unit, size) }
	jobs := e.jobs[:0]
	for q := 0; q < parts; q++ {
		j := job{p: p, kern: e.kern, ws: e.ws[q], m0: 0, m1: m, n0: 0, n1: n}
		if alongM {
			j.m0, j.m1 = bound(q), bound(q+1)
		} else {
			j.n0, j.n1 = bound(q), bound(q+1)
		}
		jobs = append(jobs, j)
	}
	e.jobs = jobs
	e.pool.run(jobs[1:], jobs[0])
	clear(jobs) // drop the caller's slices
}

// parallelMinWork is the number of multiply-adds below which an extra part
// costs more (handing it over, packing a shared operand twice) than it
// saves. BenchmarkThreshold on an idle 2-core AVX-512 machine: 64³ (262K)
// ran 10% slower on two threads, 32×64×256 (524K) 1.3× faster, 128³ 1.7×.
// So a call splits in two from 2×256K.
const parallelMinWork = 1 << 18

// split decides how many parts a call runs in and along which dimension of
// C. Splitting rows makes every part pack all of op(B); splitting columns
// makes every part pack all of op(A). So the larger dimension is split,
// which duplicates the smaller operand.
func (e *Engine) split(m, n, k int) (parts int, alongM bool) {
	alongM = m >= n
	tiles := (n + e.kern.nr - 1) / e.kern.nr
	if alongM {
		tiles = (m + e.kern.mr - 1) / e.kern.mr
	}
	work := m * n * k
	parts = min(e.threads, tiles, max(1, work/e.minPartWork))
	if parts > 1 {
		// More parts than Ps cannot run at once; a helper waiting for a P
		// would only be robbed of its part by the caller (see pool).
		parts = min(parts, runtime.GOMAXPROCS(0))
	}
	return parts, alongM
}

// scaleC sets C = beta*C (C = 0 when beta == 0, ignoring NaN in C).
func scaleC(m, n int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		switch beta {
		case 0:
			clear(row)
		case 1:
		default:
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

func checkArgs(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("gemm: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	checkMatrix("a", transA, m, k, a, lda)
	checkMatrix("b", transB, k, n, b, ldb)
	checkMatrix("c", false, m, n, c, ldc)
}

// checkMatrix panics unless x holds an r×c matrix (c×r stored, if trans) at
// leading dimension ld. The assembly kernels index C without bounds checks,
// so this is what keeps them inside the caller's slices.
func checkMatrix(name string, trans bool, r, c int, x []float32, ld int) {
	if trans {
		r, c = c, r
	}
	if ld < max(1, c) {
		panic(fmt.Sprintf("gemm: ld%s=%d < %d columns", name, ld, c))
	}
	if r > 0 && c > 0 && len(x) < (r-1)*ld+c {
		panic(fmt.Sprintf("gemm: len(%s)=%d too short for %d×%d at stride %d", name, len(x), r, c, ld))
	}
}
