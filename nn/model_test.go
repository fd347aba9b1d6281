package nn

import (
	"github.com/trellis-fl/trellis/vec"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// memSource is an in-memory Batches for tests, shuffling each pass when it
// has an rng.
type memSource struct {
	x     []float32
	y     []int
	dim   int
	rng   *rand.Rand
	order []int
	pos   int
}

func (s *memSource) Len() int { return len(s.y) }
func (s *memSource) Reset() {
	s.pos = 0
	if len(s.order) != len(s.y) {
		s.order = make([]int, len(s.y))
		for i := range s.order {
			s.order[i] = i
		}
	}
	if s.rng != nil {
		s.rng.Shuffle(len(s.order), func(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] })
	}
}
func (s *memSource) Next(x []float32, y []int) int {
	n := min(len(y), len(s.order)-s.pos)
	for i, j := range s.order[s.pos : s.pos+n] {
		copy(x[i*s.dim:(i+1)*s.dim], s.x[j*s.dim:(j+1)*s.dim])
		y[i] = s.y[j]
	}
	s.pos += n
	return n
}

// blobs draws n samples of a k-class Gaussian mixture in d dimensions with
// unit-variance noise around class means at distance ~3.
func blobs(n, k, d int, seed uint64) *memSource {
	r := rand.New(rand.NewPCG(seed, 9))
	means := make([]float64, k*d)
	for i := range means {
		means[i] = 1.5 * r.NormFloat64()
	}
	s := &memSource{x: make([]float32, n*d), y: make([]int, n), dim: d}
	for i := 0; i < n; i++ {
		c := r.IntN(k)
		s.y[i] = c
		for j := 0; j < d; j++ {
			s.x[i*d+j] = float32(means[c*d+j] + r.NormFloat64())
		}
	}
	return s
}

