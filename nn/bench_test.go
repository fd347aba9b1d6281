package nn

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchStep measures one SGD training step (forward, backward, momentum
// update) and reports samples per second, the figure bench/torch_compare
// puts next to PyTorch's.
func benchStep(b *testing.B, s Spec, batch, threads int) {
	m, err := Build(s, 1, Options{Batch: batch, Threads: threads})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	r := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float32, batch*m.InputSize()), make([]int, batch)
	for i := range x {
		x[i] = r.Float32()
	}
	for i := range y {
		y[i] = r.IntN(s.Classes)
	}
	opt, _ := NewOptimizer(OptimizerSpec{Name: "sgd", LR: 0.01, Momentum: 0.9}, m.NumParams())
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
