package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPooledConvGradMatchesDense: a first convolution whose weight
// gradient comes from the pool's gradient (poolgrad.go) gives the dense
// path's gradients (pool scatter, then the full product; checked against
// finite differences by TestSpecModelsGradients) up to the rounding of a
// different summation order, with the AVX2 kernel and with the loop, at 1
// and 2 matrix threads; every other parameter's gradient, computed before
// the first layer's, is the same bits. Half of every image is zero, so
// windows tie (and the ReLU stops their gradient) as in
// TestReLUPoolSwapIsExact.
func TestPooledConvGradMatchesDense(t *testing.T) {
	defer func() { pooledGradVector = true }()
	specs := []Spec{
		{Kind: "femnist_cnn", Input: []int{1, 28, 28}, Classes: 7},
		{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10},
		{Kind: "lenet5", Input: []int{3, 32, 32}, Classes: 10},
	}
	for i, s := range specs {
		for _, threads := range []int{1, 2} {
			for _, vector := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s%v/threads%d/vector%v", s.Kind, s.Input, threads, vector), func(t *testing.T) {
					pooledGradVector = vector
					const n = 11
					var grads [2][]float32
					var first int
					for j, dense := range []bool{false, true} {
						m := mustBuild(t, s, uint64(i)+3, Options{Batch: n, Threads: threads})
						c := m.layers[0].(*conv2d)
						c.densePool = dense
						x, y := make([]float32, n*m.InputSize()), make([]int, n)
						r := rand.New(rand.NewPCG(uint64(i), 7)) // the same batch for both
						for k := range x {
							if k%m.InputSize() < m.InputSize()/2 {
								x[k] = float32(r.NormFloat64())
							}
						}
						for k := range y {
							y[k] = r.IntN(s.Classes)
						}
						if _, err := m.Gradient(x, y, n, rand.New(rand.NewPCG(1, 1))); err != nil {
							t.Fatal(err)
						}
						if c.pooled == dense {
							t.Fatalf("dense %v: the pooled path taken: %v", dense, c.pooled)
						}
						grads[j] = append([]float32(nil), m.Grads()...)
						first = c.paramCount()
					}
					pooled, dense := grads[0], grads[1]
					var scale float64
					for _, v := range dense[:first] {
						scale = max(scale, math.Abs(float64(v)))
					}
					if scale == 0 {
						t.Fatal("the first layer's gradient is zero: the test checks nothing")
					}
					for k := range pooled {
						a, b := float64(pooled[k]), float64(dense[k])
						if k >= first {
							if math.Float32bits(pooled[k]) != math.Float32bits(dense[k]) {
								t.Fatalf("gradient %d (after the first layer's) is %v pooled, %v dense", k, a, b)
							}
							continue
						}
						if math.Abs(a-b) > 1e-5*scale {
							t.Fatalf("gradient %d is %v pooled, %v dense (scale %v)", k, a, b, scale)
						}
					}
				})
			}
		}
	}
}
