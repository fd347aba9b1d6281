package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// engines returns every kernel this machine can run, each as a 1-thread
// engine, so the portable path is tested even where AVX2 is available.
func engines(t testing.TB) []*Engine {
	es := []*Engine{NewPortable(1)}
	for _, k := range available() {
		if k != portable {
			es = append(es, newEngine(1, k))
		}
	}
	for _, e := range es {
		t.Cleanup(e.Close)
	}
	return es
}

// operands holds one randomly filled problem. Every slice entry outside the
// matrices (padding beyond a row, at leading dimensions larger than the row)
// is NaN, so reading it would poison the result and writing it is detected.
type operands struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	a, b, c        []float32
	lda, ldb, ldc  int
}

func newOperands(r *rand.Rand, transA, transB bool, m, n, k, pad int, alpha, beta float32) *operands {
	o := &operands{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta}
	o.a, o.lda = randMatrix(r, m, k, transA, pad)
	o.b, o.ldb = randMatrix(r, k, n, transB, pad)
	o.c, o.ldc = randMatrix(r, m, n, false, pad)
	return o
}

// randMatrix returns a rows×cols matrix (stored transposed if trans) with
// uniform entries in [-1, 1) and NaN padding of pad floats per row.
func randMatrix(r *rand.Rand, rows, cols int, trans bool, pad int) ([]float32, int) {
	if trans {
		rows, cols = cols, rows
	}
	ld := max(1, cols+pad)
	x := make([]float32, rows*ld)
	for i := range x {
		if i%ld < cols {
			x[i] = float32(2*r.Float64() - 1)
		} else {
			x[i] = float32(math.NaN())
		}
	}
	return x, ld
}

func (o *operands) cloneC() []float32 { return append([]float32(nil), o.c...) }

func (o *operands) run(e *Engine, c []float32) {
	e.Sgemm(o.transA, o.transB, o.m, o.n, o.k, o.alpha, o.a, o.lda, o.b, o.ldb, o.beta, c, o.ldc)
}

func (o *operands) String() string {
	return fmt.Sprintf("transA=%v transB=%v m=%d n=%d k=%d alpha=%v beta=%v lda=%d ldb=%d ldc=%d",
		o.transA, o.transB, o.m, o.n, o.k, o.alpha, o.beta, o.lda, o.ldb, o.ldc)
}

// check compares got against Reference. Any summation order of k products
// in float32 is within γ_k·Σ|a||b| of the exact value (Higham, Accuracy and
// Stability of Numerical Algorithms, 2nd ed., §3.1), as is the reference, so
// the two may differ by twice that, plus the rounding of the alpha and beta
// terms. Padding must be untouched.
func (o *operands) check(t *testing.T, what string, got []float32) {
	t.Helper()
	want := o.cloneC()
	Reference(o.transA, o.transB, o.m, o.n, o.k, o.alpha, o.a, o.lda, o.b, o.ldb, o.beta, want, o.ldc)
	const eps = 1.0 / (1 << 23)
	gamma := 2 * float64(o.k+2) * eps
	bad := 0
	for i := 0; i < o.m; i++ {
		for j := 0; j < o.n; j++ {
			var mag float64
			for p := 0; p < o.k; p++ {
				mag += math.Abs(float64(o.at(o.a, o.lda, o.transA, i, p) * o.at(o.b, o.ldb, o.transB, p, j)))
			}
			old := float64(o.c[i*o.ldc+j])
			tol := gamma*math.Abs(float64(o.alpha))*mag + 2*eps*math.Abs(float64(o.beta))*math.Abs(old) + 1e-30
			g, w := float64(got[i*o.ldc+j]), float64(want[i*o.ldc+j])
			if math.IsNaN(g) || math.Abs(g-w) > tol {
				if bad < 5 {
					t.Errorf("%s %v: C[%d][%d] = %v, want %v ± %.3g", what, o, i, j, g, w, tol)
				}
				bad++
			}
		}
	}
	for i, v := range got {
		if i%o.ldc >= o.n && !math.IsNaN(float64(v)) {
			t.Fatalf("%s %v: padding C[%d] written: %v", what, o, i, v)
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d wrong elements", what, bad)
	}
}

func (o *operands) at(x []float32, ld int, trans bool, i, j int) float32 {
	if trans {
		return x[j*ld+i]
	}
	return x[i*ld+j]
}

var transCombos = [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}}

