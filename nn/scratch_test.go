package nn

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"github.com/trellis-fl/trellis/internal/memsize"
)

// The MNIST MLP of the 10,000-node simulations.
var mnistMLP = Spec{Kind: "mlp", Input: []int{784}, Hidden: []int{128}, Classes: 10}

// poisonScratch fills what a scratch holds with values no pass may read
// before writing them: NaN in the gradients, the logits' gradient, the
// input batch and every float buffer a layer holds directly (outputs,
// input gradients, masks, normalized inputs, columns, gradient chunks),
// −1 in the labels and a max-pool's winners. Left alone: slices that share
// memory with keep (the models' parameters and state, which the layers
// still view), and the buffers layers keep in nested structures (a wide
// convolution's padded input, whose padding is zero by construction and
// never written, and Winograd's), which the convolutions' own outputs and
// gradients poisoned here depend on anyway.
func poisonScratch(s *scratch, keep [][]float32) {
	nan := float32(math.NaN())
	fill := func(v []float32) {
		for _, k := range keep {
			if overlaps(v, k) {
				return
			}
		}
		for i := range v {
			v[i] = nan
		}
	}
	fill(s.grads)
	fill(s.dlogits)
	fill(s.xbuf)
	for i := range s.ybuf {
		s.ybuf[i] = -1
	}
	for _, l := range s.layers {
		v := reflect.ValueOf(l).Elem()
		for i := range v.NumField() {
			f := v.Field(i)
			p := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Interface()
			switch p := p.(type) {
			case *[]float32:
				fill(*p)
			case *[][]float32:
				for _, b := range *p {
					fill(b)
				}
			case *[]int32:
				for j := range *p {
					(*p)[j] = -1
				}
			}
		}
	}
}

// overlaps reports whether a and b share memory.
func overlaps(a, b []float32) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0, b0 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return a0 < b0+4*uintptr(len(b)) && b0 < a0+4*uintptr(len(a))
}

// poisonPool makes pool poison every scratch given back, sparing the
// parameters and state of models.
func poisonPool(pool *Pool, models ...*Model) {
	var keep [][]float32
	for _, m := range models {
		keep = append(keep, m.params, m.state)
	}
	pool.returned = func(s *scratch) { poisonScratch(s, keep) }
}

// poolCase is a model and training setting of the pooled-model tests.
type poolCase struct {
	name string
	spec Spec
	opt  OptimizerSpec
	cfg  TrainConfig
	dp   bool // train with DP-SGD
}

func poolCases() []poolCase {
	plain := OptimizerSpec{Name: "sgd", LR: 0.05}
	mom := OptimizerSpec{Name: "sgd", LR: 0.05, Momentum: 0.9}
	return []poolCase{
		// plain SGD: fused into the linear layers' products
		{name: "mnist-mlp/sgd", spec: mnistMLP, opt: plain, cfg: TrainConfig{Epochs: 1}},
		{name: "mnist-mlp/momentum-clip-prox", spec: mnistMLP, opt: mom, cfg: TrainConfig{Epochs: 1, ClipNorm: 1, ProxMu: 0.1}},
		{name: "mnist-mlp/dp-sgd", spec: mnistMLP, opt: plain, cfg: TrainConfig{Epochs: 1}, dp: true},
		{name: "mlp-batchnorm-dropout-evidential", spec: Spec{Kind: "mlp", Input: []int{3, 8, 8}, Classes: 4, Hidden: []int{16, 8},
			BatchNorm: true, Dropout: 0.2, Head: "evidential"}, opt: OptimizerSpec{Name: "adam", LR: 0.01}, cfg: TrainConfig{Epochs: 1}},
		{name: "lenet5/sgd", spec: Spec{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10}, opt: plain, cfg: TrainConfig{Epochs: 1}},
		{name: "lenet5/dp-sgd", spec: Spec{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10}, opt: mom, cfg: TrainConfig{Steps: 2}, dp: true},
		// Winograd, wide layout with pooled gradient, fused 3136→512
		{name: "femnist-cnn/sgd", spec: Spec{Kind: "femnist_cnn", Input: []int{1, 28, 28}, Classes: 62}, opt: plain, cfg: TrainConfig{Steps: 2}},
	}
}

