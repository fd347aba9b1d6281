package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/internal/gemm"
)

// refConvGrads is the float64 gradient of L = Σ dy·conv(x) (refConv): the
// weight and bias gradients and the input gradient.
func refConvGrads(x, dy []float64, n int, c *conv2d, w []float64) (dw, db, dx []float64) {
	kk := c.k * c.k
	W := w[:c.cout*c.cin*kk]
	dw, db = make([]float64, len(W)), make([]float64, c.cout)
	dx = make([]float64, len(x))
	for i := 0; i < n; i++ {
		for co := 0; co < c.cout; co++ {
			for oy := 0; oy < c.ho; oy++ {
				for ox := 0; ox < c.wo; ox++ {
					g := dy[((i*c.cout+co)*c.ho+oy)*c.wo+ox]
					db[co] += g
					for ci := 0; ci < c.cin; ci++ {
						for ky := 0; ky < c.k; ky++ {
							for kx := 0; kx < c.k; kx++ {
								iy, ix := oy*c.s-c.pd+ky, ox*c.s-c.pd+kx
								if iy < 0 || iy >= c.h || ix < 0 || ix >= c.w {
									continue
								}
								wi, xi := ((co*c.cin+ci)*c.k+ky)*c.k+kx, ((i*c.cin+ci)*c.h+iy)*c.w+ix
								dw[wi] += g * x[xi]
								dx[xi] += g * W[wi]
							}
						}
					}
				}
			}
		}
	}
	return dw, db, dx
}

// convRun is one forward and backward pass of a fresh layer: its output,
// weight, bias and input gradients.
type convRun struct{ y, dw, db, dx []float32 }

// runConv builds a stride-1 layer of shape (Cin, H, W, Cout, k, padding),
// set up further by configure when it is not nil, and runs n random
// samples and a random output gradient through it.
func runConv(t *testing.T, shape [6]int, n, threads int, seed uint64, configure func(*conv2d)) (convRun, *conv2d, []float32, []float32, []float32) {
	t.Helper()
	cin, h, w, cout, k, pad := shape[0], shape[1], shape[2], shape[3], shape[4], shape[5]
	c, err := newConv2d([]int{cin, h, w}, cout, k, 1, pad)
	if err != nil {
		t.Fatal(err)
	}
	if configure != nil {
		configure(c)
	}
	p, g := make([]float32, c.paramCount()), make([]float32, c.paramCount())
	c.bind(p, g, nil)
	r := rand.New(rand.NewPCG(seed, 7))
	c.initParams(r)
	c.alloc(n, true)
	x := make([]float32, n*cin*h*w)
	for j := range x {
		x[j] = float32(r.NormFloat64())
	}
	eng := gemm.New(threads)
	defer eng.Close()
	ps := &pass{eng: eng, train: true}
	y := append([]float32(nil), c.forward(ps, x, n)...)
	dy := make([]float32, len(y))
	for j := range dy {
		dy[j] = float32(r.NormFloat64())
	}
	dx := append([]float32(nil), c.backward(ps, dy, n)...)
	nw := len(c.wt)
	run := convRun{y, append([]float32(nil), g[:nw]...), append([]float32(nil), g[nw:]...), dx}
	return run, c, p, x, dy
}

func to64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// maxRelErr is max |a − ref| over max |ref|: the error against the scale of
// the result (a convolution's outputs are sums of hundreds of terms whose
// cancellation makes elementwise relative errors meaningless).
func maxRelErr(a []float32, ref []float64) float64 {
	var e, s float64
	for i, r := range ref {
		e = max(e, math.Abs(float64(a[i])-r))
		s = max(s, math.Abs(r))
	}
	return e / s
}

var winoShapes = [][6]int{
	{32, 14, 14, 64, 5, 2}, // the FEMNIST CNN's second convolution
	{16, 7, 9, 16, 5, 2},   // odd output sizes: the last tiles are cut
	{16, 5, 6, 20, 5, 0},   // one output row, two columns
	{17, 8, 8, 16, 5, 3},   // wider than "same" padding
}