func mustBuild(t testing.TB, s Spec, seed uint64, o Options) *Model {
	t.Helper()
	m, err := Build(s, seed, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestTrainingLearnsSyntheticTask(t *testing.T) {
	// The test set is the 1,000 samples drawn after the training set's
	// 3,000 from the same mixture (same seed, same class means).
	train, test := blobs(3000, 5, 20, 1), blobs(4000, 5, 20, 1)
	test.x, test.y = test.x[3000*20:], test.y[3000:]
	for _, s := range []Spec{
		{Kind: "logreg", Input: []int{20}, Classes: 5},
		{Kind: "mlp", Input: []int{20}, Hidden: []int{32, 16}, Classes: 5, BatchNorm: true, Dropout: 0.1},
		{Kind: "mlp", Input: []int{20}, Hidden: []int{32}, Classes: 5, Head: "evidential"},
	} {
		m := mustBuild(t, s, 3, Options{Batch: 32})
		before, _ := m.Evaluate(test)
		opt, _ := NewOptimizer(OptimizerSpec{Name: "sgd", LR: 0.05, Momentum: 0.9}, m.NumParams())
		train.rng = rand.New(rand.NewPCG(1, 2))
		res, err := m.Train(train, opt, TrainConfig{Epochs: 3}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if want := 3 * ((3000 + 31) / 32); res.Steps != want || res.Samples != 9000 {
			t.Errorf("%s: %d steps over %d samples, want %d over 9000", s.Kind, res.Steps, res.Samples, want)
		}
		after, _ := m.Evaluate(test)
		t.Logf("%s/%s: accuracy %.3f → %.3f, loss %.3f → %.3f", s.Kind, m.head.Name(), before.Accuracy, after.Accuracy, before.Loss, after.Loss)
		if after.Accuracy < 0.95 || after.Loss >= before.Loss {
			t.Errorf("%s/%s did not learn: accuracy %.3f, loss %.3f → %.3f", s.Kind, m.head.Name(), after.Accuracy, before.Loss, after.Loss)
		}
	}
}

func TestTrainStepsCountsExactly(t *testing.T) {
	src := blobs(50, 3, 4, 2)
	m := mustBuild(t, Spec{Kind: "logreg", Input: []int{4}, Classes: 3}, 1, Options{Batch: 16})
	opt, _ := NewOptimizer(OptimizerSpec{LR: 0.1}, m.NumParams())
	res, err := m.Train(src, opt, TrainConfig{Steps: 7}, rand.New(rand.NewPCG(1, 1)))
	if err != nil || res.Steps != 7 {
		t.Fatalf("steps = %d, err = %v", res.Steps, err)
	}
	// 50 samples at batch 16: 16, 16, 16, 2, then a new pass: 16, 16, 16.
	if res.Samples != 16*6+2 {
		t.Errorf("samples = %d, want 98", res.Samples)
	}
	if _, err := m.Train(src, opt, TrainConfig{}, nil); err == nil {
		t.Error("zero epochs and steps accepted")
	}
	if _, err := m.Train(&memSource{dim: 4}, opt, TrainConfig{Epochs: 1}, nil); err == nil {
		t.Error("empty source accepted")
	}
}

func TestProximalTermGradient(t *testing.T) {
	src := blobs(8, 3, 4, 3)
	m := mustBuild(t, Spec{Kind: "logreg", Input: []int{4}, Classes: 3}, 1, Options{Batch: 8})
	x, y := src.x, src.y
	if _, err := m.Gradient(x, y, 8, nil); err != nil {
		t.Fatal(err)
	}
	plain := append([]float32(nil), m.Grads()...)
	w := append([]float32(nil), m.Params()...)
	ref := make([]float32, len(w))
	for i := range ref {
		ref[i] = w[i] - float32(i%3) // w − ref = 0, 1, 2, …
	}
	opt, _ := NewOptimizer(OptimizerSpec{LR: 1e-9}, m.NumParams())
	if _, err := m.Step(x, y, 8, opt, TrainConfig{ProxMu: 0.5, ProxRef: ref}, nil); err != nil {
		t.Fatal(err)
	}
	for i, g := range m.Grads() {
		if want := plain[i] + 0.5*float32(i%3); math.Abs(float64(g-want)) > 1e-6 {
			t.Fatalf("grad %d with proximal term = %v, want %v", i, g, want)
		}
	}
	if _, err := m.Train(src, opt, TrainConfig{Epochs: 1, ProxMu: 1, ProxRef: ref[:3]}, nil); err == nil {
		t.Error("proximal reference of the wrong length accepted")
	}
}

// TestBitIdenticalAcrossThreadsAndProcs trains the same models with 1, 3
// and 4 matrix threads under GOMAXPROCS 1 and 4 and requires identical bits,
// with Adam and with SGD (whose update is split across the threads: the
// MLP's 235,146 parameters end in a ragged stripe and a scalar tail).
func TestBitIdenticalAcrossThreadsAndProcs(t *testing.T) {
	src := &memSource{dim: 784}
	r := rand.New(rand.NewPCG(5, 5))
	for i := 0; i < 96; i++ {
		for j := 0; j < 784; j++ {
			src.x = append(src.x, float32(r.Float64()))
		}
		src.y = append(src.y, r.IntN(10))
	}
	specs := []Spec{
		{Kind: "mlp", Input: []int{784}, Hidden: []int{256, 128}, Classes: 10, BatchNorm: true, Dropout: 0.2},
		{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10},
		{Kind: "femnist_cnn", Input: []int{1, 28, 28}, Classes: 10},
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, s := range specs {
		for _, os := range []OptimizerSpec{{Name: "adam", LR: 1e-3}, {Name: "sgd", LR: 0.05, Momentum: 0.9, WeightDecay: 1e-3}} {
			bitIdenticalAcrossThreads(t, s, os, src)
		}
	}
}

func bitIdenticalAcrossThreads(t *testing.T, s Spec, os OptimizerSpec, src *memSource) {
	t.Helper()
	var first []float32
	for _, procs := range []int{1, 4} {
		// 3 threads split the 4 gradient chunks of a conv unevenly.
		for _, threads := range []int{1, 3, 4} {
			runtime.GOMAXPROCS(procs)
			m := mustBuild(t, s, 11, Options{Batch: 32, Threads: threads})
			opt, _ := NewOptimizer(os, m.NumParams())
			src.rng, src.order = rand.New(rand.NewPCG(7, 8)), nil
			if _, err := m.Train(src, opt, TrainConfig{Steps: 4}, rand.New(rand.NewPCG(7, 7))); err != nil {
				t.Fatal(err)
			}
			got := append(append([]float32(nil), m.Params()...), m.State()...)
			m.Close()
			if first == nil {
				first = got
				continue
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(first[i]) {
					t.Fatalf("%s, %s: GOMAXPROCS=%d threads=%d differs at %d: %v vs %v", s.Kind, os.Name, procs, threads, i, got[i], first[i])
				}
			}
		}
	}
}

func TestTrainingStepDoesNotAllocate(t *testing.T) {
	for _, s := range []Spec{
		{Kind: "mlp", Input: []int{784}, Hidden: []int{256, 128}, Classes: 10, BatchNorm: true, Dropout: 0.2, Head: "evidential"},
		{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10},
	} {
		for _, threads := range []int{1, 2} {
			m := mustBuild(t, s, 1, Options{Batch: 8, Threads: threads})
			x, y := make([]float32, 8*784), make([]int, 8)
			for i := range x {
				x[i] = float32(i%7) / 7
			}
			for _, os := range []OptimizerSpec{{Name: "adamw", LR: 1e-3, WeightDecay: 1e-4}, {Name: "sgd", LR: 0.01, Momentum: 0.9}} {
				opt, _ := NewOptimizer(os, m.NumParams())
				rng := rand.New(rand.NewPCG(1, 1))
				cfg := TrainConfig{ClipNorm: 1}
				allocs := testing.AllocsPerRun(20, func() {
					if _, err := m.Step(x, y, 8, opt, cfg, rng); err != nil {
						t.Fatal(err)
					}
				})
				if allocs != 0 {
					t.Errorf("%s, %s threads=%d: %v allocations per training step", s.Kind, os.Name, threads, allocs)
				}
			}
			m.Close()
		}
	}
}

// TestMemoryFormula checks MemoryBytes against the formula of the package
// documentation, evaluated by hand for two architectures.
func TestMemoryFormula(t *testing.T) {
	const B = 32
	// MLP 784-256-128-10: linear(784→256), relu, linear(256→128), relu,
	// linear(128→10); the first linear keeps no input gradient.
	P := 784*256 + 256 + 256*128 + 128 + 128*10 + 10
	layers := B*256 + // linear 1 output
		2*B*256 + // relu
		B*128 + B*256 + // linear 2
		2*B*128 + // relu
		B*10 + B*128 // linear 3
	want := 4*(2*P+B*784+B*10+layers) + 8*B
	m := mustBuild(t, Spec{Kind: "mlp", Input: []int{784}, Hidden: []int{256, 128}, Classes: 10}, 1, Options{Batch: B})
	if got := m.MemoryBytes(); got != want {
		t.Errorf("MLP memory = %d bytes, formula gives %d", got, want)
	}
	// FEMNIST CNN at batch 64.
	const N = 64
	P = 32*25 + 32 + 64*32*25 + 64 + 3136*512 + 512 + 512*62 + 62
	layers = N*32*784 + 0 + 2*25*784 + // conv1: output, no input grad, columns ×2 (col only, no dcol)
		2*N*32*196 + N*32*784 + // pool, which applies the ReLU after it (stackBuilder.maxPool)
		N*64*196 + N*32*196 + 2*800*196 + // conv2
		2*N*64*49 + N*64*196 + // pool, with its ReLU
		N*512 + N*3136 + // fc1
		2*N*512 + // relu
		3*N*512 + // dropout
		N*62 + N*512 // fc2
	// conv1 has no input gradient, so it keeps one column buffer, not two.
	layers -= 25 * 784
	// conv1 keeps one partial-gradient buffer (dW and db of a chunk).
	layers += 32*25 + 32
	// Both convolutions have stride 1, so their column matrices (which
	// only DP-SGD uses for conv2) are at the row pitch (28×30 for conv1,
	// 14×16 for conv2) instead of Ho×Wo. conv1 uses the wide layout: a
	// padded input plane ((H+4)·P + 2 floats, + k−1 of slack); its output
	// and the pool's input gradient are at that pitch (conv2d.outPitch),
	// so no wide scratch output or output gradient.
	layers += 25*28*30 - 25*784 + 2*(800*14*16-800*196)
	layers += 32*30 + 2 + 4
	layers += 2 * N * 32 * 28 * (30 - 28)
	// conv2 (32→64, 5×5) uses Winograd F(4×4, 5×5): U, the dU sum and one
	// chunk's dU (64 planes of 64×32, each padded by a cache line:
	// winoUPlane) and db; the padded inputs and their gradient for 8
	// samples (32×20×20×8 each: 4×4 tiles of 4×4 outputs, + 4), and V, dV
	// (64×32×64) and M (64×64×64) of a block of 8 tiles × 8 samples, and
	// the outputs (or their gradient) with the sample innermost
	// (64×16×16×8).
	layers += 3*64*(64*32+16) + 64
	layers += 2*32*20*20*8 + 2*64*32*64 + 64*64*64 + 64*16*16*8
	// V, dV and M each pad their 64 positions by a cache line (winoPlane).
	layers += 3 * 64 * 16
	// One channel's plane with the samples interleaved (planeToLanes).
	layers += 14 * 14 * 8
	want = 4*(2*P+N*784+N*62+layers) + 8*N
	m = mustBuild(t, Spec{Kind: "femnist_cnn", Input: []int{1, 28, 28}, Classes: 62}, 1, Options{Batch: N})
	if got := m.MemoryBytes(); got != want {
		t.Errorf("FEMNIST CNN memory = %d bytes, formula gives %d", got, want)
	}
	if m.NumParams() != 1690046 {
		t.Errorf("FEMNIST CNN has %d parameters, want 1,690,046 (as torch counts it)", m.NumParams())
	}
}

func TestNonFiniteStopsWithLayerName(t *testing.T) {
	s := Spec{Kind: "mlp", Input: []int{4}, Hidden: []int{5}, Classes: 3}
	m := mustBuild(t, s, 1, Options{Batch: 2})
	x, y := []float32{1, 2, 3, 4, 5, 6, 7, 8}, []int{0, 1}
	opt, _ := NewOptimizer(OptimizerSpec{LR: 0.1}, m.NumParams())
	// Huge weights in the last layer overflow its output.
	last := m.NumParams() - 5*3 - 3
	for i := last; i < m.NumParams(); i++ {
		m.Params()[i] = 3e38
	}
	_, err := m.Step(x, y, 2, opt, TrainConfig{}, nil)
	if err == nil || !strings.Contains(err.Error(), "linear 5→3") {
		t.Errorf("overflow error should name linear 5→3: %v", err)
	}
	m.Init(1)
	x[3] = float32(math.NaN())
	if _, err := m.Step(x, y, 2, opt, TrainConfig{}, nil); err == nil || !strings.Contains(err.Error(), "input") {
		t.Errorf("NaN input error should say so: %v", err)
	}
	x[3] = 1
	if _, err := m.Step(x, []int{0, 3}, 2, opt, TrainConfig{}, nil); err == nil || !strings.Contains(err.Error(), "label 3") {
		t.Errorf("out-of-range label error: %v", err)
	}
}

func TestShapeErrors(t *testing.T) {
	m := mustBuild(t, Spec{Kind: "logreg", Input: []int{4}, Classes: 3}, 1, Options{Batch: 2})
	err := m.SetParams(make([]float32, 7))
	if err == nil || !strings.Contains(err.Error(), "7") || !strings.Contains(err.Error(), "15") {
		t.Errorf("SetParams mismatch should name 7 and 15: %v", err)
	}
	o := mustBuild(t, Spec{Kind: "logreg", Input: []int{5}, Classes: 3}, 1, Options{Batch: 2})
	err = m.LoadFrom(o)
	if err == nil || !strings.Contains(err.Error(), "linear 5→3") || !strings.Contains(err.Error(), "linear 4→3") {
		t.Errorf("LoadFrom mismatch should name both architectures: %v", err)
	}
	for _, s := range []Spec{
		{Kind: "resnet", Input: []int{4}, Classes: 3},
		{Kind: "femnist_cnn", Input: []int{3, 32, 32}, Classes: 3},
		{Kind: "mlp", Input: []int{4}, Classes: 1},
		{Kind: "mlp", Input: []int{4}, Hidden: []int{0}, Classes: 3},
		{Kind: "mlp", Input: []int{4}, Classes: 3, Dropout: 1},
		{Kind: "mlp", Input: []int{4}, Classes: 3, Head: "sigmoid"},
		{Kind: "mlp", Input: []int{0}, Classes: 3},
	} {
		if _, err := Build(s, 1, Options{Batch: 2}); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
	if _, err := Build(Spec{Kind: "logreg", Input: []int{4}, Classes: 3}, 1, Options{}); err == nil {
		t.Error("batch 0 accepted")
	}
}

func TestCloneAndLoadAreIndependentCopies(t *testing.T) {
	s := Spec{Kind: "mlp", Input: []int{6}, Hidden: []int{5}, Classes: 3, BatchNorm: true}
	m := mustBuild(t, s, 4, Options{Batch: 4})
	m.State()[0] = 0.25
	c := m.Clone()
	if c.Params()[3] != m.Params()[3] || c.State()[0] != 0.25 {
		t.Fatal("clone did not copy parameters and state")
	}
	c.Params()[3]++
	if c.Params()[3] == m.Params()[3] {
		t.Error("clone shares parameter storage")
	}
	o := mustBuild(t, s, 5, Options{Batch: 4})
	if err := o.LoadFrom(m); err != nil || o.Params()[0] != m.Params()[0] {
		t.Errorf("LoadFrom: %v", err)
	}
	a := mustBuild(t, s, 4, Options{Batch: 4})
	b := mustBuild(t, s, 5, Options{Batch: 4})
	if a.Params()[0] == b.Params()[0] || a.Params()[0] != m.Params()[0] {
		t.Error("initialization does not follow the seed")
	}
}

func TestOutputsProbsVacuityFeatures(t *testing.T) {
	// logreg: the features are the input itself and probs = softmax(Wx + b).
	src := blobs(5, 3, 4, 6)
	m := mustBuild(t, Spec{Kind: "logreg", Input: []int{4}, Classes: 3}, 2, Options{Batch: 2})
	probs, feats := make([]float32, 15), make([]float32, 20)
	if err := m.Outputs(src, probs, nil, feats); err != nil {
		t.Fatal(err)
	}
	w := m.Params()
	for i := 0; i < 5; i++ {
		var z [3]float64
		var s float64
		for c := 0; c < 3; c++ {
			z[c] = float64(w[12+c])
			for j := 0; j < 4; j++ {
				z[c] += float64(w[c*4+j]) * float64(src.x[i*4+j])
				if feats[i*4+j] != src.x[i*4+j] {
					t.Fatalf("feature %d,%d = %v, want input %v", i, j, feats[i*4+j], src.x[i*4+j])
				}
			}
			s += math.Exp(z[c])
		}
		for c := 0; c < 3; c++ {
			if d := math.Abs(float64(probs[i*3+c]) - math.Exp(z[c])/s); d > 1e-6 {
				t.Errorf("prob %d,%d off by %v", i, c, d)
			}
		}
	}
	if err := m.Outputs(src, nil, make([]float32, 5), nil); err == nil {
		t.Error("vacuity from a softmax head accepted")
	}
	e := mustBuild(t, Spec{Kind: "mlp", Input: []int{4}, Hidden: []int{7}, Classes: 3, Head: "evidential"}, 2, Options{Batch: 2})
	u, pr, f := make([]float32, 5), make([]float32, 15), make([]float32, 35)
	if err := e.Outputs(src, pr, u, f); err != nil {
		t.Fatal(err)
	}
	if e.FeatureSize() != 7 {
		t.Errorf("feature size %d, want 7", e.FeatureSize())
	}
	for i, v := range u {
		if !(v > 0 && v <= 1) {
			t.Errorf("vacuity %d = %v outside (0, 1]", i, v)
		}
		if s := pr[3*i] + pr[3*i+1] + pr[3*i+2]; math.Abs(float64(s)-1) > 1e-6 {
			t.Errorf("probabilities of sample %d sum to %v", i, s)
		}
	}
	for _, v := range f {
		if v < 0 {
			t.Fatal("penultimate features of an MLP come after a ReLU and cannot be negative")
		}
	}
}

func TestEvaluateCountsCorrect(t *testing.T) {
	// Weights that pick class = index of the largest of the first 3 inputs.
	m := mustBuild(t, Spec{Kind: "logreg", Input: []int{3}, Classes: 3}, 1, Options{Batch: 2})
	w := make([]float32, 12)
	w[0], w[4], w[8] = 1, 1, 1
	_ = m.SetParams(w)
	src := &memSource{dim: 3,
		x: []float32{5, 0, 0, 0, 5, 0, 0, 0, 5, 5, 0, 0, 0, 0, 5},
		y: []int{0, 1, 2, 1, 2}}
	res, err := m.Evaluate(src)
	if err != nil || res.N != 5 || math.Abs(res.Accuracy-0.8) > 1e-12 {
		t.Errorf("accuracy %v over %d samples, want 0.8 over 5 (err %v)", res.Accuracy, res.N, err)
	}
}

// TestGradientDoesNotAccumulate: Gradient's result depends on its batch
// only, not on an earlier call's gradients, for every layer kind (linear
// and conv layers overwrite their gradients instead of being zeroed first),
// on one and on two workers.
func TestGradientDoesNotAccumulate(t *testing.T) {
	specs := []Spec{
		{Kind: "mlp", Input: []int{784}, Hidden: []int{64, 32}, Classes: 10, BatchNorm: true, Dropout: 0.2},
		{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10},
		{Kind: "femnist_cnn", Input: []int{1, 28, 28}, Classes: 10},
	}
	for _, s := range specs {
		for _, threads := range []int{1, 2} {
			m := mustBuild(t, s, 3, Options{Batch: 8, Threads: threads})
			x1, y1 := randomBatch(m, 8, 1)
			x2, y2 := randomBatch(m, 8, 2)
			grad := func(x []float32, y []int) []float32 {
				if _, err := m.Gradient(x, y, 8, rand.New(rand.NewPCG(4, 4))); err != nil {
					t.Fatal(err)
				}
				return append([]float32(nil), m.Grads()...)
			}
			want := grad(x1, y1)
			grad(x2, y2)
			got := grad(x1, y1)
			m.Close()
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s threads %d: gradient %d after another batch %v, alone %v", s.Kind, threads, i, got[i], want[i])
				}
			}
		}
	}
}

// TestGradsFiniteAcrossThreads: the gradient check split across the matrix
// threads finds a NaN or Inf in any stripe, the last ragged one too, and
// passes a finite gradient, on one thread and on two.
func TestGradsFiniteAcrossThreads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for _, threads := range []int{1, 2} {
		m := mustBuild(t, Spec{Kind: "logreg", Input: []int{4}, Classes: 3}, 1, Options{Batch: 2, Threads: threads})
		g := make([]float32, 9*optStripe+5)
		if !m.gradsFinite(g) {
			t.Fatalf("threads %d: a zero gradient reported non-finite", threads)
		}
		for _, at := range []int{0, optStripe - 1, 4*optStripe + 17, len(g) - 1} {
			for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(-1))} {
				g[at] = bad
				if m.gradsFinite(g) {
					t.Fatalf("threads %d: %v at %d of %d missed", threads, bad, at, len(g))
				}
				g[at] = 0
			}
		}
		if !m.gradsFinite(g) {
			t.Fatalf("threads %d: a finding outlived its check", threads)
		}
	}
}

