package nn

import (
	"fmt"

	"github.com/trellis-fl/trellis/internal/gemm"
	"github.com/trellis-fl/trellis/internal/memsize"
)

// A Footprint is the memory a model of a Spec holds, worked out without
// building it (a config with hidden = [1000000, 1000000] is measured, not
// allocated): each layer counts the buffers its alloc makes and the matrix
// products its passes run (the layer's footprint method, next to its
// alloc). Heap bytes are rounded per allocation as the Go allocator does
// (memsize.Alloc).
type Footprint struct {
	// Params is the parameter count (the flat vector's length; gradients
	// are as many), State the node-local state's (batch-norm statistics).
	Params, State int64
	// Buffers is the heap bytes of the activation buffers for a full
	// batch: every layer's outputs, input gradients and scratch, the
	// logits' gradient and one input batch with its labels.
	Buffers int64
	// BufferFloats is their float32 (and int32) count, labels aside: what
	// Model.MemoryBytes counts.
	BufferFloats int64
	// Workspace is the matrix engine's packing buffers after a training
	// step (gemm.Workspace of the layers' products).
	Workspace int64
	// PerModel and Scratch split a model's heap bytes between what it
	// keeps from one pass to the next and what it needs only while it
	// computes. PerModel is the parameter and state vectors: all that a
	// model built with a Pool holds. Scratch is one scratch's: the
	// gradients, the Buffers and the Workspace; a pool holds one per model
	// computing at once (Pool.Size), a model without a pool its own.
	PerModel, Scratch int64
	// PerSample is what DP-SGD (NewDPSGD) allocates on top: per-sample
	// norms and scales, and each convolution's per-sample gradients or
	// ghost-norm scratch.
	PerSample int64
	// InputSize is one sample's floats, Feature the last linear layer's
	// input width, Classes the outputs.
	InputSize, Feature, Classes int64
	// Layers are the layers' kinds, in order.
	Layers []string
}

// footprinter collects the layers' allocations and products.
type footprinter struct {
	f        Footprint
	products []gemm.Product
}

// buffer counts one allocation of n float32 (or int32).
func (fp *footprinter) buffer(n int64) {
	fp.f.Buffers = memsize.Add(fp.f.Buffers, memsize.Floats(n))
	fp.f.BufferFloats = memsize.Add(fp.f.BufferFloats, n)
}

// perSample counts one DP-SGD allocation of b bytes.
func (fp *footprinter) perSample(b int64) {
	fp.f.PerSample = memsize.Add(fp.f.PerSample, memsize.Alloc(b))
}

func (fp *footprinter) product(ps ...gemm.Product) { fp.products = append(fp.products, ps...) }

// Footprint is the memory a model of s built for batches of up to batch
// samples holds (Build's allocations, one matrix thread), and what DP-SGD
// adds. Its errors are Build's.
func (s Spec) Footprint(batch int) (Footprint, error) {
	if batch < 1 {
		return Footprint{}, fmt.Errorf("model batch size %d: need ≥ 1", batch)
	}
	layers, err := s.layers()
	if err != nil {
		return Footprint{}, err
	}
	if _, err := s.head(); err != nil {
		return Footprint{}, err
	}
	B := int64(batch)
	fp := &footprinter{}
	f := &fp.f
	f.InputSize, f.Classes = int64(size(s.Input)), int64(s.Classes)
	for i, l := range layers {
		f.Params = memsize.Add(f.Params, int64(l.paramCount()))
		f.State = memsize.Add(f.State, int64(l.stateCount()))
		if lin, ok := l.(*linear); ok {
			f.Feature = int64(lin.in)
		}
		l.footprint(batch, i > 0, fp)
		f.Layers = append(f.Layers, l.kind())
	}
	// assemble's buffers: the logits' gradient, one input batch, its labels.
	fp.buffer(memsize.Mul(B, f.Classes))
	fp.buffer(memsize.Mul(B, f.InputSize))
	f.Buffers = memsize.Add(f.Buffers, memsize.Alloc(8*B))
	f.Workspace = gemm.Workspace(fp.products)
	f.PerModel = memsize.Add(memsize.Floats(f.Params), memsize.Floats(f.State))
	f.Scratch = memsize.Add(memsize.Floats(f.Params), f.Buffers, f.Workspace)
	// NewDPSGD's own: the per-sample squared norms and scales, a gradient
	// slot and a convolution slot per layer (dpConvFootprint adds their
	// scratch).
	L := int64(len(layers))
	fp.perSample(8 * B)
	fp.perSample(4 * B)
	fp.perSample(24 * L)
	fp.perSample(8 * L)
	return *f, nil
}

// MemoryBytes is what Model.MemoryBytes reports for a model of this
// footprint built for batches of up to batch samples without a pool; a
// pooled model reports 4·(Params + State), and its pool the rest per
// scratch (Pool.MemoryBytes).
func (f Footprint) MemoryBytes(batch int) int64 {
	return memsize.Add(memsize.Mul(4, memsize.Add(2*f.Params, f.State, f.BufferFloats)), 8*int64(batch))
}