// TestConvWinogradMatchesFloat64 checks the Winograd layer's output and all
// three gradients against the float64 direct convolution. Its error is
// larger than the direct float32 path's (up to 40× here: the transforms
// scale values by up to 100 before the sums) but stays below 3e-5 of the
// result's scale; a wrong coefficient in any transform gives errors of the
// order of the values themselves.
func TestConvWinogradMatchesFloat64(t *testing.T) {
	if testing.Short() {
		t.Skip("every Winograd shape at 1 and 3 threads against float64: 3.5 s; the full suite runs it")
	}
	for _, sh := range winoShapes {
		for _, threads := range []int{1, 3} {
			t.Run(fmt.Sprintf("%v/threads%d", sh, threads), func(t *testing.T) {
				// Forward: four full groups of 8 (planeToLanes) and a ragged
				// one; backward: 4 gradient chunks of 8 or 9, each a full
				// group and, but the first, a ragged one. The FEMNIST shape,
				// 15× the float64 work of the next largest, gets a full
				// group and a ragged one forward, and ragged chunks.
				n := 35
				if sh[0] == 32 {
					n = 9
				}
				var errs [2][4]float64
				for i, direct := range []bool{false, true} {
					got, c, p, x, dy := runConv(t, sh, n, threads, 11, func(c *conv2d) { c.forceDirect = direct })
					if (c.wino != nil) == direct {
						t.Fatalf("direct=%v but Winograd state %v", direct, c.wino != nil)
					}
					w64 := to64(p)
					y := refConv(to64(x), n, c, w64)
					dw, db, dx := refConvGrads(to64(x), to64(dy), n, c, w64)
					errs[i] = [4]float64{maxRelErr(got.y, y), maxRelErr(got.dw, dw), maxRelErr(got.db, db), maxRelErr(got.dx, dx)}
				}
				for j, what := range []string{"output", "weight gradient", "bias gradient", "input gradient"} {
					wino, direct := errs[0][j], errs[1][j]
					t.Logf("%s: Winograd %.2g, direct %.2g (max error / max |value|)", what, wino, direct)
					if wino > 3e-5 {
						t.Errorf("%s: Winograd error %.3g (direct %.3g)", what, wino, direct)
					}
				}
			})
		}
	}
}

// TestConvWinogradBitIdenticalAcrossThreads: the same bits for 1 to 4
// threads, GOMAXPROCS 4, batches that split into ragged groups and chunks.
func TestConvWinogradBitIdenticalAcrossThreads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{1, 5, 13} {
		ref, _, _, _, _ := runConv(t, winoShapes[1], n, 1, 5, nil)
		for _, threads := range []int{2, 3, 4} {
			got, _, _, _, _ := runConv(t, winoShapes[1], n, threads, 5, nil)
			for j, pair := range [][2][]float32{{got.y, ref.y}, {got.dw, ref.dw}, {got.db, ref.db}, {got.dx, ref.dx}} {
				for e := range pair[0] {
					if math.Float32bits(pair[0][e]) != math.Float32bits(pair[1][e]) {
						t.Fatalf("n=%d threads=%d: result %d element %d: %v, one thread %v", n, threads, j, e, pair[0][e], pair[1][e])
					}
				}
			}
		}
	}
}

