package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trellis-fl/trellis/vec"
)

// holdOptimizer leaves the parameters alone, so a test can read the DP-SGD
// gradient a step produced.
type holdOptimizer struct{}

func (holdOptimizer) Step(_, _ []float32) {}
func (holdOptimizer) LR() float64         { return 0 }
func (holdOptimizer) SetLR(float64)       {}
func (holdOptimizer) StateFloats() int    { return 0 }
func (holdOptimizer) Reset()              {}

// dpCases are the architectures per-sample norms are checked on: every
// layer DP-SGD accepts (linear, conv2d in both modes, relu, max pooling,
// flatten), without dropout so that a one-sample pass sees the same network.
func dpCases(t *testing.T) []*Model {
	var ms []*Model
	for ci, c := range gradCases() {
		if c.name != "linear-relu" && c.name != "conv-pool-conv-stride2" && c.name != "conv-overlapping-pool" {
			continue
		}
		b := &stackBuilder{shape: c.in}
		c.build(b)
		if b.err != nil {
			t.Fatal(b.err)
		}
		m := assemble(Spec{Kind: c.name, Input: c.in, Classes: c.classes}, b.stack, c.head, Options{Batch: 6})
		m.Init(uint64(ci) + 1)
		ms = append(ms, m)
	}
	for i, s := range []Spec{
		{Kind: "logreg", Input: []int{12}, Classes: 3},
		{Kind: "mlp", Input: []int{20}, Hidden: []int{16, 8}, Classes: 4},
		{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10},
		{Kind: "mlp", Input: []int{9}, Hidden: []int{7}, Classes: 3, Head: "evidential"},
	} {
		m := mustBuild(t, s, uint64(i)+3, Options{Batch: 6})
		if e, ok := m.head.(*Evidential); ok {
			e.Lambda = 0.4 // the annealed KL term is per sample too
		}
		ms = append(ms, m)
	}
	return ms
}

func randomBatch(m *Model, n int, seed uint64) ([]float32, []int) {
	r := rand.New(rand.NewPCG(seed, 5))
	x, y := make([]float32, n*m.inSize), make([]int, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for i := range y {
		y[i] = r.IntN(m.classes)
	}
	return x, y
}

// oneAtATime returns each sample's loss gradient from a batch-1 pass.
func oneAtATime(t *testing.T, m *Model, x []float32, y []int) [][]float32 {
	t.Helper()
	gs := make([][]float32, len(y))
	for s := range y {
		if _, err := m.Gradient(x[s*m.inSize:(s+1)*m.inSize], y[s:s+1], 1, nil); err != nil {
			t.Fatal(err)
		}
		gs[s] = append([]float32(nil), m.grads...)
	}
	return gs
}

// TestPerSampleNormsMatchOneAtATime: the norms DP-SGD
// computes from layer inputs and output gradients equal the norms of the
// gradients of batch-1 passes, and the clipped sum equals the sum of the
// clipped batch-1 gradients, for conv layers in both modes.
func TestPerSampleNormsMatchOneAtATime(t *testing.T) {
	const n = 6
	for _, m := range dpCases(t) {
		for _, ghost := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/ghost=%v", m.spec.Kind, ghost), func(t *testing.T) {
				x, y := randomBatch(m, n, 7)
				gs := oneAtATime(t, m, x, y)
				want := make([]float64, n)
				for s, g := range gs {
					want[s] = vec.Norm(g)
				}
				// Clip at the median norm, so some samples are clipped and
				// some are not.
				sorted := append([]float64(nil), want...)
				for i := range sorted {
					for j := i + 1; j < len(sorted); j++ {
						if sorted[j] < sorted[i] {
							sorted[i], sorted[j] = sorted[j], sorted[i]
						}
					}
				}
				clip := sorted[n/2]
				d, err := NewDPSGD(m, DPConfig{Clip: clip}, nil)
				if err != nil {
					t.Fatal(err)
				}
				d.forceGhost = ghost
				d.sizeConvs()
				if _, err := d.Step(x, y, n, holdOptimizer{}, TrainConfig{}, nil); err != nil {
					t.Fatal(err)
				}
				got := make([]float64, n)
				if k := d.Norms(got); k != n {
					t.Fatalf("%d norms", k)
				}
				for s := range n {
					if relErr(got[s], want[s]) > 1e-4 {
						t.Errorf("sample %d: norm %.7g from layer terms, %.7g from a batch-1 pass", s, got[s], want[s])
					}
				}
				ref := make([]float64, len(m.grads))
				for s, g := range gs {
					c := math.Min(1, clip/want[s])
					for i, v := range g {
						ref[i] += c * float64(v) / n
					}
				}
				var dd, rr float64
				for i, v := range m.grads {
					dd += (float64(v) - ref[i]) * (float64(v) - ref[i])
					rr += ref[i] * ref[i]
				}
				if math.Sqrt(dd/rr) > 1e-4 {
					t.Errorf("clipped mean gradient: relative error %.2e", math.Sqrt(dd/rr))
				}
			})
		}
	}
}

