package aggregate

import (
	"math"
	"slices"

	"github.com/trellis-fl/trellis/internal/gemm"
	"github.com/trellis-fl/trellis/internal/memsize"
	"github.com/trellis-fl/trellis/vec"
)

// gram computes the pairwise squared distances of n inputs from their Gram
// matrix G = X·Xᵀ, ||x_i − x_j||² = G_ii + G_jj − 2·G_ij: one matrix
// product of n·n·d multiply-adds through the tuned GEMM, instead of n²/2
// passes over the inputs. This is what makes Krum, Bulyan and NNM fast for
// n = 100, d = 1M.
//
// Precision. The product runs in float32, so it is taken in chunks of
// gramChunk coordinates, each one float32 accumulation of at most 256
// products (one k block of the GEMM), and the chunks' results are added in
// float64. Before a chunk is multiplied, each input's slice of it is scaled
// by a power of two that brings its largest magnitude into [1/2, 1) when it
// lies outside [2^-40, 2^56): scaling by a power of two is exact, and it
// keeps finite inputs as large as float32 allows (a Byzantine 1e30) from
// overflowing to Inf in the float32 products, and tiny ones from
// underflowing. The error of G_ij is then about 2^-24·√256·Σ_chunks
// ||x_i,c||·||x_j,c|| at worst and far less on average, so a squared
// distance carries an absolute error of order 1e-7·(||x_i||² + ||x_j||²)
// (measured: up to 3e-7 on random inputs, 1e-6 on the clustered ones of
// the metamorphic tests): it is exact for identical inputs (their products
// are the same operations), but it would resolve coarsely the distances
// between inputs much closer together than to the origin, as torch.cdist
// does (float32 throughout) — and models of honest nodes are exactly that.
// So when some pair's squared distance is below 1e-2 of G_ii + G_jj, the
// product is taken a second time on the inputs minus a center c, y_i = x_i
// − c (distances do not change), and the error becomes of order
// 1e-7·(||y_i||² + ||y_j||²), relative to the spread of the inputs instead
// of their norms. c is the input whose median distance to the others is
// the smallest (honest when fewer than half are not), chosen from the
// first product, ties by contents: a function of the multiset of inputs.
// Random or widely spread inputs take one product; clustered ones two.
// Rounding can make G_ii + G_jj − 2·G_ij slightly negative; it is clamped
// at 0.
//
// Cancellation can be total: when the inputs differ only far below the
// float32 rounding of their products (near-identical models, or small
// changing coordinates interleaved with large fixed ones), every pair's
// G_ii + G_jj − 2·G_ij comes out exactly 0, no pair looks "small but
// positive", and every Krum score would tie. So a pair whose
// computed distance is 0 although its inputs differ also calls for the
// centered product. After the last product, every pair still below
// recenterRatio of its G_ii + G_jj (0 included) whose inputs differ is
// recomputed directly, Σ (x_ik − x_jk)² in float64 (vec.SqDist): then
// every squared distance is within about 1e-4 of its value relative to
// itself, and 0 exactly when the inputs are identical. Direct pairs cost
// O(d) each and arise only in such clustered configurations (random
// inputs take none; the near-identical ones of the tests none or a few).
// Whether inputs differ is decided by comparing contents, identical
// inputs merged (union-find) so that at most n − 1 comparisons find them
// equal.
//
// Determinism. Each element of a GEMM product is computed the same way
// wherever it sits (package gemm), so G_ij depends on x_i and x_j alone, not
// on their positions: the distances are bit-identical under any permutation
// of the inputs. Chunks are grouped by a fixed span of the coordinates
// (see span) and each group keeps its own partial G, added in group order:
// the result is bit-identical for every thread count.
type gram struct {
	d2    []float64 // n×n squared distances of the last run, row-major
	parts []float64 // groups×n×n partial Gram matrices (upper triangles)
	ws    []gramWorker
	n     int
	// recentered reports whether the last run took the second, centered
	// product; direct counts the pairs it recomputed directly.
	recentered bool
	direct     int
	same       ranker // identical inputs found so far (union-find)
	rk         ranker
	order      []int
	medd       []float64
	row        []float64

	// The current run, while it lasts.
	xs     [][]float32
	center []float32 // nil in the first product
	sp     span
}

