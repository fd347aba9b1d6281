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
					c, err := newConv2d([]int{tc.cin, tc.h, tc.w}, tc.cout, tc.k, 1, tc.pad)
					if err != nil {
						t.Fatal(err)
					}
					c.forceIm2col = forced
					p, g := make([]float32, c.paramCount()), make([]float32, c.paramCount())
					c.bind(p, g, nil)
					r := rand.New(rand.NewPCG(3, 4))
					c.initParams(r)
					c.alloc(n, true)
					x := make([]float32, n*tc.cin*tc.h*tc.w)
					for j := range x {
						x[j] = float32(r.NormFloat64())
					}
					eng := gemm.New(threads)
					pass := &pass{eng: eng, train: true}
					y := append([]float32(nil), c.forward(pass, x, n)...)
					dy := make([]float32, len(y))
					for j := range dy {
						dy[j] = float32(r.NormFloat64())
					}
					dx := append([]float32(nil), c.backward(pass, dy, n)...)
					eng.Close()
					got[i] = [4][]float32{y, g[:len(c.wt)], g[len(c.wt):], dx}
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
