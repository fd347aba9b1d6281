package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchShape times one product per iteration on each kernel and thread
// count, reporting GFLOP/s (2mnk flops per product).
func benchShape(b *testing.B, transA, transB bool, m, n, k int, beta float32, threads []int, kernels []*kernel) {
	r := rand.New(rand.NewPCG(1, 1))
	o := newOperands(r, transA, transB, m, n, k, 0, 1, beta)
	for _, kern := range kernels {
		for _, th := range threads {
			b.Run(fmt.Sprintf("%s/threads=%d", kern.name, th), func(b *testing.B) {
				e := newEngine(th, kern)
				defer e.Close()
				c := o.cloneC()
				o.run(e, c) // warm-up: grow buffers, start helpers
				b.ResetTimer()
				for b.Loop() {
					o.run(e, c)
				}
				b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

func BenchmarkSgemm512(b *testing.B) {
	benchShape(b, false, false, 512, 512, 512, 0, []int{1, 2}, available())
}

// The products of a 784-256-128-10 MLP at batch 32 and of a 5×5 conv layer
// with 32 input and 64 output channels on 14×14 maps, as internal/nn issues
// them (W stored out×in).
var nnShapes = []struct {
	name           string
	transA, transB bool
	m, n, k        int
	beta           float32
}{
	{"fc1_fwd_32x256x784", false, true, 32, 256, 784, 0},
	{"fc1_dW_256x784x32", true, false, 256, 784, 32, 1},
	{"fc1_dX_32x784x256", false, false, 32, 784, 256, 0},
	{"fc2_fwd_32x128x256", false, true, 32, 128, 256, 0},
	{"fc2_dW_128x256x32", true, false, 128, 256, 32, 1},
	{"fc2_dX_32x256x128", false, false, 32, 256, 128, 0},
	{"fc3_fwd_32x10x128", false, true, 32, 10, 128, 0},
	{"fc3_dW_10x128x32", true, false, 10, 128, 32, 1},
	{"fc3_dX_32x128x10", false, false, 32, 128, 10, 0},
	{"conv_fwd_64x196x800", false, false, 64, 196, 800, 0},
	{"conv_dW_64x800x196", false, true, 64, 800, 196, 1},
	{"conv_dX_800x196x64", true, false, 800, 196, 64, 0},
	{"im2col_196x64x800", false, false, 196, 64, 800, 0},
}

func BenchmarkNN(b *testing.B) {
	for _, s := range nnShapes {
		b.Run(s.name, func(b *testing.B) {
			benchShape(b, s.transA, s.transB, s.m, s.n, s.k, s.beta, []int{1, 2}, available())
		})
	}
}

// BenchmarkMLPStep runs the eight products of one training step of a
// 784-256-128-10 MLP at batch 32, in the order and transpositions internal/nn
// issues them (forward x·Wᵀ, weight gradient dyᵀ·x accumulated, input
// gradient dy·W, none for the first layer), reporting steps per second.
func BenchmarkMLPStep(b *testing.B) {
	const batch = 32
	dims := []int{784, 256, 128, 10}
	r := rand.New(rand.NewPCG(2, 2))
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.Float64() - 0.5)
		}
		return x
	}
	acts := [][]float32{fill(batch * dims[0])}
	var ws, gws, dys []([]float32)
	for l := 1; l < len(dims); l++ {
		acts = append(acts, fill(batch*dims[l]))
		ws = append(ws, fill(dims[l]*dims[l-1]))
		gws = append(gws, fill(dims[l]*dims[l-1]))
		dys = append(dys, fill(batch*dims[l]))
	}
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", th), func(b *testing.B) {
			e := New(th)
			defer e.Close()
			step := func() {
				for l := 1; l < len(dims); l++ {
					in, out := dims[l-1], dims[l]
					e.Sgemm(false, true, batch, out, in, 1, acts[l-1], in, ws[l-1], in, 0, acts[l], out)
				}
				for l := len(dims) - 1; l >= 1; l-- {
					in, out := dims[l-1], dims[l]
					e.Sgemm(true, false, out, in, batch, 1, dys[l-1], out, acts[l-1], in, 1, gws[l-1], in)
					if l > 1 {
						e.Sgemm(false, false, batch, in, out, 1, dys[l-1], out, ws[l-1], in, 0, dys[l-2], in)
					}
				}
			}
			step()
			for b.Loop() {
				step()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}