func relErr(got, want float64) float64 { return math.Abs(got-want) / math.Max(math.Abs(want), 1e-300) }

// TestPerSampleNormsFiniteDifferences checks the norms against per-sample
// gradients from central differences of the float64 reference loss of each
// sample alone (ref_test.go), for every parameter of small networks.
func TestPerSampleNormsFiniteDifferences(t *testing.T) {
	const n = 3
	for _, m := range dpCases(t)[:3] {
		t.Run(m.spec.Kind, func(t *testing.T) {
			x, y := randomBatch(m, n, 11)
			d, _ := NewDPSGD(m, DPConfig{Clip: 1e30}, nil)
			if _, err := d.Step(x, y, n, holdOptimizer{}, TrainConfig{}, nil); err != nil {
				t.Fatal(err)
			}
			got := make([]float64, n)
			d.Norms(got)
			w := make([]float64, len(m.params))
			for i, v := range m.params {
				w[i] = float64(v)
			}
			for s := range n {
				xs := make([]float64, m.inSize)
				for i := range xs {
					xs[i] = float64(x[s*m.inSize+i])
				}
				loss := func() float64 { return refLoss(m.head, refForward(m, w, xs, 1), y[s:s+1], 1, m.classes) }
				var sq float64
				for i := range w {
					g := centralDiff(&w[i], loss)
					sq += g * g
				}
				if relErr(got[s], math.Sqrt(sq)) > 1e-3 {
					t.Errorf("sample %d: norm %.6g, finite differences %.6g", s, got[s], math.Sqrt(sq))
				}
			}
		})
	}
}

// TestDPSGDNoise: the step adds N(0, (zC/n)²) per coordinate to the
// clipped mean gradient.
func TestDPSGDNoise(t *testing.T) {
	m := mustBuild(t, Spec{Kind: "mlp", Input: []int{30}, Hidden: []int{64}, Classes: 5}, 1, Options{Batch: 8})
	x, y := randomBatch(m, 8, 3)
	d0, _ := NewDPSGD(m, DPConfig{Clip: 0.5}, nil)
	d0.Step(x, y, 8, holdOptimizer{}, TrainConfig{}, nil)
	clean := append([]float32(nil), m.grads...)
	d, _ := NewDPSGD(m, DPConfig{Clip: 0.5, Multiplier: 1.2}, rand.New(rand.NewPCG(4, 4)))
	d.Step(x, y, 8, holdOptimizer{}, TrainConfig{}, nil)
	var mean, sq float64
	for i, v := range m.grads {
		e := float64(v - clean[i])
		mean += e
		sq += e * e
	}
	p := float64(len(clean))
	mean /= p
	sd := math.Sqrt(sq/p - mean*mean)
	want := 1.2 * 0.5 / 8
	if math.Abs(mean) > 5*want/math.Sqrt(p) || math.Abs(sd-want) > 5*want/math.Sqrt(2*p) {
		t.Errorf("noise mean %v, sd %v; want 0, %v", mean, sd, want)
	}
}

// permSource is memSource drawing a uniformly random order at every
// Reset by an in-place Fisher–Yates shuffle, which does not allocate.
type permSource struct {
	memSource
	rng *rand.Rand
}

func (s *permSource) Reset() {
	s.pos = 0
	for i := len(s.order) - 1; i > 0; i-- {
		j := s.rng.IntN(i + 1)
		s.order[i], s.order[j] = s.order[j], s.order[i]
	}
}

func newPermSource(b *memSource, seed uint64) *permSource {
	s := &permSource{memSource: *b, rng: rand.New(rand.NewPCG(seed, 1))}
	s.order = make([]int, len(b.y))
	for i := range s.order {
		s.order[i] = i
	}
	return s
}

func TestBinomialDraw(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	const trials, n, q = 20000, 1000, 0.03
	var sum, sq float64
	for range trials {
		k := float64(binomial(r, n, q))
		sum += k
		sq += k * k
	}
	mean := sum / trials
	v := sq/trials - mean*mean
	if math.Abs(mean-n*q) > 5*math.Sqrt(n*q*(1-q)/trials) || math.Abs(v/(n*q*(1-q))-1) > 0.05 {
		t.Errorf("Binomial(1000, 0.03): mean %v (want 30), variance %v (want 29.1)", mean, v)
	}
	if binomial(r, 50, 1) != 50 {
		t.Error("q = 1 must take every sample")
	}
}