// poolRun is one model's side of a pooled-model test: its data, optimizer,
// RNGs and what it computed, each value's bits.
type poolRun struct {
	m         *Model
	train     *memSource
	test      *memSource
	opt       Optimizer
	dp        *DPSGD
	rng       *rand.Rand
	ref       []float32
	cfg       TrainConfig
	record    []uint64
	grads     []float32
	perSample []float64
}

func newPoolRun(t *testing.T, c poolCase, m *Model, seed uint64) *poolRun {
	t.Helper()
	d := size(c.spec.Input)
	r := &poolRun{m: m, train: blobs(20, c.spec.Classes, d, seed), test: blobs(13, c.spec.Classes, d, seed+100),
		rng: rand.New(rand.NewPCG(seed, 7)), cfg: c.cfg, ref: slices.Clone(m.Params())}
	r.train.rng = rand.New(rand.NewPCG(seed, 8))
	r.cfg.ProxRef = r.ref
	var err error
	if r.opt, err = NewOptimizer(c.opt, m.NumParams()); err != nil {
		t.Fatal(err)
	}
	if c.dp {
		if r.dp, err = NewDPSGD(m, DPConfig{Clip: 0.5, Multiplier: 0.7}, rand.New(rand.NewPCG(seed, 9))); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func (r *poolRun) put(vs ...float64) {
	for _, v := range vs {
		r.record = append(r.record, math.Float64bits(v))
	}
}

// putFloats records vs by a hash of its bits (a FEMNIST CNN has 1.7M
// parameters).
func (r *poolRun) putFloats(vs []float32) {
	h := fnv.New64a()
	h.Write(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vs))), 4*len(vs)))
	r.record = append(r.record, uint64(len(vs)), h.Sum64())
}

// round trains and measures the model every way that takes its scratch,
// recording the results.
func (r *poolRun) round() error {
	m := r.m
	var res TrainResult
	var err error
	if r.dp != nil {
		res, err = r.dp.Train(r.train, r.opt, r.cfg, r.rng)
	} else {
		res, err = m.Train(r.train, r.opt, r.cfg, r.rng)
	}
	if err != nil {
		return err
	}
	r.put(float64(res.Steps), float64(res.Samples), res.MeanLoss)
	ev, err := m.Evaluate(r.test)
	if err != nil {
		return err
	}
	r.put(float64(ev.N), ev.Accuracy, ev.Loss)
	ev, err = m.EvaluateDiverged(r.test)
	if err != nil {
		return err
	}
	r.put(float64(ev.N), ev.Accuracy)
	n, k, f := r.test.Len(), m.Classes(), m.FeatureSize()
	probs, feats := make([]float32, n*k), make([]float32, n*f)
	var vac []float32
	if _, ok := m.Head().(UncertaintyHead); ok {
		vac = make([]float32, n)
	}
	if err := m.Outputs(r.test, probs, vac, feats); err != nil {
		return err
	}
	r.putFloats(probs)
	r.putFloats(vac)
	r.putFloats(feats)
	losses := make([]float64, n)
	if _, err := m.SampleLosses(r.test, losses); err != nil {
		return err
	}
	r.put(losses...)
	x, y := make([]float32, m.Batch()*m.InputSize()), make([]int, m.Batch())
	r.test.Reset()
	b := r.test.Next(x, y)
	if r.dp != nil {
		l, err := r.dp.Step(x, y, b, r.opt, r.cfg, r.rng)
		if err != nil {
			return err
		}
		r.put(l)
		r.perSample = make([]float64, b)
		r.dp.Norms(r.perSample)
		r.put(r.perSample...)
	} else {
		l, err := m.Step(x, y, b, r.opt, r.cfg, r.rng)
		if err != nil {
			return err
		}
		r.put(l)
	}
	r.putFloats(m.Params())
	r.putFloats(m.State())
	return nil
}

