package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/trellis-fl/trellis/internal/gemm"
)

// TestConvWideLayoutMatchesIm2col runs stride-1 convolutions of several
// shapes (non-square, padding 0–3, kernels 1–5, one and several input
// channels) through the wide layout and through the per-row im2col layout
// (checked against the float64 reference by the gradient tests), with 1 to
// 3 workers, and requires the same outputs, weight, bias and input
// gradients up to float32 rounding.
func TestConvWideLayoutMatchesIm2col(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	cases := []struct{ cin, h, w, cout, k, pad int }{
		{1, 28, 28, 6, 5, 2}, {3, 9, 13, 4, 3, 1}, {2, 7, 5, 3, 5, 0},
		{4, 6, 6, 5, 1, 0}, {2, 5, 8, 3, 3, 3}, {32, 14, 14, 8, 5, 2},
	}
	for _, tc := range cases {
		for _, threads := range []int{1, 2, 3} {
			name := fmt.Sprintf("%d×%d×%d→%d k%d p%d threads%d", tc.cin, tc.h, tc.w, tc.cout, tc.k, tc.pad, threads)
			t.Run(name, func(t *testing.T) {
				const n = 7
				var got [2][4][]float32
				for i, forced := range []bool{false, true} {
					run, _, _, _, _ := runConv(t, [6]int{tc.cin, tc.h, tc.w, tc.cout, tc.k, tc.pad}, n, threads, 3, func(c *conv2d) { c.forceIm2col = forced })
					got[i] = [4][]float32{run.y, run.dw, run.db, run.dx}
				}
				for j, what := range []string{"output", "weight gradient", "bias gradient", "input gradient"} {
					a, b := got[0][j], got[1][j]
					for e := range a {
						if d := math.Abs(float64(a[e] - b[e])); d > 1e-4*(1+math.Abs(float64(b[e]))) {
							t.Fatalf("%s %d: wide %v, im2col %v", what, e, a[e], b[e])
						}
					}
				}
			})
		}
	}
}

// TestConvTransposedGradSumIsExact: summing a chunk's weight gradient
// transposed and transposing it once (transposedGrad) gives the bits of
// one transposed product per sample, with 1 and 2 workers, for LeNet-5's
// and the FEMNIST CNN's first convolutions, ragged shapes, and a layer
// whose column buffer is too small to hold the sum (the per-sample path
// on both sides).
func TestConvTransposedGradSumIsExact(t *testing.T) {
	if e := gemm.New(1); !e.GathersRows() {
		t.Skipf("the %s kernel does not read gathered rows, so the weight gradient is never summed transposed", e.Kernel())
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	cases := []struct{ cin, h, w, cout, k, pad int }{
		{3, 32, 32, 6, 5, 0}, {1, 28, 28, 32, 5, 2}, {3, 9, 13, 4, 3, 1},
		{2, 5, 8, 3, 3, 3}, {1, 1, 1, 64, 1, 0},
	}
	for _, tc := range cases {
		for _, threads := range []int{1, 2} {
			const n = 9
			var grads [2][]float32
			for i, perSample := range []bool{false, true} {
				run, _, _, _, _ := runConv(t, [6]int{tc.cin, tc.h, tc.w, tc.cout, tc.k, tc.pad}, n, threads, 5, func(c *conv2d) { c.noTransposedGrad = perSample })
				grads[i] = append(run.dw, run.db...)
			}
			for j, v := range grads[0] {
				if math.Float32bits(v) != math.Float32bits(grads[1][j]) {
					t.Fatalf("%+v threads %d: gradient %d = %v summed transposed, %v per sample", tc, threads, j, v, grads[1][j])
				}
			}
		}
	}
}

// TestOrderKeyIsMonotonic: orderKey orders floats as < does, with −0 and
// +0 equal, over hand-picked edge values and random bit patterns.
func TestOrderKeyIsMonotonic(t *testing.T) {
	vals := []float32{float32(math.Inf(-1)), -math.MaxFloat32, -1, -math.SmallestNonzeroFloat32,
		float32(math.Copysign(0, -1)), 0, math.SmallestNonzeroFloat32, 1, math.MaxFloat32, float32(math.Inf(1))}
	r := rand.New(rand.NewPCG(9, 9))
	for len(vals) < 2000 {
		if v := math.Float32frombits(r.Uint32()); v == v {
			vals = append(vals, v)
		}
	}
	for _, a := range vals {
		for _, b := range vals[:200] {
			if (a < b) != (orderKey(a) < orderKey(b)) || (a == b) != (orderKey(a) == orderKey(b)) {
				t.Fatalf("orderKey(%v) = %d, orderKey(%v) = %d", a, orderKey(a), b, orderKey(b))
			}
		}
	}
}

// TestMaxPool2x2MatchesGeneralLoop: the branch-free 2×2 path gives the
// general loop's outputs and winners, ties included (values drawn from a
// few levels, so windows often tie; signed zeros among them).
func TestMaxPool2x2MatchesGeneralLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 3))
	levels := []float32{float32(math.Copysign(0, -1)), 0, 0.5, -0.5, 1}
	for _, shape := range [][]int{{3, 6, 6}, {2, 7, 5}, {4, 2, 2}} {
		const n = 5
		x := make([]float32, n*size(shape))
		for i := range x {
			x[i] = levels[r.IntN(len(levels))]
		}
		var ys [2][]float32
		var args [2][]int32
		for i := range ys {
			m, err := newMaxPool2d(shape, 2, 2)
			if err != nil {
				t.Fatal(err)
			}
			m.alloc(n, false)
			if i == 0 {
				m.forward2x2(x, n, m.y, m.arg, 0)
				ys[i] = append([]float32(nil), m.y...)
			} else {
				ys[i] = append([]float32(nil), m.forwardGeneral(x, n)...)
			}
			args[i] = append([]int32(nil), m.arg...)
		}
		for j := range ys[0] {
			if math.Float32bits(ys[0][j]) != math.Float32bits(ys[1][j]) || args[0][j] != args[1][j] {
				t.Fatalf("%v output %d: 2×2 path %v at %d, general loop %v at %d", shape, j, ys[0][j], args[0][j], ys[1][j], args[1][j])
			}
		}
	}
}