// TestDPSGDLearnsAndDoesNotAllocate trains with Poisson sampling on a
// synthetic task: accuracy well above chance, zero allocations per step.
func TestDPSGDLearnsAndDoesNotAllocate(t *testing.T) {
	src := blobs(2000, 4, 10, 2)
	m := mustBuild(t, Spec{Kind: "mlp", Input: []int{10}, Hidden: []int{32}, Classes: 4}, 1, Options{Batch: 64})
	ps := newPermSource(src, 3)
	d, err := NewDPSGD(m, DPConfig{Clip: 1, Multiplier: 1, Sampling: PoissonBatches, Rate: 32.0 / 2000}, rand.New(rand.NewPCG(5, 5)))
	if err != nil {
		t.Fatal(err)
	}
	opt, _ := NewOptimizer(OptimizerSpec{Name: "sgd", LR: 0.5, Momentum: 0.5}, m.NumParams())
	res, err := d.Train(ps, opt, TrainConfig{Epochs: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 3*63 || math.Abs(float64(res.Samples)/float64(res.Steps)-32) > 3 {
		t.Errorf("%d steps, %d samples", res.Steps, res.Samples)
	}
	ev, _ := m.Evaluate(src)
	if ev.Accuracy < 0.8 {
		t.Errorf("accuracy %.3f after DP-SGD", ev.Accuracy)
	}
	if a := testing.AllocsPerRun(10, func() {
		if _, _, err := d.PoissonStep(ps, opt, TrainConfig{}, nil); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("PoissonStep: %v allocations", a)
	}
	lm := mustBuild(t, Spec{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10}, 1, Options{Batch: 4, Threads: 2})
	defer lm.Close()
	x, y := randomBatch(lm, 4, 1)
	ld, _ := NewDPSGD(lm, DPConfig{Clip: 1, Multiplier: 1}, rand.New(rand.NewPCG(5, 5)))
	lopt, _ := NewOptimizer(OptimizerSpec{Name: "adam", LR: 1e-3}, lm.NumParams())
	if a := testing.AllocsPerRun(5, func() {
		if _, err := ld.Step(x, y, 4, lopt, TrainConfig{ClipNorm: 5}, nil); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("lenet5 Step: %v allocations", a)
	}
}

func TestDPSGDErrors(t *testing.T) {
	bn := mustBuild(t, Spec{Kind: "mlp", Input: []int{5}, Hidden: []int{4}, Classes: 2, BatchNorm: true}, 1, Options{Batch: 2})
	if _, err := NewDPSGD(bn, DPConfig{Clip: 1}, nil); err == nil {
		t.Error("batch norm accepted")
	}
	m := mustBuild(t, Spec{Kind: "logreg", Input: []int{5}, Classes: 2}, 1, Options{Batch: 2})
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range []DPConfig{{Clip: 0}, {Clip: 1, Multiplier: -1}, {Clip: 1, Sampling: PoissonBatches, Rate: 0}, {Clip: 1, Sampling: PoissonBatches, Rate: 2}, {Clip: 1, Sampling: 7}} {
		if _, err := NewDPSGD(m, c, r); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, err := NewDPSGD(m, DPConfig{Clip: 1, Multiplier: 1}, nil); err == nil {
		t.Error("noise without a source accepted")
	}
}

// benchDP compares one DP-SGD step with the plain step of benchStep on the
// same model and batch (the DP-SGD step's target: within 2× of the plain step).
func benchDP(b *testing.B, s Spec, batch int) {
	m, err := Build(s, 1, Options{Batch: batch})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	x, y := randomBatch(m, batch, 1)
	opt, _ := NewOptimizer(OptimizerSpec{Name: "sgd", LR: 0.01, Momentum: 0.9}, m.NumParams())
	d, err := NewDPSGD(m, DPConfig{Clip: 1, Multiplier: 1.1}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := d.Step(x, y, batch, opt, TrainConfig{}, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := d.Step(x, y, batch, opt, TrainConfig{}, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkDPSGDStep pairs each DP-SGD step with the plain step at the same
// setting; the MNIST MLP at batch 256 is the standard DP-SGD setting.
func BenchmarkDPSGDStep(b *testing.B) {
	mlp := Spec{Kind: "mlp", Input: []int{784}, Hidden: []int{256, 128}, Classes: 10}
	lenet := Spec{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10}
	for _, c := range []struct {
		name  string
		s     Spec
		batch int
	}{{"mlp/batch32", mlp, 32}, {"mlp/batch256", mlp, 256}, {"lenet5/batch64", lenet, 64}} {
		b.Run(c.name+"/plain", func(b *testing.B) { b.ReportAllocs(); benchStep(b, c.s, c.batch, 1) })
		b.Run(c.name+"/dp", func(b *testing.B) { benchDP(b, c.s, c.batch) })
	}
}

// TestDPSGDBitIdenticalAcrossThreads: DESIGN.md's determinism rule holds
// for DP-SGD too (same seed, 1 or 2 matrix threads, same parameters).
func TestDPSGDBitIdenticalAcrossThreads(t *testing.T) {
	var runs [][]float32
	for _, th := range []int{1, 2} {
		m := mustBuild(t, Spec{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10}, 1, Options{Batch: 8, Threads: th})
		ps := newPermSource(blobs(40, 10, 784, 6), 2)
		d, _ := NewDPSGD(m, DPConfig{Clip: 0.5, Multiplier: 1, Sampling: PoissonBatches, Rate: 0.15}, rand.New(rand.NewPCG(9, 9)))
		opt, _ := NewOptimizer(OptimizerSpec{Name: "sgd", LR: 0.1, Momentum: 0.9}, m.NumParams())
		if _, err := d.Train(ps, opt, TrainConfig{Steps: 4}, nil); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, append([]float32(nil), m.Params()...))
		m.Close()
	}
	for i := range runs[0] {
		if math.Float32bits(runs[0][i]) != math.Float32bits(runs[1][i]) {
			t.Fatalf("parameter %d: %v with 1 thread, %v with 2", i, runs[0][i], runs[1][i])
		}
	}
}

// recordingSource is a permSource that remembers which records each pass
// has yielded.
type recordingSource struct {
	*permSource
	seen []int
}

func (s *recordingSource) Reset() { s.permSource.Reset(); s.seen = s.seen[:0] }
func (s *recordingSource) Next(x []float32, y []int) int {
	from := s.pos
	n := s.permSource.Next(x, y)
	s.seen = append(s.seen, s.order[from:from+n]...)
	return n
}

// TestPoissonStepIsPoissonSampling: over many steps each record enters with
// probability q, two records enter together with probability q² (as with
// independent inclusions), and the batch size has the binomial variance.
func TestPoissonStepIsPoissonSampling(t *testing.T) {
	const N, q, steps = 40, 0.2, 3000
	m := mustBuild(t, Spec{Kind: "logreg", Input: []int{3}, Classes: 2}, 1, Options{Batch: 8})
	src := &recordingSource{permSource: newPermSource(blobs(N, 2, 3, 1), 5)}
	d, _ := NewDPSGD(m, DPConfig{Clip: 1, Multiplier: 1, Sampling: PoissonBatches, Rate: q}, rand.New(rand.NewPCG(6, 6)))
	opt, _ := NewOptimizer(OptimizerSpec{Name: "sgd", LR: 0.01}, m.NumParams())
	count := make([]float64, N)
	var pairs, bs, bs2 float64
	for range steps {
		_, b, err := d.PoissonStep(src, opt, TrainConfig{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b != len(src.seen) {
			t.Fatalf("step reported %d samples, the source yielded %d", b, len(src.seen))
		}
		in := make([]bool, N)
		for _, i := range src.seen {
			count[i]++
			in[i] = true
		}
		if in[0] && in[1] {
			pairs++
		}
		bs += float64(b)
		bs2 += float64(b * b)
	}
	sd := math.Sqrt(steps * q * (1 - q))
	for i, c := range count {
		if math.Abs(c-steps*q) > 5*sd {
			t.Errorf("record %d entered %v of %d steps, want %v ± %.0f", i, c, steps, steps*q, sd)
		}
	}
	if p := pairs / steps; math.Abs(p-q*q) > 5*math.Sqrt(q*q*(1-q*q)/steps) {
		t.Errorf("records 0 and 1 entered together in %.4f of the steps, want q² = %.4f", p, q*q)
	}
	mean := bs / steps
	if v := bs2/steps - mean*mean; math.Abs(mean-N*q) > 0.3 || math.Abs(v/(N*q*(1-q))-1) > 0.12 {
		t.Errorf("batch size mean %v (want %v), variance %v (want %v)", mean, N*q, v, N*q*(1-q))
	}
}
