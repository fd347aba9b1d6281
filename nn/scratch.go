package nn

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/trellis-fl/trellis/internal/gemm"
)

// scratch is what a model needs only while it computes: a set of layers
// with their activation buffers (laid out as the model's, bound to its
// parameters and state while it holds them), the gradients, the logits'
// gradient, one input batch and a matrix engine with its packing
// workspace. For the MNIST MLP (784→128→10, batch 32) that is 400 KiB of
// gradients, 171 KiB of buffers and input batch and 203 KiB of workspace
// against 400 KiB of parameters (Footprint): most of a model, needed by
// one pass at a time.
type scratch struct {
	layers  []layer
	grads   []float32
	eng     *gemm.Engine
	dlogits []float32
	xbuf    []float32
	ybuf    []int
}

// newScratch allocates a scratch over layers (laid out at offsets) for
// batches of up to batch samples.
func newScratch(layers []layer, offsets []int, batch, threads, inSize, classes int) *scratch {
	s := &scratch{layers: layers, grads: make([]float32, offsets[len(layers)])}
	for i, l := range layers {
		l.alloc(batch, i > 0)
	}
	s.dlogits = make([]float32, batch*classes)
	s.xbuf = make([]float32, batch*inSize)
	s.ybuf = make([]int, batch)
	s.eng = gemm.New(threads)
	return s
}

// memoryBytes is the scratch's gradients and buffers, as Model.MemoryBytes
// counts them (not the engine's workspace).
func (s *scratch) memoryBytes() int {
	n := len(s.grads) + len(s.dlogits) + len(s.xbuf)
	for _, l := range s.layers {
		n += l.bufferFloats()
	}
	return 4*n + 8*len(s.ybuf)
}

// A Pool lends scratch to the models built with it (Options.Pool), all of
// one spec, batch size and thread count, so that a simulation of many
// nodes keeps one set of gradients, activation buffers and matrix
// workspace per model computing at a time instead of one per model: a
// pooled model holds its parameters and state only. It is safe for
// concurrent use by models used from different goroutines.
//
// The pool is a free list that grows to the peak number of scratches held
// at once and keeps them: a sync.Pool would drop them at each collection,
// and reallocating them every round would be garbage of the same size.
// A scratch carries values from one model's pass to the next model's; no
// pass reads a buffer before writing it (Gradient zeroes the gradients of
// layers that add to them), as a model's own buffers are already reused
// from one batch to the next (tested by poisoning a lent scratch).
type Pool struct {
	spec           Spec
	batch, threads int
	// the layout shared by every model and scratch of the pool
	offsets         []int
	inSize, classes int
	mu              sync.Mutex
	free            []*scratch
	made            int
	scratchBytes    int
	engines         []*gemm.Engine
	returned        func(*scratch) // tests: called on each scratch given back
}

// NewPool returns an empty pool for models of spec built with opt's batch
// size and thread count. Its errors are Build's.
func NewPool(spec Spec, opt Options) (*Pool, error) {
	if opt.Pool != nil {
		return nil, fmt.Errorf("nn: a pool's options name another pool")
	}
	if opt.Batch < 1 {
		return nil, fmt.Errorf("model batch size %d: need ≥ 1", opt.Batch)
	}
	layers, err := spec.layers()
	if err != nil {
		return nil, err
	}
	if _, err := spec.head(); err != nil {
		return nil, err
	}
	offsets, _ := layout(layers)
	return &Pool{spec: spec, batch: opt.Batch, threads: max(opt.Threads, 1), offsets: offsets,
		inSize: size(spec.Input), classes: spec.Classes}, nil
}

// build is Build with the pool: a model whose layers are bound to its
// parameters and state only.
func (p *Pool) build(spec Spec, seed uint64, opt Options) (*Model, error) {
	if !reflect.DeepEqual(spec, p.spec) {
		return nil, fmt.Errorf("model %+v: its pool serves models %+v", spec, p.spec)
	}
	if (opt.Batch != 0 && opt.Batch != p.batch) || (opt.Threads != 0 && max(opt.Threads, 1) != p.threads) {
		return nil, fmt.Errorf("model batch %d, threads %d: its pool serves batch %d, threads %d", opt.Batch, opt.Threads, p.batch, p.threads)
	}
	layers, err := spec.layers()
	if err != nil {
		return nil, err
	}
	head, err := spec.head()
	if err != nil {
		return nil, err
	}
	m := newModel(spec, layers, head, Options{Batch: p.batch, Threads: p.threads})
	m.pool, m.meta = p, layers
	m.Init(seed)
	return m, nil
}

// get takes a free scratch, or makes one when every scratch is held.
func (p *Pool) get() *scratch {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return s
	}
	p.made++
	p.mu.Unlock()
	// Built outside the lock: another model may take or give back a
	// scratch meanwhile.
	layers, err := p.spec.layers()
	if err != nil {
		panic("nn: rebuilding a pool's spec failed: " + err.Error())
	}
	layout(layers)
	s := newScratch(layers, p.offsets, p.batch, p.threads, p.inSize, p.classes)
	p.mu.Lock()
	p.scratchBytes = s.memoryBytes()
	p.engines = append(p.engines, s.eng)
	p.mu.Unlock()
	return s
}

// put gives s back.
func (p *Pool) put(s *scratch) {
	if p.returned != nil {
		p.returned(s)
	}
	p.mu.Lock()
	p.free = append(p.free, s)
	p.mu.Unlock()
}

// Size is how many scratches the pool has made: the most its models held
// at once.
func (p *Pool) Size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.made
}

// MemoryBytes is the gradients and activation buffers of the pool's
// scratches, as Model.MemoryBytes counts a model's own (Footprint.Scratch
// adds the engines' workspace).
func (p *Pool) MemoryBytes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.engines) * p.scratchBytes
}

// Close releases the matrix-engine goroutines of the pool's scratches. No
// model of the pool may compute afterwards.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.engines {
		e.Close()
	}
}

// Pool is the pool that lends the model its scratch, nil for a model that
// owns one.
func (m *Model) Pool() *Pool { return m.pool }

// Acquire makes the model hold its scratch until the matching Release:
// the methods that compute (Train, Step, Gradient, Evaluate, Outputs,
// SampleLosses, DP-SGD's steps…) take it themselves for the call when it
// is not held, so a driver holds it across a phase of several calls to
// take the pool once (a node's training, or its end of round where a
// strategy evaluates), and a caller that reads Grads between Gradient and
// Step holds it across them. Holds nest. For a model that owns its
// scratch, Acquire and Release do nothing.
func (m *Model) Acquire() {
	if m.pool == nil {
		return
	}
	if m.held++; m.held == 1 {
		m.use(m.pool.get())
	}
}

// Release ends a hold of Acquire; the last one gives the scratch back to
// the pool, with the model's gradients.
func (m *Model) Release() {
	if m.pool == nil {
		return
	}
	if m.held == 0 {
		panic("nn: Model.Release without Acquire")
	}
	if m.held--; m.held > 0 {
		return
	}
	s := m.scratch
	m.layers, m.grads, m.eng, m.dlogits, m.xbuf, m.ybuf = m.meta, nil, nil, nil, nil, nil
	// The pass descriptor refers to the engine and the caller's RNG; the
	// scratch's layers keep views of the model's parameters until the
	// next model binds them, which is harmless (they are not used in
	// between).
	m.scratch, m.run = nil, pass{}
	m.pool.put(s)
}