// TestWinogradPairsMatchAVX2: the AVX-512 transforms of two tiles at once
// give the AVX2 kernels' bits for the outputs and all three gradients, on
// every Winograd shape (odd tile counts leave one tile to the 8-lane
// kernels; rows of tiles of odd length pair tiles across rows), with full
// and ragged groups.
func TestWinogradPairsMatchAVX2(t *testing.T) {
	if !winoPairs() {
		t.Skip("no AVX-512 on this machine (or TRELLIS_CPU caps it): the pair kernels do not run")
	}
	defer func() { winoPairsOn = true }()
	for _, sh := range winoShapes {
		var runs [2]convRun
		for i, pairs := range []bool{true, false} {
			winoPairsOn = pairs
			runs[i], _, _, _, _ = runConv(t, sh, 19, 2, 17, nil)
		}
		for j, what := range []string{"output", "weight gradient", "bias gradient", "input gradient"} {
			a, b := [][]float32{runs[0].y, runs[0].dw, runs[0].db, runs[0].dx}[j], [][]float32{runs[1].y, runs[1].dw, runs[1].db, runs[1].dx}[j]
			for e := range a {
				if math.Float32bits(a[e]) != math.Float32bits(b[e]) {
					t.Fatalf("%v %s element %d: pairs %v, AVX2 %v", sh, what, e, a[e], b[e])
				}
			}
		}
	}
}