// TestDropoutMaskIsFloat32Draw: dropout's branch-free mask drops exactly
// the activations whose rng.Float32() draw is below p, one draw each in
// order, and scales the others by 1/(1−p): for probabilities whose p·2²⁴
// is and is not a whole number, and the smallest and largest float32s
// in (0, 1).
func TestDropoutMaskIsFloat32Draw(t *testing.T) {
	ps := []float64{0.5, 0.25, 0.1, 0.3, 1.0 / 3, float64(math.Nextafter32(0, 1)), float64(math.Nextafter32(1, 0)), 0x1p-24, 0.75 + 0x1p-24}
	for _, prob := range ps {
		d, err := newDropout([]int{1000}, prob)
		if err != nil {
			t.Fatal(err)
		}
		const n = 7
		d.alloc(n, true)
		x := make([]float32, n*1000)
		for i := range x {
			x[i] = float32(i%13) - 6
		}
		// Draws straddle the threshold: Float32's 24 bits from ⌊p·2²⁴⌋ − 1
		// to ⌊p·2²⁴⌋ + 3, and random ones; the 8 bits Float32 ignores are
		// set.
		src := &edgeSource{r: rand.NewPCG(5, uint64(prob*1e9)), edge: uint32(float64(d.p) * (1 << 24))}
		y := d.forward(&pass{train: true, rng: rand.New(src)}, x, n)
		src.i = 0
		src.r = rand.NewPCG(5, uint64(prob*1e9))
		ref := rand.New(src)
		keep := 1 / (1 - d.p)
		dropped := 0
		for i := range x {
			want := keep
			if ref.Float32() < d.p {
				want, dropped = 0, dropped+1
			}
			if math.Float32bits(d.mask[i]) != math.Float32bits(want) || math.Float32bits(y[i]) != math.Float32bits(x[i]*want) {
				t.Fatalf("p=%v activation %d: mask %v output %v, want %v and %v", prob, i, d.mask[i], y[i], want, x[i]*want)
			}
		}
		t.Logf("p=%v: %d of %d dropped", prob, dropped, len(x))
	}
}

