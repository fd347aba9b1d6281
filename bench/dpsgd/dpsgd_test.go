// Wall-clock benchmarks of a DP-SGD training step (nn.DPSGD with the
// privacy package's noise sources) against the plain step of the same
// model and batch, the allocation test, and DP-SGD on MNIST:
//
//	go test ./bench/dpsgd -run XXX -bench . -benchtime 2s
package main

import (
	"math/rand/v2"
	"testing"

	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/privacy"
)

func setup(_ *testing.B, s setting) (*nn.Model, nn.Optimizer, []float32, []int) {
	return build(s)
}

func BenchmarkStep(b *testing.B) {
	for _, s := range settings {
		b.Run(s.name+"/plain", func(b *testing.B) {
			m, opt, x, y := setup(b, s)
			defer m.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := m.Step(x, y, s.batch, opt, nn.TrainConfig{}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, src := range []struct {
			name string
			new  func() nn.NoiseSource
		}{
			{"dp-seeded", func() nn.NoiseSource { return privacy.NewSeededSource(1, 2) }},
			{"dp-crypto", func() nn.NoiseSource { return privacy.NewCryptoSource() }},
		} {
			b.Run(s.name+"/"+src.name, func(b *testing.B) {
				m, opt, x, y := setup(b, s)
				defer m.Close()
				d, err := nn.NewDPSGD(m, nn.DPConfig{Clip: 1, Multiplier: 1.1}, src.new())
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if _, err := d.Step(x, y, s.batch, opt, nn.TrainConfig{}, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestStepDoesNotAllocate: zero allocations per DP-SGD step with either
// noise source.
func TestStepDoesNotAllocate(t *testing.T) {
	for _, src := range []nn.NoiseSource{privacy.NewSeededSource(1, 2), privacy.NewCryptoSource()} {
		m, err := nn.Build(settings[0].spec, 1, nn.Options{Batch: 8})
		if err != nil {
			t.Fatal(err)
		}
		x, y := make([]float32, 8*784), make([]int, 8)
		opt, _ := nn.NewOptimizer(nn.OptimizerSpec{Name: "sgd", LR: 0.01}, m.NumParams())
		d, _ := nn.NewDPSGD(m, nn.DPConfig{Clip: 1, Multiplier: 1}, src)
		if a := testing.AllocsPerRun(10, func() { _, _ = d.Step(x, y, 8, opt, nn.TrainConfig{}, nil) }); a != 0 {
			t.Errorf("%T: %v allocations per step", src, a)
		}
		m.Close()
	}
}

// TestDPSGDOnMNIST trains the MLP 784-256-128-10 with DP-SGD on the
// embedded MNIST: Poisson sampling q = 256/60000, noise multiplier 1.0,
// clip 1, SGD lr 0.1 momentum 0.9, 5 epochs (1172 expected steps), which the
// accountant puts at ε = 1.14 for δ = 1e-5. Measured: 90.2 % test accuracy
// (10 epochs, ε = 1.35, lr 0.05: 92.4 %). For comparison, Abadi et al.
// (2016, Sec. 5.2, MNIST "large" and "medium" noise) report 90 % at
// ε = 0.5 and 95 % at ε = 2 (δ = 1e-5) with a 60-dimensional DP-PCA
// projection in front of a 1000-unit layer, which this plain MLP lacks.
func TestDPSGDOnMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on all of MNIST for about ten seconds")
	}
	tt, err := data.MNIST()
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.Build(settings[0].spec, 1, nn.Options{Batch: 320})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const q, sigma = 256.0 / 60000, 1.0
	opt, _ := nn.NewOptimizer(nn.OptimizerSpec{Name: "sgd", LR: 0.1, Momentum: 0.9}, m.NumParams())
	d, err := nn.NewDPSGD(m, nn.DPConfig{Clip: 1, Multiplier: sigma, Sampling: nn.PoissonBatches, Rate: q}, privacy.NewSeededSource(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	src := data.NewBatcher(tt.Train, tt.Train.All(), rand.New(rand.NewPCG(1, 1)), nil)
	res, err := d.Train(src, opt, nn.TrainConfig{Epochs: 5}, rand.New(rand.NewPCG(1, 3)))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := m.Evaluate(data.NewBatcher(tt.Test, tt.Test.All(), nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	eps, _, _ := privacy.EpsilonAfter(privacy.GaussianEvent{Multiplier: sigma, Sampling: privacy.Poisson(q)}, res.Steps, 1e-5, nil)
	t.Logf("%d steps, %.1f samples per step, test accuracy %.4f, (ε = %.3f, δ = 1e-5)", res.Steps, float64(res.Samples)/float64(res.Steps), ev.Accuracy, eps)
	if ev.Accuracy < 0.88 || eps > 1.2 {
		t.Errorf("accuracy %.4f at ε %.3f; want ≥ 0.88 at ε ≤ 1.2", ev.Accuracy, eps)
	}
}
