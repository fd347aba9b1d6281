package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// gradCase is a small network built layer by layer, so every layer type can
// be checked both for its parameter gradient and for the input gradient it
// passes back (each case starts with a layer whose input gradient is
// checked too).
type gradCase struct {
	name    string
	in      []int
	classes int
	head    Head
	build   func(b *stackBuilder)
}

func gradCases() []gradCase {
	return []gradCase{
		{"linear-relu", []int{6}, 3, Softmax{}, func(b *stackBuilder) {
			b.linear(5)
			b.relu()
			b.linear(3)
		}},
		{"conv-pool-conv-stride2", []int{2, 6, 6}, 3, Softmax{}, func(b *stackBuilder) {
			b.conv(3, 3, 1, 1)
			b.relu()
			b.maxPool(2)
			b.conv(4, 3, 2, 1)
			b.flatten()
			b.linear(3)
		}},
		{"conv-overlapping-pool", []int{1, 7, 7}, 4, Softmax{}, func(b *stackBuilder) {
			b.conv(2, 2, 1, 0)
			b.add(newMaxPool2d(b.shape, 3, 2))
			b.flatten()
			b.linear(4)
		}},
		{"batchnorm1d", []int{5}, 3, Softmax{}, func(b *stackBuilder) {
			b.linear(6)
			b.batchNorm()
			b.relu()
			b.linear(3)
		}},
		{"batchnorm2d", []int{2, 5, 5}, 3, Softmax{}, func(b *stackBuilder) {
			b.conv(3, 3, 1, 0)
			b.batchNorm()
			b.relu()
			b.flatten()
			b.linear(3)
		}},
		{"dropout", []int{5}, 3, Softmax{}, func(b *stackBuilder) {
			b.linear(8)
			b.relu()
			b.dropout(0.3)
			b.linear(3)
		}},
		{"evidential-mse-var-kl", []int{5}, 4, &Evidential{Lambda: 0.7}, func(b *stackBuilder) {
			b.linear(6)
			b.relu()
			b.linear(4)
		}},
		{"evidential-mse-only", []int{5}, 4, &Evidential{NoVariance: true}, func(b *stackBuilder) {
			b.linear(6)
			b.relu()
			b.linear(4)
		}},
		{"evidential-kl-large-evidence", []int{5}, 3, &Evidential{Lambda: 1}, func(b *stackBuilder) {
			b.linear(3)
		}},
	}
}

func TestGradientsMatchFloat64FiniteDifferences(t *testing.T) {
	for ci, c := range gradCases() {
		t.Run(c.name, func(t *testing.T) {
			b := &stackBuilder{shape: c.in}
			c.build(b)
			if b.err != nil {
				t.Fatal(b.err)
			}
			const n = 4
			m := assemble(Spec{Kind: "test", Input: c.in, Classes: c.classes}, b.stack, c.head, Options{Batch: n})
			m.Init(uint64(ci) + 1)
			scale := 1.0
			if c.name == "evidential-kl-large-evidence" {
				scale = 4 // logits of several units exercise softplus and large alpha
			}
			checkGradients(t, m, n, uint64(ci)+100, scale, 400)
		})
	}
}

// TestSpecModelsGradients checks the declared architectures on a sample of
// each layer's parameters (the FEMNIST CNN has 1.7 million, and each
// reference pass costs tens of millions of float64 operations).
func TestSpecModelsGradients(t *testing.T) {
	if testing.Short() {
		t.Skip("finite differences through every layer of four models: 7 s; the full suite runs it")
	}
	specs := []struct {
		Spec
		batch, perLayer int
	}{
		{Spec{Kind: "logreg", Input: []int{1, 4, 4}, Classes: 3}, 3, 400},
		{Spec{Kind: "mlp", Input: []int{7}, Hidden: []int{6, 5}, Classes: 3, BatchNorm: true, Dropout: 0.2, Head: "evidential"}, 3, 400},
		{Spec{Kind: "lenet5", Input: []int{3, 32, 32}, Classes: 10}, 2, 12},
		{Spec{Kind: "femnist_cnn", Input: []int{1, 28, 28}, Classes: 5}, 2, 6},
	}
	for i, s := range specs {
		t.Run(s.Kind, func(t *testing.T) {
			m, err := Build(s.Spec, uint64(i), Options{Batch: s.batch})
			if err != nil {
				t.Fatal(err)
			}
			if e, ok := m.head.(*Evidential); ok {
				e.Lambda = 0.3
			}
			checkGradients(t, m, s.batch, uint64(i)+7, 1, s.perLayer)
		})
	}
}