// TestOddShapes covers sizes on both sides of every tile and block size,
// all transpositions, padded leading dimensions, and the alpha/beta cases.
func TestOddShapes(t *testing.T) {
	sizes := []int{1, 3, 7, 17, 33, 65, 127, 257}
	alphas := []float32{1, 0.5, -2}
	betas := []float32{0, 1, 0.3}
	r := rand.New(rand.NewPCG(1, 2))
	for _, e := range engines(t) {
		idx := 0
		for _, tr := range transCombos {
			for _, m := range sizes {
				for _, n := range sizes {
					for _, k := range sizes {
						if m*n*k > 65*65*257 && (m+n+k)%2 == 0 {
							continue // keep the reference loop affordable
						}
						idx++
						o := newOperands(r, tr[0], tr[1], m, n, k, idx%3*5, alphas[idx%3], betas[idx/3%3])
						got := o.cloneC()
						o.run(e, got)
						o.check(t, e.Kernel(), got)
					}
				}
			}
		}
	}
}

// TestNNShapes covers the products a small MLP and a conv layer (through
// im2col) issue, in the transpositions internal/nn uses.
func TestNNShapes(t *testing.T) {
	type shape struct {
		transA, transB bool
		m, n, k        int
		beta           float32
	}
	shapes := []shape{
		{false, false, 32, 256, 784, 0}, // (32×784)·(784×256)
		{false, true, 32, 256, 784, 0},  // linear forward: x·Wᵀ
		{true, false, 256, 784, 32, 1},  // linear weight gradient: dyᵀ·x, accumulated
		{false, false, 32, 784, 256, 0}, // linear input gradient: dy·W
		{false, true, 32, 128, 256, 0},
		{true, false, 128, 256, 32, 1},
		{false, false, 64, 196, 800, 0}, // conv forward: W·col
		{false, true, 64, 800, 196, 1},  // conv weight gradient: dy·colᵀ
		{true, false, 800, 196, 64, 0},  // conv input gradient: Wᵀ·dy
		{false, false, 196, 64, 800, 0},
		{false, false, 32, 1024, 64, 0.3}, // ldb a multiple of 1024: B packed even for 32 rows
		{true, true, 64, 48, 100, 0.3},    // a last panel of exactly half a tile
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, e := range append(engines(t), New(2)) {
		for _, s := range shapes {
			o := newOperands(r, s.transA, s.transB, s.m, s.n, s.k, 0, 1, s.beta)
			got := o.cloneC()
			o.run(e, got)
			o.check(t, fmt.Sprintf("%s/%d", e.Kernel(), e.Threads()), got)
		}
	}
}

// TestBetaZeroIgnoresNaN: with beta == 0, C is output only, as in BLAS.
func TestBetaZeroIgnoresNaN(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, e := range engines(t) {
		for _, s := range [][3]int{{1, 1, 1}, {6, 16, 5}, {13, 37, 300}, {40, 70, 3}} {
			o := newOperands(r, false, false, s[0], s[1], s[2], 2, -2, 0)
			for i := range o.c {
				o.c[i] = float32(math.NaN())
			}
			got := o.cloneC()
			o.run(e, got)
			o.check(t, e.Kernel(), got)
		}
	}
}

// TestDegenerate: empty products leave C = beta*C (zero when beta == 0, even
// over NaN), and empty C touches nothing, including nil slices.
func TestDegenerate(t *testing.T) {
	nan := float32(math.NaN())
	for _, e := range engines(t) {
		e.Sgemm(false, false, 0, 5, 3, 1, nil, 3, make([]float32, 15), 5, 0, nil, 5)
		e.Sgemm(true, true, 4, 0, 3, 1, make([]float32, 12), 4, nil, 3, 0, nil, 1)
		e.Sgemm(false, false, 0, 0, 0, 1, nil, 1, nil, 1, 0, nil, 1)

		c := []float32{1, 2, nan, 3, 4, nan}
		e.Sgemm(false, false, 2, 2, 0, 1, nil, 1, nil, 2, 0.5, c, 3)
		if c[0] != 0.5 || c[1] != 1 || c[3] != 1.5 || c[4] != 2 || !math.IsNaN(float64(c[2])) {
			t.Errorf("%s: k=0, beta=0.5: C = %v", e.Kernel(), c)
		}
		c = []float32{nan, nan, nan, nan}
		e.Sgemm(true, false, 2, 2, 0, 1, nil, 2, nil, 2, 0, c, 2)
		for _, v := range c {
			if v != 0 {
				t.Errorf("%s: k=0, beta=0 over NaN: C = %v", e.Kernel(), c)
			}
		}
		// alpha == 0 does not read A or B (here full of NaN).
		a := []float32{nan, nan}
		c = []float32{2, 4}
		e.Sgemm(false, false, 1, 2, 1, 0, a, 1, a, 2, 0.5, c, 2)
		if c[0] != 1 || c[1] != 2 {
			t.Errorf("%s: alpha=0: C = %v", e.Kernel(), c)
		}
	}
}

func TestBadArguments(t *testing.T) {
	e := New(1)
	defer e.Close()
	x := make([]float32, 100)
	cases := []struct {
		name string
		call func()
	}{
		{"negative m", func() { e.Sgemm(false, false, -1, 2, 2, 1, x, 2, x, 2, 0, x, 2) }},
		{"lda too small", func() { e.Sgemm(false, false, 2, 2, 3, 1, x, 2, x, 2, 0, x, 2) }},
		{"ldb too small (trans)", func() { e.Sgemm(false, true, 2, 2, 3, 1, x, 3, x, 2, 0, x, 2) }},
		{"ldc too small", func() { e.Sgemm(false, false, 2, 3, 2, 1, x, 2, x, 3, 0, x, 2) }},
		{"short a", func() { e.Sgemm(false, false, 20, 2, 6, 1, x, 6, x, 2, 0, x, 2) }},
		{"short c", func() { e.Sgemm(false, false, 11, 10, 1, 1, x, 1, x, 10, 0, x, 10) }},
	}
	for _, tc := range cases {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			tc.call()
		}()
	}
}