// recenterRatio is the squared distance, relative to G_ii + G_jj, below
// which a pair's distance is recomputed, around a center after the first
// product and directly after the last (where the product's error, up to
// about 1e-6 of G_ii + G_jj, would exceed 1e-4 of it).
const recenterRatio = 1e-2

// gramChunk is the coordinates multiplied per GEMM call: one k block of the
// GEMM kernels, hence one float32 accumulator per element.
const gramChunk = 256

// gramBudget bounds groups·n² (float64 partials) to 32 MiB.
const gramBudget = 1 << 22

// gramWorker is one worker's scratch.
type gramWorker struct {
	eng *gemm.Engine // single-threaded: workers split the chunks
	a   []float32    // n × gramChunk, the chunk's rows, scaled
	c   []float32    // n × n, the chunk's product
	sc  []float64    // n, each row's scale (a power of two)
}

// run computes the squared distances of xs (finite, one length d) with up
// to threads workers into g.d2.
func (g *gram) run(xs [][]float32, threads int) {
	n, d, t := len(xs), len(xs[0]), workers(threads)
	g.n = n
	if cap(g.d2) < n*n {
		g.d2 = make([]float64, n*n)
	}
	g.d2 = g.d2[:n*n]
	limit := max(1, min(maxGroups, gramBudget/(n*n)))
	// Groups hold whole chunks.
	g.sp = split((d+gramChunk-1)/gramChunk, 1, limit)
	if cap(g.parts) < g.sp.count*n*n {
		g.parts = make([]float64, g.sp.count*n*n)
	}
	g.parts = g.parts[:g.sp.count*n*n]
	for len(g.ws) < t {
		g.ws = append(g.ws, gramWorker{})
	}
	for w := range t {
		ws := &g.ws[w]
		if ws.eng == nil {
			ws.eng = gemm.New(1)
		}
		if cap(ws.a) < n*gramChunk {
			ws.a = make([]float32, n*gramChunk)
		}
		if cap(ws.c) < n*n {
			ws.c = make([]float32, n*n)
		}
		if cap(ws.sc) < n {
			ws.sc = make([]float64, n)
		}
	}
	g.xs, g.center, g.recentered, g.direct = xs, nil, false, 0
	g.same.reset(n)
	g.product(t)
	if c := g.cancels(); c >= 0 {
		g.center, g.recentered = xs[c], true
		g.product(t)
	}
	g.resolve()
	g.xs, g.center = nil, nil
}

// lost reports whether pair (i, j) of the last product lost its distance
// to cancellation: below recenterRatio of G_ii + G_jj, and not two
// identical inputs.
func (g *gram) lost(i, j int) bool {
	n := len(g.xs)
	G := g.parts[:n*n]
	v := g.d2[i*n+j]
	if v >= recenterRatio*(G[i*n+i]+G[j*n+j]) && v > 0 {
		return false
	}
	return !g.identical(i, j)
}

// identical reports whether inputs i and j are equal bit for bit up to
// the sign of zeros (which does not change a distance), merging them in
// g.same when they are.
func (g *gram) identical(i, j int) bool {
	ri, rj := g.same.root(i), g.same.root(j)
	if ri == rj {
		return true
	}
	x, y := g.xs[i], g.xs[j]
	for k, v := range x {
		if v != y[k] {
			return false
		}
	}
	g.same.parent[max(ri, rj)] = min(ri, rj)
	return true
}

// resolve recomputes directly every pair the last product lost.
func (g *gram) resolve() {
	n := len(g.xs)
	for i := range n {
		for j := i + 1; j < n; j++ {
			if g.lost(i, j) {
				v := vec.SqDist(g.xs[i], g.xs[j])
				g.d2[i*n+j], g.d2[j*n+i] = v, v
				g.direct++
			}
		}
	}
}

// product runs the Gram product of the current rows and sets g.d2.
func (g *gram) product(t int) {
	n, d := len(g.xs), len(g.xs[0])
	clear(g.parts)
	if d > 0 {
		parallel(t, g.sp.count, g)
	}
	// G = Σ_groups parts, in group order; then the distances.
	G := g.parts[:n*n]
	for p := 1; p < g.sp.count; p++ {
		part := g.parts[p*n*n : (p+1)*n*n]
		for i := range n {
			for j := i; j < n; j++ {
				G[i*n+j] += part[i*n+j]
			}
		}
	}
	for i := range n {
		g.d2[i*n+i] = 0
		for j := i + 1; j < n; j++ {
			v := max(0, G[i*n+i]+G[j*n+j]-2*G[i*n+j])
			g.d2[i*n+j], g.d2[j*n+i] = v, v
		}
	}
}

