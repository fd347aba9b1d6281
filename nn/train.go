package nn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/vec"
)

// Batches is a set of labelled samples visited in passes of mini-batches
// copied into the caller's buffers. data.Batcher implements it over one
// shared dataset copy (shuffling each pass for training, in index order for
// evaluation).
type Batches interface {
	// Len is the number of samples in a pass.
	Len() int
	// Reset starts a new pass (reshuffling, for a shuffling source).
	Reset()
	// Next fills x (row-major, the model's input size per sample) and y
	// with up to len(y) samples and returns how many; 0 ends the pass.
	Next(x []float32, y []int) int
}

// TrainConfig says how long and how to train.
type TrainConfig struct {
	// Epochs is the number of passes over the source; used when Steps is 0.
	// Every pass visits each sample once in a fresh random order; the last
	// batch of a pass may be smaller (PyTorch's drop_last = false).
	Epochs int
	// Steps, when positive, is the exact number of optimizer steps, cycling
	// through reshuffled passes.
	Steps int
	// ClipNorm, when positive, clips the gradient to this global norm
	// before each step.
	ClipNorm float64
	// ProxMu, when positive, adds (mu/2)·||w − ProxRef||² to the loss
	// (FedProx, Ditto); ProxRef must then have the model's parameter count.
	ProxMu  float64
	ProxRef []float32
	// Stop, if not nil, ends training between batches once it is closed
	// (a context's Done): Train then returns ErrStopped with what it did.
	Stop <-chan struct{}
}

// ErrStopped is Train's error when TrainConfig.Stop closed before the
// steps were done; the model keeps the steps taken.
var ErrStopped = errors.New("train: stopped")

// TrainResult reports what a training call did.
type TrainResult struct {
	// Steps is the number of optimizer steps taken (R-DPFL divides by it).
	Steps int
	// Samples is the number of samples seen.
	Samples int
	// MeanLoss is the mean data loss over the samples seen (without the
	// proximal term).
	MeanLoss float64
}

// Train runs the training loop over src with the model's batch size. Every
// pass starts with src.Reset (a fresh order, for a shuffling source); rng
// draws the dropout masks. It stops at the first non-finite loss or
// gradient, with an error naming the layer.
func (m *Model) Train(src Batches, opt Optimizer, cfg TrainConfig, rng *rand.Rand) (TrainResult, error) {
	m.Acquire()
	defer m.Release()
	var res TrainResult
	n := src.Len()
	if err := m.checkTrain(n, cfg); err != nil {
		return res, err
	}
	total := cfg.Steps
	if total == 0 {
		total = cfg.Epochs * ((n + m.batch - 1) / m.batch)
	}
	x, y := m.inputBuffers()
	var lossSum float64
	src.Reset()
	for res.Steps < total {
		if cfg.Stop != nil {
			select {
			case <-cfg.Stop:
				if res.Samples > 0 {
					res.MeanLoss = lossSum / float64(res.Samples)
				}
				return res, ErrStopped
			default:
			}
		}
		b := src.Next(x, y)
		if b == 0 {
			src.Reset()
			continue
		}
		loss, err := m.Step(x, y, b, opt, cfg, rng)
		if err != nil {
			return res, fmt.Errorf("train step %d: %w", res.Steps, err)
		}
		lossSum += loss
		res.Steps++
		res.Samples += b
	}
	res.MeanLoss = lossSum / float64(res.Samples)
	return res, nil
}

// checkTrain checks a training call's source size and config, for every
// training loop (Train, DPSGD.Train).
func (m *Model) checkTrain(n int, cfg TrainConfig) error {
	if n == 0 {
		return fmt.Errorf("train: the data source is empty")
	}
	if cfg.Steps < 0 || cfg.Epochs < 0 || (cfg.Steps == 0 && cfg.Epochs == 0) {
		return fmt.Errorf("train: epochs = %d, steps = %d: set one of them to a positive number", cfg.Epochs, cfg.Steps)
	}
	if cfg.ProxMu < 0 || (cfg.ProxMu > 0 && len(cfg.ProxRef) != len(m.params)) {
		return fmt.Errorf("train: proximal term needs mu ≥ 0 and a reference of %d parameters (got mu %v, %d)", len(m.params), cfg.ProxMu, len(cfg.ProxRef))
	}
	if ok, at := vec.AllFinite(cfg.ProxRef); cfg.ProxMu > 0 && !ok {
		return fmt.Errorf("train: proximal reference holds a non-finite value at %d", at)
	}
	return nil
}