// checkGradients compares the float32 analytic gradients of m (parameters
// and the first layer's input) with central differences of the float64
// reference loss, and the float32 logits with the reference forward pass.
// At most perLayer parameters of each layer, and 2·perLayer inputs, are
// checked.
func checkGradients(t *testing.T, m *Model, n int, seed uint64, logitScale float64, perLayer int) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 2))
	if logitScale != 1 {
		for i := range m.params {
			m.params[i] *= float32(logitScale)
		}
	}
	x := make([]float32, n*m.inSize)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	y := make([]int, n)
	for i := range y {
		y[i] = r.IntN(m.classes)
	}

	// Analytic pass, keeping the first layer's input gradient.
	m.layers[0].alloc(m.batch, true)
	m.run = pass{eng: m.eng, train: true, rng: rand.New(rand.NewPCG(seed, 3))}
	clear(m.grads)
	logits := m.forward(&m.run, x, n)
	if _, err := m.head.Loss(logits, y, n, m.classes, m.dlogits[:n*m.classes]); err != nil {
		t.Fatal(err)
	}
	g := m.dlogits[:n*m.classes]
	for i := len(m.layers) - 1; i >= 0; i-- {
		g = m.layers[i].backward(&m.run, g, n)
	}
	gx := g

	w := make([]float64, len(m.params))
	for i, v := range m.params {
		w[i] = float64(v)
	}
	xf := make([]float64, len(x))
	for i, v := range x {
		xf[i] = float64(v)
	}
	ref := refForward(m, w, xf, n)
	for i, v := range ref {
		if d := math.Abs(float64(logits[i]) - v); d > 1e-4*(1+math.Abs(v)) {
			t.Fatalf("logit %d: float32 %v, float64 reference %v", i, logits[i], v)
		}
	}
	loss := func() float64 { return refLoss(m.head, refForward(m, w, xf, n), y, n, m.classes) }

	var num, ana []float64
	off := 0
	for _, l := range m.layers {
		for _, i := range sampleIndices(r, l.paramCount(), perLayer) {
			num = append(num, centralDiff(&w[off+i], loss))
			ana = append(ana, float64(m.grads[off+i]))
		}
		off += l.paramCount()
	}
	assertClose(t, "parameter gradient", ana, num)

	idx := sampleIndices(r, len(xf), 2*perLayer)
	num, ana = num[:0], ana[:0]
	for _, i := range idx {
		num = append(num, centralDiff(&xf[i], loss))
		ana = append(ana, float64(gx[i]))
	}
	assertClose(t, "input gradient", ana, num)
}

func centralDiff(p *float64, f func() float64) float64 {
	const h = 1e-6
	old := *p
	*p = old + h
	up := f()
	*p = old - h
	down := f()
	*p = old
	return (up - down) / (2 * h)
}

func sampleIndices(r *rand.Rand, n, k int) []int {
	if n <= k {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	return r.Perm(n)[:k]
}

// assertClose requires a norm-wise relative error below 1e-3 and no single
// entry off by more than 1e-3 of its size plus 1e-4 of the largest entry.
func assertClose(t *testing.T, what string, ana, num []float64) {
	t.Helper()
	var dd, nn, big float64
	for i := range ana {
		d := ana[i] - num[i]
		dd += d * d
		nn += num[i] * num[i]
		big = math.Max(big, math.Abs(num[i]))
	}
	if nn == 0 {
		t.Fatalf("%s: all finite differences are zero; the check would prove nothing", what)
	}
	if rel := math.Sqrt(dd / nn); rel > 1e-3 {
		t.Errorf("%s: relative error %.3g > 1e-3", what, rel)
	}
	for i := range ana {
		if math.Abs(ana[i]-num[i]) > 1e-3*math.Abs(num[i])+1e-4*big {
			t.Errorf("%s entry %d: analytic %.8g, finite difference %.8g", what, i, ana[i], num[i])
			return
		}
	}
}