// TestWinogradTakenWherePays: the FEMNIST CNN's second convolution uses
// F(4×4, 5×5); its first (one input channel), LeNet-5's and 3×3 layers do
// not.
func TestWinogradTakenWherePays(t *testing.T) {
	cases := []struct {
		in            []int
		cout, k, s, p int
		want          bool
	}{
		{[]int{32, 14, 14}, 64, 5, 1, 2, true},
		{[]int{1, 28, 28}, 32, 5, 1, 2, false},
		{[]int{6, 14, 14}, 16, 5, 1, 0, false},
		{[]int{32, 14, 14}, 64, 3, 1, 1, false},
		{[]int{32, 14, 14}, 64, 5, 2, 2, false},
	}
	for _, tc := range cases {
		c, err := newConv2d(tc.in, tc.cout, tc.k, tc.s, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.useWinograd(); got != tc.want {
			t.Errorf("%s: Winograd %v, want %v", c.kind(), got, tc.want)
		}
	}
}

// randNormal returns n standard normal float32 values from r.
func randNormal(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// TestWinogradTransformsAreAdjoint: ⟨Bᵀ d B, v⟩ = ⟨d, B v Bᵀ⟩ and
// ⟨Aᵀ m A, y⟩ = ⟨m, A y Aᵀ⟩ lane by lane for random arguments, through the
// 8-lane transforms the layer calls (AVX2 where the CPU has it), so the
// backward transforms are the exact adjoints the gradient needs: a sign or
// coefficient slip in one of the hand-written forms breaks this.
func TestWinogradTransformsAreAdjoint(t *testing.T) {
	const L = winoLanes
	r := rand.New(rand.NewPCG(1, 2))
	rnd := func(n int) []float32 { return randNormal(r, n) }
	// lanes sums a[k·L + l]·b[k·L + l] over k for each lane l.
	lanes := func(a, b []float32) [L]float64 {
		var s [L]float64
		for i := range a {
			s[i%L] += float64(a[i]) * float64(b[i])
		}
		return s
	}
	check := func(what string, a, b [L]float64) {
		t.Helper()
		for l := range a {
			if math.Abs(a[l]-b[l]) > 1e-4*(1+math.Abs(a[l])) {
				t.Fatalf("%s, lane %d: %v vs %v", what, l, a[l], b[l])
			}
		}
	}
	const A, X, M = winoAlpha, winoXi, winoM
	for trial := 0; trial < 20; trial++ {
		// Patches at pitch A·L (element (i, j) at i·A·L + jL + l), transformed
		// tiles at stride L (ξ·L + l).
		d, v := rnd(X*L), rnd(X*L)
		btd := make([]float32, X*L)
		winoInput8(btd, L, d, A*L)
		bv := make([]float32, X*L)
		winoInputGrad8(bv, A*L, v, L)
		check("input transforms", lanes(btd, v), lanes(d, bv))
		m := rnd(X * L)
		var y, aty [M * M * L]float32
		copy(y[:], rnd(M*M*L))
		winoOutput8(aty[:], M*L, m, L, 0)
		ay := make([]float32, X*L)
		winoOutputGrad8(ay, L, y[:], M*L)
		check("output transforms", lanes(aty[:], y[:]), lanes(m, ay))
	}
}

// TestWinogradLaneKernelsMatchGo compares the AVX2 lane transforms with the
// Go code lane by lane (up to rounding: the assembly fuses multiply-adds),
// at strides that are not the natural ones, and checks that the
// input-gradient kernel adds onto what is there.
func TestWinogradLaneKernelsMatchGo(t *testing.T) {
	if !winoVector() {
		t.Skip("no AVX2/FMA on this CPU (or TRELLIS_CPU=portable): only the Go transforms run")
	}
	const L, pitch, stride = winoLanes, 11 * winoLanes, 3*winoLanes + 5
	const A, X, M = winoAlpha, winoXi, winoM
	r := rand.New(rand.NewPCG(5, 6))
	rnd := func(n int) []float32 { return randNormal(r, n) }
	near := func(what string, got, want []float32) {
		t.Helper()
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 1e-5*(1+math.Abs(float64(want[i]))) {
				t.Fatalf("%s[%d]: AVX2 %v, Go %v", what, i, got[i], want[i])
			}
		}
	}
	src := rnd(A * pitch)
	got, want := make([]float32, X*stride), make([]float32, X*stride)
	winoInput8(got, stride, src, pitch)
	for l := 0; l < L; l++ {
		inputTransform(want[l:], stride, src[l:], pitch, L)
	}
	near("input", got, want)

	dv := rnd(X * stride)
	base := rnd(A * pitch)
	gotx, wantx := append([]float32(nil), base...), append([]float32(nil), base...)
	winoInputGrad8(gotx, pitch, dv, stride)
	for l := 0; l < L; l++ {
		inputGradTransform(wantx[l:], pitch, L, dv[l:], stride)
	}
	near("input gradient", gotx, wantx)

	// Outputs and output gradients at a row pitch of M+1 lanes' vectors
	// (the last unused), with a bias.
	const ypitch, bias = (M + 1) * L, 0.25
	m := rnd(X * stride)
	y, wy := make([]float32, M*ypitch), make([]float32, M*ypitch)
	winoOutput8(y, ypitch, m, stride, bias)
	var tile [M * M]float32
	for l := 0; l < L; l++ {
		outputTransform(&tile, m[l:], stride)
		for i := 0; i < M; i++ {
			for j := 0; j < M; j++ {
				wy[i*ypitch+j*L+l] = tile[i*M+j] + bias
			}
		}
	}
	near("output", y, wy)

	dy := rnd(M * ypitch)
	gotm, wantm := make([]float32, X*stride), make([]float32, X*stride)
	winoOutputGrad8(gotm, stride, dy, ypitch)
	for l := 0; l < L; l++ {
		for i := 0; i < M; i++ {
			for j := 0; j < M; j++ {
				tile[i*M+j] = dy[i*ypitch+j*L+l]
			}
		}
		outputGradTransform(wantm[l:], stride, &tile)
	}
	near("output gradient", gotm, wantm)

	// Filters, eight at a time (element k of lane l at 8k + l), against the
	// float64 transforms; U and dU at a stride of 70 floats.
	const us = 70
	filt := rnd(winoR * winoR * L)
	gotu, wantu := make([]float32, X*us), make([]float32, X*us)
	winoFilterVec(gotu, us, filt)
	du := rnd(X * us)
	gotg, wantg := make([]float32, winoR*winoR*L), make([]float32, winoR*winoR*L)
	winoFilterGradVec(gotg, du, us)
	for l := 0; l < L; l++ {
		g := make([]float32, winoR*winoR)
		for k := range g {
			g[k] = filt[k*L+l]
		}
		filterTransform(wantu[l:], us, g)
		filterGradTransform(g, du[l:], us)
		for k, v := range g {
			wantg[k*L+l] = v
		}
	}
	near("filter", gotu, wantu)
	near("filter gradient", gotg, wantg)
}

// winoG is G (convwino.go), the reference the filter transforms are
// checked against.
var winoG = [winoAlpha][winoR]float64{
	{1, 0, 0, 0, 0},
	{-2.0 / 9, -2.0 / 9, -2.0 / 9, -2.0 / 9, -2.0 / 9},
	{-2.0 / 9, 2.0 / 9, -2.0 / 9, 2.0 / 9, -2.0 / 9},
	{1.0 / 90, 1.0 / 45, 2.0 / 45, 4.0 / 45, 8.0 / 45},
	{1.0 / 90, -1.0 / 45, 2.0 / 45, -4.0 / 45, 8.0 / 45},
	{32.0 / 45, 16.0 / 45, 8.0 / 45, 4.0 / 45, 2.0 / 45},
	{32.0 / 45, -16.0 / 45, 8.0 / 45, -4.0 / 45, 2.0 / 45},
	{0, 0, 0, 0, 1},
}

// TestFilterTransformsMatchMatrices: the filter transforms (written with
// G's structure) give the entries of G g Gᵀ and Gᵀ dU G computed from the
// matrix itself in float64, rounded to float32, to within one float32 ulp
// (both round float64 sums once), on random values and ones that include
// ±0 and a subnormal; an infinite input makes some output non-finite.
func TestFilterTransformsMatchMatrices(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	special := []float64{0, math.Copysign(0, -1), 1e-40, -3}
	const stride = 3
	near := func(what string, trial int, got float32, want float64) {
		t.Helper()
		w := float32(want)
		if got == w {
			return
		}
		if ulp := math.Nextafter32(w, float32(math.Inf(1))) - w; math.Abs(float64(got-w)) > float64(ulp) {
			t.Fatalf("trial %d: %s = %v, want %v", trial, what, got, w)
		}
	}
	for trial := 0; trial < 200; trial++ {
		g := make([]float32, winoR*winoR)
		du := make([]float32, winoXi*stride)
		for i := range g {
			g[i] = float32(r.NormFloat64())
		}
		for i := range du {
			du[i] = float32(r.NormFloat64() * 100)
		}
		if trial%4 == 0 {
			g[r.IntN(len(g))] = float32(special[r.IntN(len(special))])
			du[r.IntN(len(du))] = float32(special[r.IntN(len(special))])
		}
		u := make([]float32, winoXi*stride)
		filterTransform(u, stride, g)
		for a := 0; a < winoAlpha; a++ {
			for b := 0; b < winoAlpha; b++ {
				var s float64
				for j := 0; j < winoR; j++ {
					var gg float64
					for i := 0; i < winoR; i++ {
						gg += winoG[a][i] * float64(g[i*winoR+j])
					}
					s += gg * winoG[b][j]
				}
				near(fmt.Sprintf("U[%d][%d]", a, b), trial, u[(winoAlpha*a+b)*stride], s)
			}
		}
		dg := make([]float32, winoR*winoR)
		filterGradTransform(dg, du, stride)
		for i := 0; i < winoR; i++ {
			for j := 0; j < winoR; j++ {
				var s float64
				for b := 0; b < winoAlpha; b++ {
					var gd float64
					for a := 0; a < winoAlpha; a++ {
						gd += winoG[a][i] * float64(du[(winoAlpha*a+b)*stride])
					}
					s += gd * winoG[b][j]
				}
				near(fmt.Sprintf("dg[%d][%d]", i, j), trial, dg[i*winoR+j], s)
			}
		}
	}
	g, du := make([]float32, winoR*winoR), make([]float32, winoXi*stride)
	g[7], du[9*stride] = float32(math.Inf(1)), float32(math.Inf(-1))
	u, dg := make([]float32, winoXi*stride), make([]float32, winoR*winoR)
	filterTransform(u, stride, g)
	filterGradTransform(dg, du, stride)
	if !slices.ContainsFunc(u, isInf) || !slices.ContainsFunc(dg, isInf) {
		t.Fatalf("an infinite input gave finite transforms: U %v, dg %v", u, dg)
	}
}

func isInf(v float32) bool { return math.IsInf(float64(v), 0) }
