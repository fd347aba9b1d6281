package inversion

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/nn"
)

var tiny = []nn.Spec{
	{Kind: "logreg", Input: []int{7}, Classes: 4},
	{Kind: "mlp", Input: []int{7}, Hidden: []int{6}, Classes: 4},
	{Kind: "mlp", Input: []int{7}, Hidden: []int{6, 5}, Classes: 4},
}

// TestHVPMatchesFiniteDifferences holds the R-operator Hessian-vector
// product to central differences of the (independently checked) gradient
// along v: (∇L(θ + hv) − ∇L(θ − hv)) / 2h.
func TestHVPMatchesFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, spec := range tiny {
		_, net := build(t, spec, 3, 3)
		x, y := randomInputs(r, 3*7), []int{2, 0, 2}
		theta := net.flat()
		v := randomInputs(r, len(theta))
		got := net.HVP(x, y, v)
		const h = 1e-6
		shift := func(s float64) []float64 {
			th := slices.Clone(theta)
			axpy(th, s, v)
			return net.at(th).Gradient(x, y)
		}
		up, down := shift(h), shift(-h)
		for i := range got {
			if fd := (up[i] - down[i]) / (2 * h); math.Abs(fd-got[i]) > 1e-6+1e-5*math.Abs(fd) {
				t.Fatalf("%s %v: (Hv)[%d] = %.10g, finite difference %.10g", spec.Kind, spec.Hidden, i, got[i], fd)
			}
		}
	}
}

// TestUnrolledGradientIsExact holds the unrolled objective's input
// gradient (reverse mode through 3 simulated SGD steps, Hessian-vector
// products included) to central finite differences of its value, for 3
// steps on one batch and on 3 distinct batches. The rate is large (0.5)
// so that the later steps' dependence on the earlier ones matters.
func TestUnrolledGradientIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, spec := range tiny {
		_, net := build(t, spec, 5, 2)
		for _, c := range []struct{ n, batch int }{{2, 2}, {6, 2}} {
			y := []int{1, 3, 0, 1, 2, 3}[:c.n]
			target := NewUnrolled(net, nil, y, 0.5, 3, c.batch).Simulate(randomInputs(r, c.n*7))
			m := NewUnrolled(net, target, y, 0.5, 3, c.batch)
			x := randomInputs(r, c.n*7)
			dx := make([]float64, len(x))
			m.Eval(x, dx)
			scratch := make([]float64, len(x))
			for i := range x {
				const h = 1e-6
				old := x[i]
				x[i] = old + h
				up := m.Eval(x, scratch)
				x[i] = old - h
				down := m.Eval(x, scratch)
				x[i] = old
				if fd := (up - down) / (2 * h); math.Abs(fd-dx[i]) > 1e-7+1e-5*math.Abs(fd) {
					t.Fatalf("%s %v, %d samples in batches of %d: ∂J/∂x[%d] = %.10g, finite difference %.10g",
						spec.Kind, spec.Hidden, c.n, c.batch, i, dx[i], fd)
				}
			}
		}
	}
}

// TestUnrolledOneStepIsTheMatcher: at one step the unrolled objective
// against u is the one-gradient objective against −u/lr, value and input
// gradient (to float64 rounding), since the cosine ignores the positive
// scale lr.
func TestUnrolledOneStepIsTheMatcher(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, spec := range tiny {
		_, net := build(t, spec, 7, 3)
		y := []int{0, 3, 3}
		const lr = 0.3
		g := net.Gradient(randomInputs(r, 3*7), y)
		u := make([]float64, len(g))
		for i, v := range g {
			u[i] = -lr * v
		}
		x := randomInputs(r, 3*7)
		d1, d2 := make([]float64, len(x)), make([]float64, len(x))
		j1 := NewMatcher(net, g, y).Eval(x, d1)
		j2 := NewUnrolled(net, u, y, lr, 1, 3).Eval(x, d2)
		if math.Abs(j1-j2) > 1e-13 {
			t.Fatalf("%s %v: J %.16g one-gradient, %.16g unrolled", spec.Kind, spec.Hidden, j1, j2)
		}
		for i := range d1 {
			if math.Abs(d1[i]-d2[i]) > 1e-12*(1+math.Abs(d1[i])) {
				t.Fatalf("%s %v: ∂J/∂x[%d] %.16g one-gradient, %.16g unrolled", spec.Kind, spec.Hidden, i, d1[i], d2[i])
			}
		}
	}
}