// gradient is Gradient on the first test batch, under a hold so that the
// gradients can be read (and compared) after other models computed.
func (r *poolRun) gradient(between func() error) error {
	m := r.m
	m.Acquire()
	defer m.Release()
	x, y := make([]float32, m.Batch()*m.InputSize()), make([]int, m.Batch())
	r.test.Reset()
	b := r.test.Next(x, y)
	l, err := m.Gradient(x, y, b, r.rng)
	if err != nil {
		return err
	}
	if err := between(); err != nil {
		return err
	}
	r.put(l)
	r.grads = slices.Clone(m.Grads())
	r.putFloats(r.grads)
	return nil
}

// rounds runs each run's round in turn, times times.
func rounds(t *testing.T, times int, runs ...*poolRun) {
	t.Helper()
	for range times {
		for _, r := range runs {
			if err := r.round(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func sameBits(a, b []uint64) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// Two models sharing a pool of one scratch, used in turn, compute the
// same bits as two models with their own, although every scratch given
// back is poisoned (NaN gradients and buffers): nothing one model leaves
// in the scratch reaches the other's results. A hold keeps a model's
// gradients while another model computes (the pool then makes a second
// scratch); without one the model has none.
func TestPooledModelsMatchOwnScratch(t *testing.T) {
	for _, c := range poolCases() {
		t.Run(c.name, func(t *testing.T) {
			const batch = 8
			pool, err := NewPool(c.spec, Options{Batch: batch})
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			a, b := mustBuild(t, c.spec, 1, Options{Pool: pool}), mustBuild(t, c.spec, 2, Options{Pool: pool})
			poisonPool(pool, a, b)
			ra, rb := mustBuild(t, c.spec, 1, Options{Batch: batch}), mustBuild(t, c.spec, 2, Options{Batch: batch})
			defer ra.Close()
			defer rb.Close()
			pa, pb := newPoolRun(t, c, a, 1), newPoolRun(t, c, b, 2)
			qa, qb := newPoolRun(t, c, ra, 1), newPoolRun(t, c, rb, 2)
			rounds(t, 2, pa, pb, qa, qb)
			if a.Grads() != nil || pool.Size() != 1 {
				t.Fatalf("after the rounds: a holds %d gradients, the pool made %d scratches; want none and 1", len(a.Grads()), pool.Size())
			}
			if err := pa.gradient(pb.round); err != nil {
				t.Fatal(err)
			}
			if err := qa.gradient(qb.round); err != nil {
				t.Fatal(err)
			}
			if pool.Size() != 2 {
				t.Errorf("a hold and another model computing: the pool made %d scratches, want 2", pool.Size())
			}
			// The test's premise: what was given back is poisoned.
			if s := pool.free[0]; !math.IsNaN(float64(s.grads[0])) || !math.IsNaN(float64(s.dlogits[0])) {
				t.Fatal("a scratch given back is not poisoned")
			}
			for _, p := range [][2]*poolRun{{pa, qa}, {pb, qb}} {
				if i := sameBits(p[0].record, p[1].record); i >= 0 {
					t.Errorf("model %s: pooled and own-scratch results differ at value %d of %d", p[0].m.Describe()[:20], i, len(p[1].record))
				}
			}
			// The check compares something: the two models differ, and a
			// gradient is not all zero.
			if sameBits(pa.record, pb.record) < 0 || !slices.ContainsFunc(qa.grads, func(v float32) bool { return v != 0 }) {
				t.Error("the two models' records are alike, or the gradient is zero: the comparison would prove nothing")
			}
		})
	}
}

// A clone of a pooled model takes its scratch from the same pool and
// computes as a clone of an own-scratch model does.
func TestCloneOfPooledModel(t *testing.T) {
	c := poolCases()[3]
	pool, err := NewPool(c.spec, Options{Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	a := mustBuild(t, c.spec, 1, Options{Pool: pool})
	ra := mustBuild(t, c.spec, 1, Options{Batch: 8})
	a.Head().(*Evidential).Lambda, ra.Head().(*Evidential).Lambda = 0.3, 0.3
	pa, qa := newPoolRun(t, c, a, 1), newPoolRun(t, c, ra, 1)
	rounds(t, 1, pa, qa)
	ca, cra := a.Clone(), ra.Clone()
	if ca.pool != pool || cra.pool != nil {
		t.Fatal("a clone does not take its scratch where its model does")
	}
	if ca.MemoryBytes() != 4*(ca.NumParams()+len(ca.State())) {
		t.Errorf("a pooled clone reports %d bytes", ca.MemoryBytes())
	}
	pc, qc := newPoolRun(t, c, ca, 3), newPoolRun(t, c, cra, 3)
	rounds(t, 1, pc, qc)
	if i := sameBits(pc.record, qc.record); i >= 0 {
		t.Errorf("clones differ at value %d", i)
	}
	if pool.Size() != 1 {
		t.Errorf("the pool made %d scratches for models used in turn", pool.Size())
	}
}

// Several goroutines training and evaluating their own models of one pool
// compute what the same models with their own scratch compute one after
// the other (run with -race: the pool hands scratches over between
// goroutines), and the pool grows to one scratch per goroutine.
func TestPoolSharedByGoroutines(t *testing.T) {
	const workers, each, times = 4, 3, 3
	c := poolCase{spec: Spec{Kind: "mlp", Input: []int{20}, Classes: 3, Hidden: []int{16}, Dropout: 0.1},
		opt: OptimizerSpec{Name: "sgd", LR: 0.05, Momentum: 0.5}, cfg: TrainConfig{Epochs: 1}}
	pool, err := NewPool(c.spec, Options{Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	runs, refs := make([]*poolRun, workers*each), make([]*poolRun, workers*each)
	models := make([]*Model, len(runs))
	for i := range runs {
		models[i] = mustBuild(t, c.spec, uint64(i), Options{Pool: pool})
		runs[i] = newPoolRun(t, c, models[i], uint64(i))
		refs[i] = newPoolRun(t, c, mustBuild(t, c.spec, uint64(i), Options{Batch: 8}), uint64(i))
	}
	poisonPool(pool, models...)
	rounds(t, times, refs...)
	var wg, all sync.WaitGroup
	errs := make([]error, workers)
	all.Add(workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Every goroutine holds a scratch at once, so the pool makes
			// one each, and then the scratches go from goroutine to
			// goroutine.
			m := runs[w*each].m
			m.Acquire()
			all.Done()
			all.Wait()
			m.Release()
			for range times {
				for _, r := range runs[w*each : (w+1)*each] {
					if errs[w] = r.round(); errs[w] != nil {
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", w, err)
		}
	}
	for i := range runs {
		if j := sameBits(runs[i].record, refs[i].record); j >= 0 {
			t.Errorf("model %d: pooled and own-scratch results differ at value %d", i, j)
		}
	}
	if n := pool.Size(); n != workers {
		t.Errorf("the pool made %d scratches for %d goroutines", n, workers)
	}
}

// Holds nest, Release without Acquire is a programming error, and a
// model that owns its scratch ignores both.
func TestAcquireNests(t *testing.T) {
	pool, err := NewPool(mnistMLP, Options{Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	m := mustBuild(t, mnistMLP, 1, Options{Pool: pool})
	if m.Grads() != nil {
		t.Fatal("a pooled model not held has gradients")
	}
	m.Acquire()
	m.Acquire()
	g := m.Grads()
	m.Release()
	if len(g) != m.NumParams() || &m.Grads()[0] != &g[0] {
		t.Fatal("an inner Release gave the scratch back")
	}
	m.Release()
	if m.Grads() != nil || len(pool.free) != 1 {
		t.Fatal("the last Release kept the scratch")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Release without Acquire did not panic")
			}
		}()
		m.Release()
	}()
	own := mustBuild(t, mnistMLP, 1, Options{Batch: 4})
	own.Release()
	own.Acquire()
	if len(own.Grads()) != own.NumParams() {
		t.Error("an own-scratch model lost its gradients")
	}
}

// A pool serves one spec, batch size and thread count.
func TestPoolRefusesAnotherModel(t *testing.T) {
	pool, err := NewPool(mnistMLP, Options{Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	other := mnistMLP
	other.Hidden = []int{64}
	for _, o := range []struct {
		s   Spec
		opt Options
	}{{other, Options{Pool: pool}}, {mnistMLP, Options{Pool: pool, Batch: 8}}, {mnistMLP, Options{Pool: pool, Threads: 2}}} {
		if _, err := Build(o.s, 1, o.opt); err == nil {
			t.Errorf("%v %+v: built", o.s.Hidden, o.opt)
		}
	}
	if m, err := Build(mnistMLP, 1, Options{Pool: pool, Batch: 4, Threads: 1}); err != nil || m.Batch() != 4 {
		t.Errorf("the pool's own settings: %v", err)
	}
	if _, err := NewPool(Spec{Kind: "nosuch", Input: []int{4}, Classes: 2}, Options{Batch: 4}); err == nil {
		t.Error("a pool of an unknown kind")
	}
	if _, err := NewPool(mnistMLP, Options{}); err == nil {
		t.Error("a pool of batch 0")
	}
}

// What a pooled model and its pool report is the footprint split: the
// model 4·(params + state) bytes, each scratch the rest of an own-scratch
// model's MemoryBytes.
func TestPooledMemoryBytesMatchFootprint(t *testing.T) {
	for _, s := range footprintSpecs {
		const batch = 7
		f, err := s.Footprint(batch)
		if err != nil {
			t.Fatal(err)
		}
		pool, err := NewPool(s, Options{Batch: batch})
		if err != nil {
			t.Fatal(err)
		}
		m := mustBuild(t, s, 1, Options{Pool: pool})
		m.Acquire()
		m.Release()
		if held := 4 * (f.Params + f.State); int64(m.MemoryBytes()) != held || int64(pool.MemoryBytes()) != f.MemoryBytes(batch)-held || pool.Size() != 1 {
			t.Errorf("%s %v: model %d bytes, pool %d for %d scratches; footprint %d and %d", s.Kind, s.Hidden,
				m.MemoryBytes(), pool.MemoryBytes(), pool.Size(), held, f.MemoryBytes(batch)-held)
		}
		if f.PerModel+f.Scratch != 2*memsize.Floats(f.Params)+memsize.Floats(f.State)+f.Buffers+f.Workspace {
			t.Errorf("%s %v: PerModel %d + Scratch %d is not the whole model", s.Kind, s.Hidden, f.PerModel, f.Scratch)
		}
	}
}

// N pooled models of the MNIST MLP, trained by a few goroutines, hold
// about N × their parameters plus one scratch (gradients, buffers,
// workspace) per goroutine, as the heap measures it: the gradients and
// buffers are not per model (models owning their scratch would hold 2.8×
// as much here).
func TestPooledModelsHoldParametersOnly(t *testing.T) {
	const n, workers, batch = 64, 3, 32
	f, err := mnistMLP.Footprint(batch)
	if err != nil {
		t.Fatal(err)
	}
	srcs := make([]*memSource, workers)
	for w := range srcs {
		srcs[w] = blobs(2*batch, 10, 784, uint64(w))
	}
	var pool *Pool
	models := make([]*Model, n)
	grown := liveGrowth(func() {
		if pool, err = NewPool(mnistMLP, Options{Batch: batch}); err != nil {
			return
		}
		for i := range models {
			if models[i], err = Build(mnistMLP, uint64(i), Options{Pool: pool}); err != nil {
				return
			}
		}
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				opt, _ := NewOptimizer(OptimizerSpec{Name: "sgd", LR: 0.01}, models[0].NumParams())
				for i := w; i < n; i += workers {
					_, _ = models[i].Train(srcs[w], opt, TrainConfig{Steps: 2}, rand.New(rand.NewPCG(1, 2)))
				}
			}()
		}
		wg.Wait()
	})
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(models)
	runtime.KeepAlive(srcs) // live before: not to be counted as freed
	want := n*f.PerModel + int64(pool.Size())*f.Scratch
	t.Logf("%d models, %d scratches: %d bytes live, footprint %d (%d per model, %d per scratch); own scratches would be %d",
		n, pool.Size(), grown, want, f.PerModel, f.Scratch, n*(f.PerModel+f.Scratch))
	if pool.Size() < 1 || pool.Size() > workers {
		t.Errorf("the pool made %d scratches for %d goroutines", pool.Size(), workers)
	}
	if d := float64(grown-want) / float64(want); math.Abs(d) > 0.03 {
		t.Errorf("live heap %d bytes, %+.1f %% from the footprint's %d", grown, 100*d, want)
	}
}
