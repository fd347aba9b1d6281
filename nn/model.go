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
// What a model needs only while it computes (its gradients, activation
// buffers for batches of up to Batch() samples, one input batch, the
// logits' gradient and a matrix engine) is its scratch. A model built
// without a Pool owns its scratch; one built with a Pool takes a scratch
// from the pool while it computes (see Acquire) and holds only its
// parameters, state and layer shapes in between. A model is not safe for
// concurrent use.
type Model struct {
	spec    Spec
	layers  []layer
	head    Head
	params  []float32
	grads   []float32
	state   []float32
	batch   int
	threads int
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
	// offsets[len(layers)] = len(params). stateOffsets likewise in state.
	offsets, stateOffsets []int
	// featureLayer is the index of the final linear layer; its input is
	// the penultimate-layer feature vector.
	featureLayer int
	// pool lends a pooled model its scratch; nil for a model that owns
	// one. A pooled model's layers, grads, eng, dlogits, xbuf and ybuf are
	// the held scratch's (held > 0) or shapes, nil, nil… (held = 0): its
	// own layers, meta, are bound to params and state only, for what needs
	// no buffers (Init, Tensors, Describe, NewDPSGD's checks).
	pool    *Pool
	meta    []layer
	scratch *scratch
	held    int
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
	// Pool, when set, lends the model its scratch while it computes (see
	// Pool): Batch and Threads are then the pool's (0 takes them; another
	// value is an error) and so must the spec be.
	Pool *Pool
}

// Build returns a model for spec with parameters drawn from seed (same seed,
// same initial parameters: every node of an experiment starts alike).
func Build(spec Spec, seed uint64, opt Options) (*Model, error) {
	if opt.Pool != nil {
		return opt.Pool.build(spec, seed, opt)
	}
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

// assemble builds a model that owns its scratch over layers: the flat
// vectors, the layers' buffers, the engine.
func assemble(spec Spec, layers []layer, head Head, opt Options) *Model {
	m := newModel(spec, layers, head, opt)
	m.use(newScratch(layers, m.offsets, m.batch, m.threads, m.inSize, m.classes))
	return m
}

// newModel lays the layers' parameters and state out in flat vectors it
// allocates, and binds the layers to them with no gradients: what a model
// holds besides its scratch.
func newModel(spec Spec, layers []layer, head Head, opt Options) *Model {
	m := &Model{spec: spec, layers: layers, head: head, batch: opt.Batch, threads: max(opt.Threads, 1),
		inSize: size(spec.Input), classes: spec.Classes}
	m.offsets, m.stateOffsets = layout(layers)
	for i, l := range layers {
		if _, ok := l.(*linear); ok {
			m.featureLayer = i
		}
	}
	m.params = make([]float32, m.offsets[len(layers)])
	m.state = make([]float32, m.stateOffsets[len(layers)])
	m.bind(layers, nil)
	m.stepFn, m.checkFn = m.stepStripes, m.checkStripes
	return m
}

// layout returns where each layer's parameters and state start in the
// flat vectors (one more entry: the lengths), and marks the linear layers
// whose weights start and end on a multiple of 8 (linear.aligned).
func layout(layers []layer) (params, state []int) {
	po, so := 0, 0
	for _, l := range layers {
		params, state = append(params, po), append(state, so)
		if lin, ok := l.(*linear); ok {
			lin.aligned = po%8 == 0 && (po+lin.in*lin.out)%8 == 0
		}
		po, so = po+l.paramCount(), so+l.stateCount()
	}
	return append(params, po), append(state, so)
}

// bind points layers (the model's or a scratch's, laid out alike) at the
// model's parameters and state, and at grads (nil: no gradients).
func (m *Model) bind(layers []layer, grads []float32) {
	for i, l := range layers {
		lo, hi := m.offsets[i], m.offsets[i+1]
		var g []float32
		if grads != nil {
			g = grads[lo:hi]
		}
		l.bind(m.params[lo:hi], g, m.state[m.stateOffsets[i]:m.stateOffsets[i+1]])
	}
}

// use makes s the model's scratch: its layers, bound to the model's
// parameters and state, compute for the model.
func (m *Model) use(s *scratch) {
	m.bind(s.layers, s.grads)
	m.scratch = s
	m.layers, m.grads, m.eng, m.dlogits, m.xbuf, m.ybuf = s.layers, s.grads, s.eng, s.dlogits, s.xbuf, s.ybuf
}

// Init redraws the parameters from seed and resets the node-local state.
func (m *Model) Init(seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x6e6e2d696e6974)) // "nn-init"
	for _, l := range m.layers {
		l.initParams(r)
	}
}

// Close releases the model's matrix-engine goroutines. A pooled model's
// engines are the pool's (Pool.Close): Close does nothing.
func (m *Model) Close() {
	if m.pool == nil {
		m.eng.Close()
	}
}

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
// see Step). A pooled model's gradients are its scratch's: they last while
// the model holds it (Acquire), and Grads is nil when it does not, so a
// caller that reads them between Gradient and Step holds the scratch
// across the three calls.
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
// size, thread count, parameters and state, taking its scratch from the
// same pool as m (or owning one, as m does).
func (m *Model) Clone() *Model {
	c, err := Build(m.spec, 0, Options{Batch: m.batch, Threads: m.threads, Pool: m.pool})
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

// MemoryBytes is what the model holds: parameters, state, and when it owns
// its scratch, gradients and activation buffers (4 bytes per float32 or
// int32 entry) plus one input batch (labels as int, 8 bytes). A pooled
// model holds only parameters and state: its pool's scratch is
// Pool.MemoryBytes. Optimizer state is owned by the optimizer
// (Optimizer.StateFloats), the matrix engine's workspace is not counted
// (Footprint.Workspace).
func (m *Model) MemoryBytes() int {
	n := len(m.params) + len(m.state)
	if m.pool != nil {
		return 4 * n
	}
	return 4*n + m.scratch.memoryBytes()
}

func (m *Model) inputBuffers() ([]float32, []int) { return m.xbuf, m.ybuf }