// Step runs one forward-backward pass on the first n samples of x and y and
// applies the optimizer. It returns the summed data loss over the batch.
// It does not allocate.
//
// With plain SGD (no momentum, weight decay, proximal term or clipping) a
// large linear layer's update is fused into its weight-gradient product
// (linear.applyDeferred), applied only once every layer's gradient is
// known to be finite, with the bits of the unfused step; that layer's part
// of Grads then holds no meaning after Step.
func (m *Model) Step(x []float32, y []int, n int, opt Optimizer, cfg TrainConfig, rng *rand.Rand) (float64, error) {
	m.Acquire()
	defer m.Release()
	sgd, fuse := m.fusesSGD(opt, cfg)
	loss, err := m.gradient(x, y, n, rng, fuse)
	if err != nil {
		return 0, err
	}
	if fuse {
		m.stepFused(sgd)
		return loss, nil
	}
	if cfg.ProxMu > 0 {
		mu := float32(cfg.ProxMu)
		for i, w := range m.params {
			m.grads[i] += mu * (w - cfg.ProxRef[i])
		}
	}
	if cfg.ClipNorm > 0 {
		ClipGlobalNorm(m.grads, cfg.ClipNorm)
	}
	m.optimize(opt, 0, len(m.params))
	return loss, nil
}

// fusesSGD reports whether Step may fuse plain SGD into linear layers'
// weight-gradient products, and the SGD. It needs the update to be
// w − lr·g alone and both sides to round it once: SGD's vector kernel and
// an assembly matrix kernel (the portable ones round the product first, or
// fuse as the compiler chooses).
func (m *Model) fusesSGD(opt Optimizer, cfg TrainConfig) (*SGD, bool) {
	sgd, ok := opt.(*SGD)
	if !ok || sgd.momentum != 0 || sgd.wd != 0 || cfg.ProxMu > 0 || cfg.ClipNorm > 0 {
		return nil, false
	}
	return sgd, sgdFuses() && m.eng.Kernel() != "portable"
}

// stepFused applies plain SGD after a fuseSGD pass: each deferred linear
// layer's weights by its fused product, every other parameter by
// SGD.stepRange over the ranges between them (multiples of 8 apart, so
// each element takes Step's path).
func (m *Model) stepFused(sgd *SGD) {
	lo := 0
	for i, l := range m.layers {
		lin, ok := l.(*linear)
		if !ok || !lin.deferred {
			continue
		}
		lin.applyDeferred(m.eng, float32(sgd.lr))
		m.optimize(sgd, lo, m.offsets[i])
		lo = m.offsets[i] + lin.in*lin.out
	}
	m.optimize(sgd, lo, len(m.params))
}

// rangeStepper is an optimizer whose update is elementwise with no shared
// state, so disjoint ranges of the parameters can be updated in parallel
// with the same bits (see SGD.stepRange).
type rangeStepper interface {
	stepRange(w, g []float32, lo, hi int)
}

// optStripe is how many parameters one part of a parallel optimizer step
// updates (a multiple of 8, the vector block): the FEMNIST CNN's 1.7M
// parameters make 413 stripes.
const optStripe = 4096

// optimize applies opt to parameters [lo, hi), split across the matrix
// threads when the optimizer allows it: the update streams parameters,
// gradients and momentum through memory (20 MB a step for the FEMNIST
// CNN), which one core does alone in 7 % of a 2-thread step. A range
// short of the whole vector needs a rangeStepper, and lo a multiple of 8
// (stepFused).
func (m *Model) optimize(opt Optimizer, lo, hi int) {
	rs, ok := opt.(rangeStepper)
	switch {
	case ok && m.eng.Workers() >= 2 && hi-lo >= splitMinFloats:
		m.stepper, m.stepLo, m.stepHi = rs, lo, hi
		m.eng.Each((hi-lo+optStripe-1)/optStripe, m.stepFn)
		m.stepper = nil
	case ok:
		rs.stepRange(m.params, m.grads, lo, hi)
	default:
		opt.Step(m.params[lo:hi], m.grads[lo:hi])
	}
}

// stepStripes updates stripes [lo, hi) of params[m.stepLo:m.stepHi] with
// m.stepper (Engine.Each's callback, bound once so that a step allocates
// nothing).
func (m *Model) stepStripes(_, lo, hi int) {
	m.stepper.stepRange(m.params, m.grads, m.stepLo+lo*optStripe, min(m.stepLo+hi*optStripe, m.stepHi))
}

// layerGradsFinite reports whether layer i's gradients from a backward
// pass over n samples are finite: checked right after its backward, while
// they are still in cache, or for a linear layer by a bound on its inputs
// (linear.gradsBoundedFinite).
func (m *Model) layerGradsFinite(i, n int) bool {
	if lin, ok := m.layers[i].(*linear); ok && lin.bounded {
		return true
	}
	return m.gradsFinite(m.grads[m.offsets[i]:m.offsets[i+1]])
}