// cancels returns the center to recompute around when the last product
// lost a pair's distance to cancellation (see the type's doc), or -1.
func (g *gram) cancels() int {
	n := len(g.xs)
	found := false
	for i := 0; i < n && !found; i++ {
		for j := i + 1; j < n; j++ {
			if g.lost(i, j) {
				found = true
				break
			}
		}
	}
	if !found {
		return -1
	}
	// The input of least median distance to the others.
	g.medd, g.row, g.order = growFloats(g.medd, n), growFloats(g.row, n), growInts(g.order, n)
	for i := range n {
		r := g.row[:0]
		for j := range n {
			if j != i {
				r = append(r, g.d2[i*n+j])
			}
		}
		slices.Sort(r)
		g.medd[i] = r[(len(r)-1)/2]
		g.order[i] = i
	}
	g.rk.reset(n)
	g.rk.sort(g.order, g.xs, g.medd)
	return g.order[0]
}

// do implements task: the chunks of group p on worker w.
func (g *gram) do(w, p int) {
	ws := &g.ws[w]
	n, d := len(g.xs), len(g.xs[0])
	part := g.parts[p*n*n : (p+1)*n*n]
	c0, c1 := g.sp.bounds(p)
	for c := c0; c < c1; c++ {
		lo, hi := c*gramChunk, min((c+1)*gramChunk, d)
		k := hi - lo
		a := ws.a[:n*k]
		for i, x := range g.xs {
			if g.center == nil {
				ws.sc[i] = scaledCopy(a[i*k:(i+1)*k], x[lo:hi])
			} else {
				ws.sc[i] = scaledDiff(a[i*k:(i+1)*k], x[lo:hi], g.center[lo:hi])
			}
		}
		ws.eng.Sgemm(false, true, n, n, k, 1, a, k, a, k, 0, ws.c[:n*n], n)
		for i := range n {
			si := ws.sc[i]
			row, prow := ws.c[i*n:(i+1)*n], part[i*n:(i+1)*n]
			for j := i; j < n; j++ {
				prow[j] += float64(row[j]) * (si * ws.sc[j])
			}
		}
	}
}

// scaledCopy copies x to dst, scaled by a power of two 2^-e when x's
// largest magnitude lies outside [2^-40, 2^56), and returns 2^e (1 when not
// scaled). The scaled largest magnitude lies in [1/2, 1), so products of
// 256 scaled values neither overflow nor lose the large terms to underflow.
func scaledCopy(dst, x []float32) float64 {
	copy(dst, x)
	return scaleRow(dst, maxBits(dst))
}

// scaledDiff is scaledCopy of x − c. The difference is taken in float32
// (rounded once, relative to the difference itself), or, when it overflows
// float32 (inputs beyond 2^127 of opposite signs), in float64 and scaled
// before rounding.
func scaledDiff(dst, x, c []float32) float64 {
	c = c[:len(x)]
	for k, v := range x {
		dst[k] = v - c[k]
	}
	m := maxBits(dst)
	if m < 0x7f800000 {
		return scaleRow(dst, m)
	}
	var big float64
	for k, v := range x {
		big = max(big, math.Abs(float64(v)-float64(c[k])))
	}
	_, e := math.Frexp(big)
	s := math.Ldexp(1, -e)
	for k, v := range x {
		dst[k] = float32((float64(v) - float64(c[k])) * s)
	}
	return math.Ldexp(1, e)
}

// maxBits returns the largest magnitude of x as float32 bits.
func maxBits(x []float32) uint32 {
	var m0, m1, m2, m3 uint32
	k := 0
	for ; k+4 <= len(x); k += 4 {
		q := x[k : k+4 : k+4]
		m0 = max(m0, math.Float32bits(q[0])&0x7fffffff)
		m1 = max(m1, math.Float32bits(q[1])&0x7fffffff)
		m2 = max(m2, math.Float32bits(q[2])&0x7fffffff)
		m3 = max(m3, math.Float32bits(q[3])&0x7fffffff)
	}
	for ; k < len(x); k++ {
		m0 = max(m0, math.Float32bits(x[k])&0x7fffffff)
	}
	return max(m0, m1, m2, m3)
}

