package nn

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// benchStep measures one SGD training step (forward, backward, momentum
// update) and reports samples per second, the figure bench/torch_compare
// puts next to PyTorch's.
func benchStep(b *testing.B, s Spec, batch, threads int) {
	m, x, y, opt, r := benchSetup(b, s, batch, threads)
	cfg := TrainConfig{}
	if _, err := m.Step(x, y, batch, opt, cfg, r); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := m.Step(x, y, batch, opt, cfg, r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "samples/s")
}

// benchSetup builds the model of a training benchmark (closed when b
// ends), a batch of uniform inputs and random labels, SGD with momentum,
// and the RNG the steps draw from.
func benchSetup(b *testing.B, s Spec, batch, threads int) (*Model, []float32, []int, Optimizer, *rand.Rand) {
	m, err := Build(s, 1, Options{Batch: batch, Threads: threads})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.Close)
	r := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float32, batch*m.InputSize()), make([]int, batch)
	for i := range x {
		x[i] = r.Float32()
	}
	for i := range y {
		y[i] = r.IntN(s.Classes)
	}
	opt, _ := NewOptimizer(OptimizerSpec{Name: "sgd", LR: 0.01, Momentum: 0.9}, m.NumParams())
	return m, x, y, opt, r
}

func BenchmarkTrainStepMLP(b *testing.B) {
	s := Spec{Kind: "mlp", Input: []int{784}, Hidden: []int{256, 128}, Classes: 10}
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("batch32/threads%d", th), func(b *testing.B) { benchStep(b, s, 32, th) })
	}
}

func BenchmarkTrainStepFEMNISTCNN(b *testing.B) {
	s := Spec{Kind: "femnist_cnn", Input: []int{1, 28, 28}, Classes: 62}
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("batch64/threads%d", th), func(b *testing.B) { benchStep(b, s, 64, th) })
	}
}

// BenchmarkTrainStepLeNet5: R-DPFL's model at both input sizes, batch 64
// (the paper's local step).
func BenchmarkTrainStepLeNet5(b *testing.B) {
	for _, in := range [][]int{{1, 28, 28}, {3, 32, 32}} {
		s := Spec{Kind: "lenet5", Input: in, Classes: 10}
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("%dx%dx%d/batch64/threads%d", in[1], in[2], in[0], th), func(b *testing.B) { benchStep(b, s, 64, th) })
		}
	}
}

func BenchmarkEvaluateMLP(b *testing.B) {
	s := Spec{Kind: "mlp", Input: []int{784}, Hidden: []int{256, 128}, Classes: 10}
	m, _ := Build(s, 1, Options{Batch: 256})
	src := blobs(2048, 10, 784, 1)
	b.ResetTimer()
	for range b.N {
		if _, err := m.Evaluate(src); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*2048)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkLayersFEMNISTCNN times each layer of a FEMNIST CNN training
// step (batch 64, forward and backward separately, the backward with its
// gradient check) and the optimizer, and reports each as ms per step:
// where a step's time goes, for BENCHMARKS.md. It runs the step's parts
// the way Model.Gradient and Model.Step do.
func BenchmarkLayersFEMNISTCNN(b *testing.B) {
	benchLayers(b, Spec{Kind: "femnist_cnn", Input: []int{1, 28, 28}, Classes: 62})
}

// BenchmarkLayersLeNet5x32 is BenchmarkLayersFEMNISTCNN for R-DPFL's
// LeNet-5 on 3×32×32 inputs.
func BenchmarkLayersLeNet5x32(b *testing.B) {
	benchLayers(b, Spec{Kind: "lenet5", Input: []int{3, 32, 32}, Classes: 10})
}

func benchLayers(b *testing.B, s Spec) {
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads%d", th), func(b *testing.B) {
			const batch = 64
			m, x, y, opt, r := benchSetup(b, s, batch, th)
			fwd, bwd := make([]time.Duration, len(m.layers)), make([]time.Duration, len(m.layers))
			var optim time.Duration
			b.ResetTimer()
			for range b.N {
				m.run = pass{eng: m.eng, train: true, rng: r}
				p := &m.run
				in := x
				for i, l := range m.layers {
					t0 := time.Now()
					in = l.forward(p, in, batch)
					fwd[i] += time.Since(t0)
				}
				g := m.dlogits[:batch*m.classes]
				if _, err := m.head.Loss(in, y, batch, m.classes, g); err != nil {
					b.Fatal(err)
				}
				for i := len(m.layers) - 1; i >= 0 && g != nil; i-- {
					t0 := time.Now()
					g = m.layers[i].backward(p, g, batch)
					if !m.layerGradsFinite(i, batch) {
						b.Fatalf("layer %d: non-finite gradient", i)
					}
					bwd[i] += time.Since(t0)
				}
				t0 := time.Now()
				m.optimize(opt, 0, len(m.params))
				optim += time.Since(t0)
			}
			ms := func(d time.Duration) float64 { return d.Seconds() * 1e3 / float64(b.N) }
			for i, l := range m.layers {
				name := strings.NewReplacer(" ", "_", "→", "-").Replace(l.kind())
				b.ReportMetric(ms(fwd[i]), fmt.Sprintf("L%d_%s_fwd_ms", i, name))
				b.ReportMetric(ms(bwd[i]), fmt.Sprintf("L%d_%s_bwd_ms", i, name))
			}
			b.ReportMetric(ms(optim), "optimizer_ms")
		})
	}
}

// BenchmarkPooledTrainMLP trains two MNIST MLPs (784→128→10, batch 32)
// in turn, one epoch of 10 steps a call with momentum SGD, each model
// owning its scratch or both sharing a pool of one: a pooled call takes
// the scratch, binds its layers to the model and gives it back, and the
// scratch goes from one model to the other, as the simulator's nodes'
// do. The two report the same samples/s within noise.
func BenchmarkPooledTrainMLP(b *testing.B) {
	for _, pooled := range []bool{false, true} {
		name, opt := "own", Options{Batch: 32}
		if pooled {
			pool, err := NewPool(mnistMLP, opt)
			if err != nil {
				b.Fatal(err)
			}
			name, opt = "pooled", Options{Pool: pool}
		}
		b.Run(name, func(b *testing.B) {
			var models [2]*Model
			var opts [2]Optimizer
			for i := range models {
				models[i] = mustBuild(b, mnistMLP, uint64(i), opt)
				opts[i], _ = NewOptimizer(OptimizerSpec{Name: "sgd", LR: 0.01, Momentum: 0.9}, models[i].NumParams())
			}
			src := blobs(320, 10, 784, 1)
			r := rand.New(rand.NewPCG(1, 2))
			b.ResetTimer()
			for i := range b.N {
				if _, err := models[i%2].Train(src, opts[i%2], TrainConfig{Epochs: 1}, r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*320)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}
