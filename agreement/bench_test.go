package agreement

import (
	"math/rand/v2"
	"testing"

	"github.com/trellis-fl/trellis/nn"
)

// The cost of LIGHTYEAR's scoring (the LIGHTYEAR paper: one forward pass per
// model plus two n × n Gram matrices, no backward pass) against one local
// epoch, for the quick presets' MLP and the paper's FEMNIST CNN, one matrix
// thread (the simulator runs nodes in parallel): BenchmarkScorePeer scores
// one received model on n_val = 128 validation samples (forward pass,
// NTK kernel and its centering, CKA against the own kernel, calibration,
// cosine); BenchmarkLocalEpoch trains one epoch over 600 samples (the
// quick presets' client), Adam, batch 32. Inputs are random: the cost
// does not depend on the values.

var benchModels = []struct {
	name string
	spec nn.Spec
}{
	{"mlp128", nn.Spec{Kind: "mlp", Input: []int{1, 28, 28}, Hidden: []int{128}, Classes: 10}},
	{"femnist_cnn", nn.Spec{Kind: "femnist_cnn", Input: []int{1, 28, 28}, Classes: 10}},
}

func randomRows(n, d, classes int) *rows {
	r := rand.New(rand.NewPCG(1, 2))
	src := &rows{x: make([]float32, n*d), y: make([]int, n), d: d}
	for i := range src.x {
		src.x[i] = r.Float32()
	}
	for i := range src.y {
		src.y[i] = r.IntN(classes)
	}
	return src
}

func outputsOf(b *testing.B, m *nn.Model, src *rows, o *Outputs) {
	n, k, f := src.Len(), m.Classes(), m.FeatureSize()
	o.N, o.Classes, o.Dim, o.Labels = n, k, f, src.y
	if len(o.Probs) != n*k {
		o.Probs, o.Features = make([]float32, n*k), make([]float32, n*f)
	}
	if err := m.Outputs(src, o.Probs, nil, o.Features); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkScorePeer(b *testing.B) {
	const nVal = 128
	for _, bm := range benchModels {
		b.Run(bm.name, func(b *testing.B) {
			own, err := nn.Build(bm.spec, 1, nn.Options{Batch: 32, Threads: 1})
			if err != nil {
				b.Fatal(err)
			}
			peer, _ := nn.Build(bm.spec, 2, nn.Options{Batch: 32, Threads: 1})
			src := randomRows(nVal, own.InputSize(), bm.spec.Classes)
			var oo, po Outputs
			var ok, pk Kernel
			outputsOf(b, own, src, &oo)
			if err := ok.Compute(&oo); err != nil {
				b.Fatal(err)
			}
			oc, _ := Calibrate(&oo)
			b.ResetTimer()
			for range b.N {
				outputsOf(b, peer, src, &po)
				if err := pk.Compute(&po); err != nil {
					b.Fatal(err)
				}
				_ = CKA(&ok, &pk)
				pc, _ := Calibrate(&po)
				_ = CalibrationScore(oc, pc)
				_ = Cosine(own.Params(), peer.Params())
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*nVal), "µs/val-sample")
		})
	}
}

func BenchmarkLocalEpoch(b *testing.B) {
	for _, bm := range benchModels {
		b.Run(bm.name, func(b *testing.B) {
			m, err := nn.Build(bm.spec, 1, nn.Options{Batch: 32, Threads: 1})
			if err != nil {
				b.Fatal(err)
			}
			opt, _ := nn.NewOptimizer(nn.OptimizerSpec{Name: "adam", LR: 1e-3, WeightDecay: 1e-4}, m.NumParams())
			src := randomRows(600, m.InputSize(), bm.spec.Classes)
			r := rand.New(rand.NewPCG(3, 4))
			b.ResetTimer()
			for range b.N {
				if _, err := m.Train(src, opt, nn.TrainConfig{Epochs: 1}, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