// scaleRow scales x in place by 2^-e when its largest magnitude m (float32
// bits) lies outside [2^-40, 2^56), bringing it into [1/2, 1), and returns
// 2^e (1 when not scaled).
func scaleRow(x []float32, m uint32) float64 {
	const lo, hi = (127 - 40) << 23, (127 + 56) << 23 // 2^-40, 2^56
	if m >= lo && m < hi || m == 0 {
		return 1
	}
	_, e := math.Frexp(float64(math.Float32frombits(m))) // max in [2^(e-1), 2^e)
	// Scale by 2^-e, in two exact float32 factors when 2^-e is beyond
	// float32's normal range (e < -125 for subnormal maxima).
	f1, f2 := float32(1), float32(math.Ldexp(1, -e))
	if -e > 126 {
		f1, f2 = float32(math.Ldexp(1, 100)), float32(math.Ldexp(1, -e-100))
	}
	for k, v := range x {
		x[k] = v * f1 * f2
	}
	return math.Ldexp(1, e)
}

// ranker orders inputs by a score, ties broken by the inputs' contents (see
// compareVec) and then by index, so that the order is a function of the
// multiset of inputs: a permutation of the inputs permutes the indices and
// nothing else. Identical inputs are interchangeable in every use of the
// order (same output bits), and only their weights go to the lower index.
//
// Comparing contents costs O(d) for identical inputs, so inputs found
// identical are merged (union-find) and never compared again: at most
// n − 1 full comparisons per call however many ties there are.
type ranker struct {
	parent []int
}

// reset prepares for n inputs.
func (r *ranker) reset(n int) {
	r.parent = growInts(r.parent, n)
	for i := range r.parent {
		r.parent[i] = i
	}
}

func (r *ranker) root(i int) int {
	for r.parent[i] != i {
		r.parent[i] = r.parent[r.parent[i]]
		i = r.parent[i]
	}
	return i
}

// sort orders idx by score (ascending), then contents, then index.
func (r *ranker) sort(idx []int, xs [][]float32, score []float64) {
	slices.SortFunc(idx, func(a, b int) int {
		switch sa, sb := score[a], score[b]; {
		case sa < sb:
			return -1
		case sa > sb:
			return 1
		}
		return r.compare(xs, a, b)
	})
}

// compare orders inputs a and b by contents, then index.
func (r *ranker) compare(xs [][]float32, a, b int) int {
	ra, rb := r.root(a), r.root(b)
	if ra != rb {
		if c := compareVec(xs[a], xs[b]); c != 0 {
			return c
		}
		r.parent[max(ra, rb)] = min(ra, rb)
	}
	return a - b
}

// compareVec orders vectors lexicographically by the order of keys (float
// order, -0 below +0): -1, 0 or +1.
func compareVec(x, y []float32) int {
	for k, v := range x {
		if a, b := key(v, 0), key(y[k], 0); a != b {
			if a < b {
				return -1
			}
			return 1
		}
	}
	return 0
}

// gramScratch is the Gram matrix's scratch for n inputs of dim floats
// (gram.run, one worker): the squared distances, the groups' partial sums,
// the worker's chunk of rows, its block of products, the rows' scales and
// its matrix engine's workspace; then a ranking's parents and a selection's
// order, scores and row (krum's kscores).
func gramScratch(n, dim int64) (int64, string) {
	limit := max(1, min(maxGroups, gramBudget/max(1, n*n)))
	groups := int64(split(int(min(dim, math.MaxInt32)+gramChunk-1)/gramChunk, 1, int(limit)).count)
	k := min(dim, gramChunk)
	ws := gemm.Workspace([]gemm.Product{{M: n, N: n, K: k, LDB: k, TransB: true}})
	b := memsize.Add(memsize.Alloc(memsize.Mul(8, n, n)), memsize.Alloc(memsize.Mul(8, groups, n, n)),
		memsize.Floats(n*gramChunk), memsize.Floats(n*n), memsize.Alloc(8*n), ws, 4*memsize.Alloc(8*n))
	return b, ""
}