// edgeSource yields draws whose Float32 is near edge/2²⁴ three times in
// four, and random ones otherwise.
type edgeSource struct {
	r    *rand.PCG
	edge uint32
	i    int
}

func (s *edgeSource) Uint64() uint64 {
	s.i++
	v := s.r.Uint64()
	if s.i%4 == 0 {
		return v
	}
	u := (s.edge + uint32(s.i%4) + uint32(v%3) - 2) & (1<<24 - 1)
	return uint64(u|0xA5<<24)<<32 | v&0xFFFFFFFF
}

// TestLinearGradBound: a linear layer's gradients are declared finite by
// the bound on its input and output gradient only when they are: values
// whose products overflow dW (but not the bound's inputs) fall back to the
// scan, which finds the overflow; NaN or Inf in x or dy falls back too.
func TestLinearGradBound(t *testing.T) {
	m := mustBuild(t, Spec{Kind: "mlp", Input: []int{64}, Hidden: []int{64}, Classes: 3}, 1, Options{Batch: 2})
	l := m.layers[0].(*linear) // 64→64
	p := &pass{eng: m.eng}
	const n = 2
	run := func(xv, dyv float32) {
		x, dy := make([]float32, n*64), make([]float32, n*64)
		for i := range x {
			x[i], dy[i] = xv*float32(i%5-2), dyv*float32(i%3-1)
		}
		l.forward(p, x, n)
		l.backward(p, dy, n)
	}
	allFinite := func() bool {
		ok, _ := vec.AllFinite(m.grads[m.offsets[0]:m.offsets[1]])
		return ok
	}
	for _, c := range []struct {
		x, dy      float32
		bound, fin bool
	}{
		{1, 1, true, true},
		{1e17, 1e17, true, true},   // 2·2e17·1e17 = 4e34: inside the bound
		{1e20, 1e20, false, false}, // dW's terms are 2e40: overflow
		{1e19, 3e19, false, false},
		{1e19, 1e19, false, false}, // terms up to 2e38, sums of two overflow; 4× the bound's limit
		{1e-30, 5e37, true, true},  // max(max|x|, 1) bounds db: 2·5e37 < MaxFloat32/2
		{0.25, 1e38, false, true},  // every sum fits, but the bound cannot tell: the scan does
	} {
		run(c.x, c.dy)
		if got := l.gradsBoundedFinite(n); got != c.bound {
			t.Errorf("x %g, dy %g: bound says %v, want %v", c.x, c.dy, got, c.bound)
		}
		if got := allFinite(); got != c.fin {
			t.Fatalf("x %g, dy %g: gradients finite %v, want %v (the case is wrong)", c.x, c.dy, got, c.fin)
		}
		if l.gradsBoundedFinite(n) && !allFinite() {
			t.Fatalf("x %g, dy %g: the bound passed a non-finite gradient", c.x, c.dy)
		}
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		run(1, 1)
		l.x[7] = bad
		if l.gradsBoundedFinite(n) {
			t.Errorf("%v in x passed the bound", bad)
		}
		run(1, 1)
		l.dy[3] = bad
		if l.gradsBoundedFinite(n) {
			t.Errorf("%v in dy passed the bound", bad)
		}
	}
}