// gradsFinite reports whether g holds no NaN or Inf, split across the
// matrix threads when it is large: the FEMNIST CNN's 3136→512 layer's 1.6M
// gradients come from memory, 1.2 ms a step for one core.
func (m *Model) gradsFinite(g []float32) bool {
	if m.eng.Workers() < 2 || len(g) < 4*optStripe {
		ok, _ := vec.AllFinite(g)
		return ok
	}
	m.checking = g
	m.sawNonFinite.Store(false)
	m.eng.Each((len(g)+optStripe-1)/optStripe, m.checkFn)
	m.checking = nil
	return !m.sawNonFinite.Load()
}

// checkStripes checks stripes [lo, hi) of m.checking (gradsFinite).
func (m *Model) checkStripes(_, lo, hi int) {
	if ok, _ := vec.AllFinite(m.checking[lo*optStripe : min(hi*optStripe, len(m.checking))]); !ok {
		m.sawNonFinite.Store(true)
	}
}

// Gradient runs the training-mode forward and backward pass on the first n
// samples of x and y, leaving d(mean loss)/d(params) in Grads, and returns
// the summed loss over the batch. Parameters do not change (batch-norm
// running statistics do, as in any training-mode pass).
func (m *Model) Gradient(x []float32, y []int, n int, rng *rand.Rand) (float64, error) {
	m.Acquire()
	defer m.Release()
	return m.gradient(x, y, n, rng, false)
}

// gradient is Gradient, as a fuseSGD pass when fuse is set (Step).
func (m *Model) gradient(x []float32, y []int, n int, rng *rand.Rand, fuse bool) (float64, error) {
	if n < 1 || n > m.batch {
		return 0, fmt.Errorf("batch of %d samples: model buffers hold 1 to %d", n, m.batch)
	}
	m.run = pass{eng: m.eng, train: true, rng: rng, fuseSGD: fuse}
	p := &m.run
	for i, l := range m.layers {
		if _, ok := l.(gradOverwriter); !ok {
			clear(m.grads[m.offsets[i]:m.offsets[i+1]])
		}
	}
	logits := m.forward(p, x[:n*m.inSize], n)
	dl := m.dlogits[:n*m.classes]
	loss, err := m.head.Loss(logits, y[:n], n, m.classes, dl)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return 0, m.nonFinite("loss", x[:n*m.inSize], n)
	}
	g := dl
	for i := len(m.layers) - 1; i >= 0 && g != nil; i-- {
		g = m.layers[i].backward(p, g, n)
		if !m.layerGradsFinite(i, n) {
			return 0, fmt.Errorf("%w gradient in layer %d (%s)", ErrNonFinite, i, m.layers[i].kind())
		}
	}
	return loss, nil
}

func (m *Model) forward(p *pass, x []float32, n int) []float32 {
	for _, l := range m.layers {
		x = l.forward(p, x, n)
	}
	return x
}

// nonFinite replays the forward pass in evaluation order to name the first
// layer whose output is not finite. It runs only on the failure path.
func (m *Model) nonFinite(what string, x []float32, n int) error {
	if ok, _ := vec.AllFinite(x); !ok {
		return fmt.Errorf("%w %s: the input batch holds NaN or Inf", ErrNonFinite, what)
	}
	if ok, at := vec.AllFinite(m.params); !ok {
		l := m.layerOfParam(at)
		return fmt.Errorf("%w %s: parameters of layer %d (%s) hold NaN or Inf", ErrNonFinite, what, l, m.layers[l].kind())
	}
	m.run = pass{eng: m.eng}
	p := &m.run
	for i, l := range m.layers {
		x = l.forward(p, x, n)
		if ok, _ := vec.AllFinite(x); !ok {
			return fmt.Errorf("%w %s: output of layer %d (%s) overflowed", ErrNonFinite, what, i, l.kind())
		}
	}
	return fmt.Errorf("%w %s in the %s head", ErrNonFinite, what, m.head.Name())
}

// ErrNonFinite is wrapped by every error of a non-finite loss, gradient
// or output: the model diverged (or its input is broken), which a driver
// records as an outcome rather than a failure (errors.Is).
var ErrNonFinite = errors.New("non-finite")

// layerOfParam returns the index of the layer owning flat parameter i.
func (m *Model) layerOfParam(i int) int {
	for li := range m.layers {
		if i < m.offsets[li+1] {
			return li
		}
	}
	return len(m.layers) - 1
}