// TestSimulationIsNNsLocalTraining: the attacker's simulation of 3 local
// steps at the true images gives the update nn's own training made (to
// float32's rounding), for one batch repeated and for distinct batches,
// so the unrolled objective is 0 at the truth.
func TestSimulationIsNNsLocalTraining(t *testing.T) {
	tt := loadMNIST(t)
	spec := mlp
	spec.Hidden = []int{32}
	m, net := build(t, spec, 9, 2)
	const lr = 0.1
	for _, c := range []struct{ n, reps int }{{2, 3}, {6, 1}} {
		x, y := batch(tt.Train, 30, c.n)
		xs, ys := x, y
		for range c.reps - 1 {
			xs, ys = append(slices.Clone(xs), x...), append(slices.Clone(ys), y...)
		}
		u, err := Update(m, xs, ys, 2, lr)
		if err != nil {
			t.Fatal(err)
		}
		sim := NewUnrolled(net, nil, y, lr, 3, 2).Simulate(wide(x))
		var diff, norm float64
		for i, v := range u {
			d := float64(v) - sim[i]
			diff += d * d
			norm += sim[i] * sim[i]
		}
		if r := math.Sqrt(diff / norm); r > 1e-4 {
			t.Errorf("%d images, %d repetitions: simulated update %.3g (relative) from nn's", c.n, c.reps, r)
		}
		u64 := wide(u)
		if j := NewUnrolled(net, u64, y, lr, 3, 2).Eval(wide(x), make([]float64, len(x))); j > 1e-8 {
			t.Errorf("%d images, %d repetitions: objective at the truth %.3g", c.n, c.reps, j)
		}
	}
}

// TestBaselineAtOneStepIsTheOneStepAttack: an attacker told the update
// took one step (Steps 1, with or without Unroll) returns bit for bit
// what the one-step attacker (Steps 0) does, labels and images.
func TestBaselineAtOneStepIsTheOneStepAttack(t *testing.T) {
	tt := loadMNIST(t)
	spec := mlp
	spec.Hidden = []int{16}
	m, net := build(t, spec, 10, 3)
	x, y := batch(tt.Train, 40, 3)
	u, err := Update(m, x, y, 3, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	own, _ := batch(tt.Train, 100, 50)
	cfg := DLGConfig{Iterations: 10, LR: 0.1, Lo: -0.5, Hi: 3, InitNoise: 0.5}
	var outs []Outcome
	for _, a := range []Attacker{{Steps: 0}, {Steps: 1}, {Steps: 1, Unroll: true, Batch: 3}} {
		a.Net, a.LR, a.MeanProbs, a.DLG = net, 0.05, net.MeanProbs(wide(own)), cfg
		out, err := a.Invert(u, 3, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out)
	}
	for _, o := range outs[1:] {
		if !slices.Equal(o.Labels, outs[0].Labels) || !slices.Equal(o.Recon, outs[0].Recon) || o.Objective != outs[0].Objective {
			t.Fatalf("steps 1 (%s) differs from the one-step attack: labels %v and %v, objective %g and %g",
				o.Method, o.Labels, outs[0].Labels, o.Objective, outs[0].Objective)
		}
	}
}

// TestLabelsOfTheCNN: on LeNet-5 (convolutions, pooling; no image attack
// here), the last layer alone gives iDLG's label of every one of 30
// single-image updates, and the counts of 3 batches of 6 exactly when
// given the batch's true mean prediction (from nn's own forward pass).
// On the MLP, LastLayerOf finds the block the dense Net calls its last.
func TestLabelsOfTheCNN(t *testing.T) {
	tt := loadMNIST(t)
	m, err := nn.Build(nn.Spec{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10}, 4, nn.Options{Batch: 6})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	h, err := LastLayerOf(m)
	if err != nil {
		t.Fatal(err)
	}
	if h.In != 84 || !h.NonNeg || h.Off+10*85 != m.NumParams() {
		t.Fatalf("LeNet-5's last layer: %+v of %d parameters", h, m.NumParams())
	}
	for i := range 30 {
		x, y := batch(tt.Train, i, 1)
		u, err := Update(m, x, y, 1, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		g := wide(u)
		for i := range g {
			g[i] = -g[i] // −u: a positive multiple of the gradient
		}
		if got := h.LabelOne(g); got != y[0] {
			t.Fatalf("image %d: label %d recovered as %d", i, y[0], got)
		}
	}
	for lo := 50; lo < 68; lo += 6 {
		x, y := batch(tt.Train, lo, 6)
		u, err := Update(m, x, y, 6, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		idx := make([]int32, 6)
		for i := range idx {
			idx[i] = int32(lo + i)
		}
		probs := make([]float32, 6*10)
		if err := m.Outputs(data.NewEvalBatcher(tt.Train, idx, nil), probs, nil, nil); err != nil {
			t.Fatal(err)
		}
		mean := make([]float64, 10)
		for i, p := range probs {
			mean[i%10] += float64(p) / 6
		}
		g := wide(u)
		for i := range g {
			g[i] /= -0.05
		}
		if got, want := h.LabelCounts(g, 6, mean), slices.Sorted(slices.Values(y)); !slices.Equal(got, want) {
			t.Fatalf("batch at %d: labels %v, recovered %v", lo, want, got)
		}
	}
	mm, net := build(t, mlp, 2, 1)
	hm, err := LastLayerOf(mm)
	if err != nil {
		t.Fatal(err)
	}
	if hm != net.last() {
		t.Fatalf("MLP: LastLayerOf %+v, the net's %+v", hm, net.last())
	}
}