// TestRandomShapes draws shapes, transpositions, padding and scalars from a
// seeded PCG, so a failure names a reproducible case.
func TestRandomShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	alphas := []float32{1, 0.5, -2, 1.5}
	betas := []float32{0, 1, 0.3, -1}
	es := engines(t)
	es = append(es, New(3))
	es[len(es)-1].minPartWork = 1
	for i := 0; i < 300; i++ {
		dim := func() int {
			if r.IntN(4) == 0 {
				return 1 + r.IntN(8)
			}
			return 1 + r.IntN(150)
		}
		m, n, k := dim(), dim(), dim()
		if r.IntN(10) == 0 {
			k = 250 + r.IntN(300) // several k blocks
		}
		o := newOperands(r, r.IntN(2) == 1, r.IntN(2) == 1, m, n, k, r.IntN(4),
			alphas[r.IntN(len(alphas))], betas[r.IntN(len(betas))])
		e := es[i%len(es)]
		got := o.cloneC()
		o.run(e, got)
		o.check(t, fmt.Sprintf("case %d %s/%d", i, e.Kernel(), e.Threads()), got)
	}
}

// TestThreadsBitIdentical: the output split never changes an element's
// arithmetic, so every thread count gives the same bits, on every kernel.
// minPartWork is lowered so small shapes split too, at ragged boundaries.
func TestThreadsBitIdentical(t *testing.T) {
	// Parts are capped at GOMAXPROCS; raise it so 3 and 4 parts run.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	r := rand.New(rand.NewPCG(9, 10))
	shapes := [][3]int{{300, 40, 600}, {40, 300, 600}, {97, 131, 259}, {32, 256, 784}, {784, 256, 32}, {13, 1000, 7}}
	for _, k := range available() {
		for _, s := range shapes {
			for _, tr := range transCombos {
				o := newOperands(r, tr[0], tr[1], s[0], s[1], s[2], 1, 0.5, 0.3)
				var want []float32
				for threads := 1; threads <= 4; threads++ {
					for _, minWork := range []int{parallelMinWork, 1} {
						e := newEngine(threads, k)
						e.minPartWork = minWork
						got := o.cloneC()
						o.run(e, got)
						o.run(e, got) // second call reuses the pool and buffers
						e.Close()
						if want == nil {
							want = got
							continue
						}
						for i := range want {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%s %v threads=%d minWork=%d: C[%d] = %v, 1 thread gave %v",
									k.name, o, threads, minWork, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestKernelsAgree: the assembly kernels accumulate every element in the
// same order with FMA and share the k blocking, so AVX2 and AVX-512 give the
// same bits. (The portable kernel rounds each product and is not compared.)
func TestKernelsAgree(t *testing.T) {
	ks := available()
	if len(ks) < 3 {
		t.Skip("needs two assembly kernels on this CPU")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, s := range [][3]int{{32, 256, 784}, {65, 33, 300}, {7, 100, 1000}} {
		for _, tr := range transCombos {
			o := newOperands(r, tr[0], tr[1], s[0], s[1], s[2], 0, -2, 0.3)
			var want []float32
			for _, k := range ks[1:] {
				e := newEngine(1, k)
				got := o.cloneC()
				o.run(e, got)
				if want == nil {
					want = got
					continue
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s vs %s %v: C[%d] = %v vs %v", k.name, ks[1].name, o, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestNoAllocs: after a warm-up call of the same shape, a call allocates
// nothing, on one thread and when split across helpers. testing.AllocsPerRun
// runs at GOMAXPROCS 1, where calls are never split, so the count is taken
// from the memory statistics directly, at GOMAXPROCS 2.
func TestNoAllocs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	r := rand.New(rand.NewPCG(13, 14))
	for _, threads := range []int{1, 2} {
		for _, k := range available() {
			for _, s := range [][3]int{{32, 256, 784}, {256, 784, 32}, {5, 7, 3}} {
				if parts, _ := newEngine(threads, k).split(s[0], s[1], s[2]); threads > 1 && s[0] > 5 && parts < 2 {
					t.Fatalf("shape %v not split on %d threads", s, threads)
				}
				// One engine at a time: the memory statistics are global, and
				// another engine's helper parking on a channel may allocate
				// a runtime sudog, which is not a call allocating.
				e := newEngine(threads, k)
				o := newOperands(r, false, true, s[0], s[1], s[2], 0, 1, 0)
				c := o.cloneC()
				for range 3 {
					o.run(e, c)
				}
				// The runtime allocates now and then on its own (the
				// scavenger's timers, GC workers), and the statistics count
				// every goroutine; so the best of up to 20 rounds must be zero
				// (5 were not always enough on a loaded machine).
				// A call that allocated would show in every round.
				const runs = 50
				best := uint64(math.MaxUint64)
				for round := 0; round < 20 && best > 0; round++ {
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					for range runs {
						o.run(e, c)
					}
					runtime.ReadMemStats(&after)
					best = min(best, after.Mallocs-before.Mallocs)
				}
				e.Close()
				if best != 0 {
					t.Errorf("%s threads=%d shape %v: %d allocations in %d calls", k.name, threads, s, best, runs)
				}
			}
		}
	}
}

func TestNewClampsThreads(t *testing.T) {
	e := New(0)
	defer e.Close()
	if e.Threads() != 1 {
		t.Errorf("New(0).Threads() = %d, want 1", e.Threads())
	}
	if NewPortable(1).Kernel() != "portable" {
		t.Errorf("NewPortable kernel = %q", NewPortable(1).Kernel())
	}
}

// TestCloseStopsHelpers: Close returns only once the helper goroutines have
// returned, and may be repeated; an Engine dropped without Close is
// collected and its helpers stopped by the cleanup.
func TestCloseStopsHelpers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	x := make([]float32, 64*64)
	c := make([]float32, 64*64)
	start := func(threads int) (*Engine, *pool) {
		e := New(threads)
		e.minPartWork = 1
		e.Sgemm(false, false, 64, 64, 64, 1, x, 64, x, 64, 0, c, 64)
		if e.pool == nil {
			t.Fatal("a split call started no helpers")
		}
		return e, e.pool
	}

	e, p := start(4)
	e.Close()
	e.Close()
	p.exited.Wait() // returns at once: Close waited already
	if !p.quit.Load() {
		t.Error("pool not stopped by Close")
	}

	_, p = start(3) // dropped: only the cleanup can stop it
	for i := 0; i < 100 && !p.quit.Load(); i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if !p.quit.Load() {
		t.Error("dropped Engine's helpers still running after 100 GCs (does a helper reference the Engine?)")
	}
	p.exited.Wait()
}

// FuzzSgemm checks every kernel against Reference on fuzzer-chosen shapes
// (bounded so the reference loop stays fast). go test runs the seeds; go
// test -fuzz=FuzzSgemm explores.
func FuzzSgemm(f *testing.F) {
	f.Add(uint8(1), uint8(1), uint16(1), uint8(0), uint8(0), uint64(1))
	f.Add(uint8(33), uint8(17), uint16(300), uint8(3), uint8(7), uint64(2))
	f.Add(uint8(8), uint8(32), uint16(256), uint8(1), uint8(2), uint64(3))
	f.Add(uint8(100), uint8(49), uint16(513), uint8(2), uint8(5), uint64(4))
	kernels := available()
	alphas := []float32{1, 0.5, -2}
	betas := []float32{0, 1, 0.3}
	f.Fuzz(func(t *testing.T, m, n uint8, k uint16, flags, pad uint8, seed uint64) {
		k %= 600
		r := rand.New(rand.NewPCG(seed, 99))
		o := newOperands(r, flags&1 != 0, flags&2 != 0, int(m), int(n), int(k), int(pad%9),
			alphas[int(flags>>2)%3], betas[int(flags>>4)%3])
		e := newEngine(1+int(flags>>6), kernels[int(seed%uint64(len(kernels)))])
		defer e.Close()
		e.minPartWork = 1
		got := o.cloneC()
		o.run(e, got)
		o.check(t, e.Kernel(), got)
	})
}

// TestSwappedMatchesPlain: a product computed as its transpose, with B read
// in place (Engine.swaps), gives the plain path's bits, for ragged n and
// k, every beta (C read or not, NaN in C with beta 0), padded leading
// dimensions, and on two threads with tiny parts; the shapes do take the
// swapped path, and the plain path is checked against the reference.
func TestSwappedMatchesPlain(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	r := rand.New(rand.NewPCG(13, 14))
	swapped := 0
	for _, k := range available() {
		if k.microA == nil {
			continue
		}
		for _, s := range [][3]int{{32, 256, 784}, {64, 800, 224}, {32, 10, 128}, {64, 37, 301}, {32, 1, 100}, {96, 53, 1000}} {
			for _, beta := range []float32{0, 1, 0.5} {
				o := newOperands(r, false, true, s[0], s[1], s[2], 3, 0.7, beta)
				if beta == 0 {
					for i := range o.c {
						o.c[i] = float32(math.NaN())
					}
				}
				for _, threads := range []int{1, 2} {
					if matchesPlainPath(t, k, o, threads, "swapped", func(e *Engine) bool { return e.swaps(false, true, o.m, o.k, beta) }) {
						swapped++
					}
				}
			}
		}
	}
	if swapped == 0 && hasAVX2 {
		t.Fatal("no shape took the swapped path")
	}
}

// matchesPlainPath runs o with kernel k on threads threads (tiny parts), on
// an engine with every shortcut and on one with the swapped and in-place
// paths off (noSwap: A and B packed), checks the plain result against the
// reference and fails unless both have the same bits. It reports whether
// the shortcut engine took the path fast names (took).
func matchesPlainPath(t *testing.T, k *kernel, o *operands, threads int, fast string, took func(*Engine) bool) bool {
	t.Helper()
	e, plain := newEngine(threads, k), newEngine(threads, k)
	defer e.Close()
	defer plain.Close()
	e.minPartWork, plain.minPartWork, plain.noSwap = 1, 1, true
	got, want := o.cloneC(), o.cloneC()
	o.run(e, got)
	o.run(plain, want)
	o.check(t, fmt.Sprintf("%s plain", k.name), want)
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s %v threads %d: C[%d] = %v %s, %v plain", k.name, o, threads, i, got[i], fast, want[i])
		}
	}
	return took(e)
}

// TestInPlaceAMatchesPacked: a product with few columns, whose A the kernel
// reads in place (Engine.readsAInPlace), gives the bits of the same product
// with A packed, for both B layouts, ragged m (a last A panel packed alone),
// several k blocks, every beta, and on two threads with tiny parts; the
// packed path is checked against the reference.
func TestInPlaceAMatchesPacked(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	r := rand.New(rand.NewPCG(21, 22))
	inPlace := 0
	for _, k := range available() {
		if k.microA == nil {
			continue
		}
		for _, s := range [][3]int{{64, 32, 64}, {37, 16, 301}, {64, 2 * k.nr, 600}, {13, 5, 7}, {8, 1, 40}} {
			for _, transB := range []bool{false, true} {
				for _, beta := range []float32{0, 1, 0.5} {
					o := newOperands(r, false, transB, s[0], s[1], s[2], 3, 0.7, beta)
					for _, threads := range []int{1, 2} {
						if matchesPlainPath(t, k, o, threads, "in place", func(e *Engine) bool { return e.readsAInPlace(false, o.n) }) {
							inPlace++
						}
					}
				}
			}
		}
	}
	if inPlace == 0 && hasAVX2 {
		t.Fatal("no shape read A in place")
	}
}

// TestPackedMatchesSgemm: a product with A packed once (PackA, then
// SgemmPacked, twice with the same packing) gives Sgemm's bits, for every
// kernel, both transpositions, ragged m and several k blocks, on one and
// two threads with tiny parts.
func TestPackedMatchesSgemm(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	r := rand.New(rand.NewPCG(15, 16))
	for _, k := range available() {
		for _, s := range [][3]int{{64, 224, 800}, {800, 224, 64}, {13, 50, 7}, {37, 301, 600}, {6, 16, 25}} {
			for _, tr := range transCombos {
				o := newOperands(r, tr[0], tr[1], s[0], s[1], s[2], 2, 0.9, 0.5)
				for _, threads := range []int{1, 2} {
					e := newEngine(threads, k)
					e.minPartWork = 1
					want := o.cloneC()
					o.run(e, want)
					var pa PackedA
					e.PackA(&pa, o.transA, o.m, o.k, o.a, o.lda)
					for range 2 {
						got := o.cloneC()
						e.SgemmPacked(&pa, o.transB, o.n, o.alpha, o.b, o.ldb, o.beta, got, o.ldc)
						for i := range want {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%s %v threads %d: C[%d] = %v packed once, %v", k.name, o, threads, i, got[i], want[i])
							}
						}
					}
					e.Close()
				}
			}
		}
	}
}

// gatheredRows returns a random slice of srcLen floats, count offsets of
// runs of width floats in it (they overlap), and the count×width matrix
// those runs make.
func gatheredRows(r *rand.Rand, count, width, srcLen int) (src []float32, rows []int, b []float32) {
	src = make([]float32, srcLen)
	for i := range src {
		src[i] = float32(2*r.Float64() - 1)
	}
	rows = make([]int, count)
	b = make([]float32, count*width)
	for j := range rows {
		rows[j] = r.IntN(srcLen - width + 1)
		copy(b[j*width:(j+1)*width], src[rows[j]:])
	}
	return src, rows, b
}

// TestGatheredMatchesPacked: a product whose B rows are gathered from
// overlapping runs of one slice (SgemmGathered) gives SgemmPacked's bits on
// the materialised B, for every kernel (the assembly ones read full panels
// through the offsets, the portable one copies them), ragged m and n,
// several k blocks, beta 0 (NaN in C) and not, and two threads; and a row
// that overruns the slice panics instead of being read.
func TestGatheredMatchesPacked(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	r := rand.New(rand.NewPCG(17, 18))
	for _, k := range available() {
		for _, s := range [][3]int{{64, 224, 800}, {6, 896, 75}, {16, 140, 150}, {13, 37, 300}, {32, 16, 25}, {8, 33, 600}} {
			m, n, kk := s[0], s[1], s[2]
			src, rows, b := gatheredRows(r, kk, n, 3*n+kk)
			a, lda := randMatrix(r, m, kk, false, 1)
			for _, beta := range []float32{0, 0.5} {
				c, ldc := randMatrix(r, m, n, false, 2)
				if beta == 0 {
					for i := range c {
						c[i] = float32(math.NaN())
					}
				}
				for _, threads := range []int{1, 2} {
					e := newEngine(threads, k)
					e.minPartWork = 1
					var pa PackedA
					e.PackA(&pa, false, m, kk, a, lda)
					want, got := slices.Clone(c), slices.Clone(c)
					e.SgemmPacked(&pa, false, n, 0.8, b, n, beta, want, ldc)
					e.SgemmGathered(&pa, n, 0.8, src, rows, beta, got, ldc)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s %v beta %v threads %d: C[%d] = %v gathered, %v", k.name, s, beta, threads, i, got[i], want[i])
						}
					}
					e.Close()
				}
			}
		}
	}
	e := New(1)
	defer e.Close()
	var pa PackedA
	e.PackA(&pa, false, 2, 3, make([]float32, 6), 3)
	defer func() {
		if recover() == nil {
			t.Error("a row past the end of b did not panic")
		}
	}()
	e.SgemmGathered(&pa, 4, 1, make([]float32, 10), []int{0, 6, 7}, 0, make([]float32, 8), 4)
}

// TestGatheredNTIsNTGatheredTransposed: SgemmGatheredNT gives the
// transpose of SgemmNTGathered's C, bit for bit, for every kernel, ragged
// shapes (gathered rows short of a register panel), every beta (NaN in C
// with beta 0) and two threads; an overrunning row panics.
func TestGatheredNTIsNTGatheredTransposed(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	r := rand.New(rand.NewPCG(23, 24))
	for _, k := range available() {
		for _, s := range [][3]int{{75, 6, 896}, {150, 16, 140}, {25, 32, 840}, {37, 13, 300}, {9, 20, 8}} {
			m, n, kk := s[0], s[1], s[2]
			src, rows, _ := gatheredRows(r, m, kk, 2*kk+m)
			b, ldb := randMatrix(r, n, kk, false, 1)
			for _, beta := range []float32{0, 1, 0.5} {
				c, ldc := randMatrix(r, m, n, false, 2)
				if beta == 0 {
					for i := range c {
						c[i] = float32(math.NaN())
					}
				}
				ct := make([]float32, n*m) // c transposed, at stride m
				for i := range m {
					for j := range n {
						ct[j*m+i] = c[i*ldc+j]
					}
				}
				for _, threads := range []int{1, 2} {
					e := newEngine(threads, k)
					e.minPartWork = 1
					got, want := slices.Clone(c), slices.Clone(ct)
					e.SgemmGatheredNT(m, n, kk, 0.6, src, rows, b, ldb, beta, got, ldc)
					e.SgemmNTGathered(n, m, kk, 0.6, b, ldb, src, rows, beta, want, m)
					for i := range m {
						for j := range n {
							if g, w := got[i*ldc+j], want[j*m+i]; math.Float32bits(g) != math.Float32bits(w) {
								t.Fatalf("%s %v beta %v threads %d: C[%d][%d] = %v, transposed %v", k.name, s, beta, threads, i, j, g, w)
							}
						}
					}
					e.Close()
				}
			}
		}
	}
	e := New(1)
	defer e.Close()
	defer func() {
		if recover() == nil {
			t.Error("a row past the end of a did not panic")
		}
	}()
	e.SgemmGatheredNT(3, 2, 4, 1, make([]float32, 10), []int{0, 6, 7}, make([]float32, 8), 4, 0, make([]float32, 6), 2)
}

// TestNTGatheredMatchesSgemm: C = A·Bᵀ with B's rows gathered from
// overlapping runs of one slice (SgemmNTGathered) gives Sgemm's bits on the
// materialised B, for every kernel (AVX2 reads the rows in place, with its
// half-width variant for narrow C; the others copy them), ragged shapes,
// every beta (NaN in C with beta 0), two threads; an overrunning row panics.
func TestNTGatheredMatchesSgemm(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	r := rand.New(rand.NewPCG(19, 20))
	for _, k := range available() {
		for _, s := range [][3]int{{6, 75, 896}, {64, 800, 224}, {16, 150, 140}, {32, 25, 840}, {13, 37, 300}, {6, 10, 50}, {20, 9, 8}} {
			m, n, kk := s[0], s[1], s[2]
			src, rows, b := gatheredRows(r, n, kk, 2*kk+n)
			a, lda := randMatrix(r, m, kk, false, 1)
			for _, beta := range []float32{0, 1, 0.5} {
				c, ldc := randMatrix(r, m, n, false, 2)
				if beta == 0 {
					for i := range c {
						c[i] = float32(math.NaN())
					}
				}
				for _, threads := range []int{1, 2} {
					e := newEngine(threads, k)
					e.minPartWork = 1
					want, got := slices.Clone(c), slices.Clone(c)
					e.Sgemm(false, true, m, n, kk, 0.6, a, lda, b, kk, beta, want, ldc)
					e.SgemmNTGathered(m, n, kk, 0.6, a, lda, src, rows, beta, got, ldc)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s %v beta %v threads %d: C[%d] = %v gathered, %v", k.name, s, beta, threads, i, got[i], want[i])
						}
					}
					e.Close()
				}
			}
		}
	}
	e := New(1)
	defer e.Close()
	defer func() {
		if recover() == nil {
			t.Error("a row past the end of b did not panic")
		}
	}()
	e.SgemmNTGathered(2, 3, 4, 1, make([]float32, 8), 4, make([]float32, 10), []int{0, 6, 7}, 0, make([]float32, 6), 3)
}
