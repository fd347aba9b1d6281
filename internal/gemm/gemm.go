package gemm

// Engine multiplies matrices with up to Threads goroutines. An Engine owns its
// packing buffers, so steady-state calls do not allocate. It is not safe for
// concurrent use: give each concurrently training model its own Engine.
//
// Results are bit-identical for every thread count: threads split the output,
// never the inner dimension.
type Engine struct {
	threads int
}

// New returns an Engine using up to threads goroutines (values < 1 mean 1).
func New(threads int) *Engine {
	if threads < 1 {
		threads = 1
	}
	return &Engine{threads: threads}
}

// Threads reports how many goroutines the engine may use.
func (e *Engine) Threads() int { return e.threads }

// Close releases the engine's worker goroutines. The engine must not be used
// afterwards.
func (e *Engine) Close() {}

// Sgemm computes C = alpha*op(A)*op(B) + beta*C where op(A) is m×k, op(B) is
// k×n and C is m×n, all row-major with leading dimensions lda, ldb, ldc.
// op(X) is X transposed when the matching flag is set. When beta == 0, C is
// overwritten and its previous contents (even NaN) are ignored.
func (e *Engine) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	Reference(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Reference is the plain triple loop with a float32 accumulator, the oracle
// for the fast path.
func Reference(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float32
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += av * bv
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * s
			} else {
				c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
			}
		}
	}
}
