package nn

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFusedSGDStepMatchesUnfused: Step with plain SGD, which fuses the
// update of large linear layers into their weight-gradient products, gives
// the parameters of Gradient followed by SGD.Step over the whole vector,
// bit for bit, step after step: for a CNN, an MLP with dropout, LeNet-5, a
// batch too deep for one k block (no fusion) and a ragged last batch, at
// one and two matrix threads. The fused layers' gradients are poisoned
// before each step and must stay poisoned: dW was really never formed.
func TestFusedSGDStepMatchesUnfused(t *testing.T) {
	cases := []struct {
		spec  Spec
		batch int
		last  int // size of the last step's batch
	}{
		{Spec{Kind: "femnist_cnn", Input: []int{1, 28, 28}, Classes: 10}, 16, 16},
		{Spec{Kind: "mlp", Input: []int{784}, Hidden: []int{256, 128}, Dropout: 0.25, Classes: 10}, 32, 7},
		{Spec{Kind: "lenet5", Input: []int{3, 32, 32}, Classes: 10}, 8, 5},
		{Spec{Kind: "mlp", Input: []int{784}, Hidden: []int{1024}, Classes: 10}, 300, 300},
	}
	for ci, c := range cases {
		for _, threads := range []int{1, 2} {
			fused := mustBuild(t, c.spec, 3, Options{Batch: c.batch, Threads: threads})
			plain := mustBuild(t, c.spec, 3, Options{Batch: c.batch, Threads: threads})
			optF, _ := NewOptimizer(OptimizerSpec{Name: "sgd", LR: 0.05}, fused.NumParams())
			optP, _ := NewOptimizer(OptimizerSpec{Name: "sgd", LR: 0.05}, plain.NumParams())
			src := blobs(4*c.batch, 10, fused.InputSize(), uint64(ci)+1)
			src.Reset()
			x, y := make([]float32, c.batch*fused.InputSize()), make([]int, c.batch)
			rngF, rngP := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
			poisoned := 0
			for step := range 4 {
				n := src.Next(x, y)
				if step == 3 {
					n = c.last
				}
				for i := range fused.grads {
					fused.grads[i] = float32(math.NaN())
				}
				lf, err := fused.Step(x, y, n, optF, TrainConfig{}, rngF)
				if err != nil {
					t.Fatal(err)
				}
				lp, err := plain.Gradient(x, y, n, rngP)
				if err != nil {
					t.Fatal(err)
				}
				optP.Step(plain.params, plain.grads)
				if math.Float64bits(lf) != math.Float64bits(lp) {
					t.Fatalf("%s batch %d threads %d step %d: loss %v, unfused %v", c.spec.Kind, n, threads, step, lf, lp)
				}
				for i, w := range fused.params {
					if math.Float32bits(w) != math.Float32bits(plain.params[i]) {
						t.Fatalf("%s batch %d threads %d step %d: parameter %d (layer %d) is %v, unfused %v",
							c.spec.Kind, n, threads, step, i, fused.layerOfParam(i), w, plain.params[i])
					}
				}
				poisoned += countNaN(fused.grads)
			}
			if !sgdFuses() || fused.eng.Kernel() == "portable" {
				t.Logf("%s: no fusion on this machine (kernel %s); compared the unfused paths", c.spec.Kind, fused.eng.Kernel())
			} else if c.batch > 256 && poisoned != 0 {
				t.Errorf("%s batch %d: fused an update whose product has two k blocks", c.spec.Kind, c.batch)
			} else if c.batch <= 256 && poisoned == 0 {
				t.Errorf("%s batch %d threads %d: no update was fused", c.spec.Kind, c.batch, threads)
			}
		}
	}
}

func countNaN(x []float32) int {
	n := 0
	for _, v := range x {
		if v != v {
			n++
		}
	}
	return n
}

// TestFusedSGDWaitsForEveryLayer: when a lower layer's gradient overflows
// after an upper layer deferred its update, Step fails and no parameter
// has moved, as with the unfused step. The input's last pixel is 1e38
// with zero weights into the first layer (a finite forward pass), and the
// upper layers are scaled up so that the first layer's weight gradient for
// that pixel overflows; the second layer's gradient stays within its bound
// and is deferred.
func TestFusedSGDWaitsForEveryLayer(t *testing.T) {
	spec := Spec{Kind: "mlp", Input: []int{784}, Hidden: []int{256, 128}, Classes: 10}
	const batch = 32
	m := mustBuild(t, spec, 5, Options{Batch: batch})
	first, second := m.layers[0].(*linear), m.layers[2].(*linear)
	for j := range first.out {
		first.w[j*first.in+first.in-1] = 0
	}
	for _, l := range []*linear{second, m.layers[4].(*linear)} {
		for i := range l.w {
			l.w[i] *= 1000
		}
	}
	src := blobs(batch, 10, 784, 7)
	src.Reset()
	x, y := make([]float32, batch*784), make([]int, batch)
	src.Next(x, y)
	for i := range batch {
		x[i*784+783] = 1e38
	}
	before := slices.Clone(m.params)
	opt, _ := NewOptimizer(OptimizerSpec{Name: "sgd", LR: 0.05}, m.NumParams())
	_, err := m.Step(x, y, batch, opt, TrainConfig{}, nil)
	if !errors.Is(err, ErrNonFinite) {
		t.Fatalf("Step: %v, want a non-finite gradient in layer 0", err)
	}
	if sgdFuses() && m.eng.Kernel() != "portable" && !second.deferred {
		t.Fatal("the second layer's update was not deferred: the case tests nothing")
	}
	for i, w := range m.params {
		if math.Float32bits(w) != math.Float32bits(before[i]) {
			t.Fatalf("parameter %d (layer %d) moved from %v to %v in a failed step", i, m.layerOfParam(i), before[i], w)
		}
	}
}
