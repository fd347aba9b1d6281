package nn

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"

	"github.com/trellis-fl/trellis/internal/gemm"
)

// Model is a sequential network whose trainable parameters live in one
// contiguous []float32 (layers hold views into it), with gradients in a
// second one of the same length. Strategies read and write Params directly.
// Node-local state that is never shared (batch-norm running statistics)
// lives in a third vector, State.
//
// A Model owns activation buffers for batches of up to Batch() samples and a
// matrix engine; it is not safe for concurrent use.
type Model struct {
	spec    Spec
	layers  []layer
	head    Head
	params  []float32
	grads   []float32
	state   []float32
	batch   int
	inSize  int
	classes int
	eng     *gemm.Engine
	dlogits []float32
	// xbuf and ybuf hold one input batch for the training and evaluation
	// loops; run is the pass descriptor reused by every step.
	xbuf []float32
	ybuf []int
	run  pass
	// offsets[i] is where layer i's parameters start in params;
	// offsets[len(layers)] = len(params).
	offsets []int
	// featureLayer is the index of the final linear layer; its input is
	// the penultimate-layer feature vector.
	featureLayer int
	// stepper is the optimizer of the parallel step in progress over
	// params[stepLo:stepHi], and stepFn its callback (optimize).
	stepper        rangeStepper
	stepLo, stepHi int
	stepFn         func(worker, lo, hi int)
	// checking is the gradient being checked for NaN and Inf across the
	// matrix threads, checkFn the callback and sawNonFinite what it found
	// (gradsFinite).
	checking     []float32
	checkFn      func(worker, lo, hi int)
	sawNonFinite atomic.Bool
}

// Options tune how a model is built.
type Options struct {
	// Batch is the largest batch the model will see (buffers are sized for
	// it). Required.
	Batch int
	// Threads is how many goroutines a matrix product may use (default 1).
	// Simulations that run many nodes in parallel keep 1; a single model
	// training alone can use the machine's cores. Results do not depend on
	// it.
	Threads int
}

// Build returns a model for spec with parameters drawn from seed (same seed,
// same initial parameters: every node of an experiment starts alike).
func Build(spec Spec, seed uint64, opt Options) (*Model, error) {
	if opt.Batch < 1 {
		return nil, fmt.Errorf("model batch size %d: need ≥ 1", opt.Batch)
	}
	layers, err := spec.layers()
	if err != nil {
		return nil, err
	}
	head, err := spec.head()
	if err != nil {
		return nil, err
	}
	m := assemble(spec, layers, head, opt)
	m.Init(seed)
	return m, nil
}

// assemble lays the layers' parameters out in the flat vectors and sizes
// their buffers.
func assemble(spec Spec, layers []layer, head Head, opt Options) *Model {
	m := &Model{spec: spec, layers: layers, head: head, batch: opt.Batch,
		inSize: size(spec.Input), classes: spec.Classes}
	np, ns := 0, 0
	for i, l := range layers {
		np += l.paramCount()
		ns += l.stateCount()
		if _, ok := l.(*linear); ok {
			m.featureLayer = i
		}
	}
	m.params = make([]float32, np)
	m.grads = make([]float32, np)
	m.state = make([]float32, ns)
	po, so := 0, 0
	m.offsets = make([]int, 0, len(layers)+1)
	for i, l := range layers {
		m.offsets = append(m.offsets, po)
		p, s := l.paramCount(), l.stateCount()
		l.bind(m.params[po:po+p], m.grads[po:po+p], m.state[so:so+s])
		if lin, ok := l.(*linear); ok {
			lin.aligned = po%8 == 0 && (po+lin.in*lin.out)%8 == 0
		}
		po, so = po+p, so+s
		l.alloc(opt.Batch, i > 0)
	}
	m.offsets = append(m.offsets, po)
	m.dlogits = make([]float32, opt.Batch*m.classes)
	m.xbuf = make([]float32, opt.Batch*m.inSize)
	m.ybuf = make([]int, opt.Batch)
	m.eng = gemm.New(opt.Threads)
	m.stepFn, m.checkFn = m.stepStripes, m.checkStripes
	return m
}