// TestMaxPool2x2VectorMatchesGo: the AVX2 rows of the 2×2 pool give the Go
// loop's outputs and winners bit for bit, on shapes whose rows hold 1 to 3
// groups of 8 windows and a ragged rest, and on values that include ties,
// ±0, ±Inf, subnormals and NaNs of both signs, with a batch offset.
func TestMaxPool2x2VectorMatchesGo(t *testing.T) {
	defer func() { pool2x2Vector = true }()
	r := rand.New(rand.NewPCG(4, 5))
	special := []float32{float32(math.Copysign(0, -1)), 0, 0.5, -0.5, 1, float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(1), math.Float32frombits(0x80000001), math.Float32frombits(0x7fc00000), math.Float32frombits(0xffc00000)}
	for _, shape := range [][]int{{2, 28, 28}, {3, 14, 14}, {2, 10, 10}, {1, 33, 35}, {2, 16, 32}, {3, 6, 6}} {
		const n, base0 = 3, 77
		x := make([]float32, n*size(shape))
		for i := range x {
			x[i] = special[r.IntN(len(special))]
			if r.IntN(3) == 0 {
				x[i] = float32(r.NormFloat64())
			}
		}
		var ys [2][]float32
		var args [2][]int32
		for i, vector := range []bool{true, false} {
			pool2x2Vector = vector
			m, err := newMaxPool2d(shape, 2, 2)
			if err != nil {
				t.Fatal(err)
			}
			m.alloc(n, false)
			m.forward2x2(x, n, m.y, m.arg, base0)
			ys[i], args[i] = append([]float32(nil), m.y...), append([]int32(nil), m.arg...)
		}
		for j := range ys[0] {
			if math.Float32bits(ys[0][j]) != math.Float32bits(ys[1][j]) || args[0][j] != args[1][j] {
				t.Fatalf("%v output %d: AVX2 %v at %d, Go %v at %d", shape, j, ys[0][j], args[0][j], ys[1][j], args[1][j])
			}
		}
		// A worker's range of samples: the same outputs, and nothing
		// written outside the range (the last group of a row runs past it).
		pool2x2Vector = true
		m, _ := newMaxPool2d(shape, 2, 2)
		m.alloc(n, false)
		sentinel := float32(-7.25)
		for j := range m.y {
			m.y[j], m.arg[j] = sentinel, -1
		}
		m.x = x
		m.forward2x2Range(0, 1, 2)
		out := m.c * m.ho * m.wo
		for j := range m.y {
			inside := j >= out && j < 2*out
			if !inside && (m.y[j] != sentinel || m.arg[j] != -1) {
				t.Fatalf("%v: output %d outside the range [%d, %d) written", shape, j, out, 2*out)
			}
			if inside && (math.Float32bits(m.y[j]) != math.Float32bits(ys[1][j]) || m.arg[j] != args[1][j]-base0) {
				t.Fatalf("%v range output %d: %v at %d, want %v at %d", shape, j, m.y[j], m.arg[j], ys[1][j], args[1][j]-base0)
			}
		}
	}
}

// TestRowSumsSequential: rowSums gives each row's left-to-right float32 sum
// bit for bit (the bias gradient's rounding does not depend on how many
// rows are summed at once), setting or adding to gb.
func TestRowSumsSequential(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for rows := 0; rows <= 9; rows++ {
		for width := 1; width <= 20; width += 3 {
			m := make([]float32, rows*width)
			for i := range m {
				m[i] = float32(r.NormFloat64() * math.Exp(3*r.NormFloat64()))
			}
			for _, beta := range []float32{0, 1} {
				gb := make([]float32, rows)
				want := make([]float32, rows)
				for i := range gb {
					gb[i] = float32(i) + 0.3
					var s float32
					for _, v := range m[i*width : (i+1)*width] {
						s += v
					}
					want[i] = s
					if beta == 1 {
						want[i] = gb[i] + s
					}
				}
				rowSums(gb, m, width, beta)
				for i := range gb {
					if math.Float32bits(gb[i]) != math.Float32bits(want[i]) {
						t.Fatalf("rows %d width %d beta %v: row %d = %v, want %v", rows, width, beta, i, gb[i], want[i])
					}
				}
			}
		}
	}
}