// Init redraws the parameters from seed and resets the node-local state.
func (m *Model) Init(seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x6e6e2d696e6974)) // "nn-init"
	for _, l := range m.layers {
		l.initParams(r)
	}
}

// Close releases the model's matrix-engine goroutines.
func (m *Model) Close() { m.eng.Close() }

// Spec returns the declaration the model was built from.
func (m *Model) Spec() Spec { return m.spec }

// Head returns the model's output head (e.g. to set the evidential KL weight).
func (m *Model) Head() Head { return m.head }

// Batch is the largest batch the model's buffers hold.
func (m *Model) Batch() int { return m.batch }

// Classes is the number of outputs.
func (m *Model) Classes() int { return m.classes }

// InputSize is the number of float32 per input sample.
func (m *Model) InputSize() int { return m.inSize }

// NumParams is the length of the flat parameter vector.
func (m *Model) NumParams() int { return len(m.params) }

// Params is the flat parameter vector itself (not a copy): writes change the
// model.
func (m *Model) Params() []float32 { return m.params }

// Grads is the flat gradient vector of the last Gradient call (after Step,
// a layer whose plain-SGD update was fused into its product holds none:
// see Step).
func (m *Model) Grads() []float32 { return m.grads }

// State is the node-local state (batch-norm running statistics), never
// shared or aggregated.
func (m *Model) State() []float32 { return m.state }

// SetParams copies a flat parameter vector into the model. The length must
// match exactly; a mismatch is an error naming both lengths.
func (m *Model) SetParams(w []float32) error {
	if len(w) != len(m.params) {
		return fmt.Errorf("parameter vector of length %d does not fit model %s with %d parameters", len(w), m.spec.Kind, len(m.params))
	}
	copy(m.params, w)
	return nil
}

// LoadFrom copies another model's parameters and state after checking the
// two architectures match layer by layer; a mismatch names both.
func (m *Model) LoadFrom(o *Model) error {
	if a, b := m.Describe(), o.Describe(); a != b {
		return fmt.Errorf("cannot load parameters of model [%s] into model [%s]", b, a)
	}
	copy(m.params, o.params)
	copy(m.state, o.state)
	return nil
}

// Clone returns an independent model with the same architecture, batch
// size, thread count, parameters and state.
func (m *Model) Clone() *Model {
	c, err := Build(m.spec, 0, Options{Batch: m.batch, Threads: m.eng.Threads()})
	if err != nil {
		panic("nn: rebuilding a built spec failed: " + err.Error())
	}
	copy(c.params, m.params)
	copy(c.state, m.state)
	if e, ok := m.head.(*Evidential); ok {
		*c.head.(*Evidential) = *e
	}
	return c
}

// Describe lists the layers and the input shape, e.g.
// "1×28×28 → conv2d 1→32 k5 s1 p2 → relu → … (1663370 params)".
func (m *Model) Describe() string {
	s := shapeString(m.spec.Input)
	for _, l := range m.layers {
		s += " → " + l.kind()
	}
	return fmt.Sprintf("%s → %s head (%d params)", s, m.head.Name(), len(m.params))
}

// MemoryBytes is what the model holds: parameters, gradients, state and
// activation buffers (4 bytes per float32 or int32 entry), plus one input
// batch (labels as int, 8 bytes). Optimizer state is owned by the optimizer
// (Optimizer.StateFloats).
func (m *Model) MemoryBytes() int {
	n := len(m.params) + len(m.grads) + len(m.state) + len(m.dlogits) + len(m.xbuf)
	for _, l := range m.layers {
		n += l.bufferFloats()
	}
	return 4*n + 8*len(m.ybuf)
}

func (m *Model) inputBuffers() ([]float32, []int) { return m.xbuf, m.ybuf }
