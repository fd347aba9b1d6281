package nn

import (
	"fmt"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/internal/gemm"
)

// pass carries what a forward or backward pass needs besides the data: the
// matrix engine, whether the model trains (dropout, batch statistics), and
// the training RNG for dropout masks.
type pass struct {
	eng   *gemm.Engine
	train bool
	rng   *rand.Rand
	// perSample: DP-SGD's pass, whose per-sample norms need every layer's
	// dense output gradient (no conv2d.takesPooledGrad).
	perSample bool
	// fuseSGD: Model.Step's pass with plain SGD, where a linear layer may
	// leave its weight gradient uncomputed and its update pending
	// (linear.deferred, Model.stepFused).
	fuseSGD bool
}

// layer is one stage of a sequential model. A layer owns its output and
// input-gradient buffers, sized for the model's batch size when alloc is
// called; forward and backward return slices of those buffers, valid until
// the next call. Parameters and gradients are views into the model's flat
// vectors, installed by bind.
type layer interface {
	// kind names the layer for errors, e.g. "linear 784→256".
	kind() string
	// outShape is the per-sample output shape.
	outShape() []int
	// paramCount is the number of trainable float32 the layer owns in the
	// model's flat vector.
	paramCount() int
	// stateCount is the number of node-local, never shared float32 (batch
	// norm running statistics).
	stateCount() int
	// bind installs the views; grads is nil for a pooled model's own
	// layers, which never compute (their gradients are a scratch's).
	bind(params, grads, state []float32)
	// initParams draws initial parameters (PyTorch's defaults, so results
	// are comparable with the Python frameworks) and resets state.
	initParams(r *rand.Rand)
	// alloc sizes the activation buffers for batches of up to n samples;
	// needDx is false for the first layer, whose input gradient nobody uses.
	alloc(n int, needDx bool)
	// footprint counts what alloc(n, needDx) allocates and the matrix
	// products a training step runs, without allocating (Spec.Footprint).
	footprint(n int, needDx bool, fp *footprinter)
	// bufferFloats is the number of float32 (and int32) the activation
	// buffers hold, for the memory account.
	bufferFloats() int
	forward(p *pass, x []float32, n int) []float32
	// backward takes dL/dy and returns dL/dx (nil when needDx is false),
	// accumulating parameter gradients (or overwriting them: see
	// gradOverwriter). It uses the x of the last forward.
	backward(p *pass, dy []float32, n int) []float32
}

// gradOverwriter is a layer whose backward writes every entry of its
// parameter gradients instead of adding to them, so Model.Gradient need not
// zero them first (for the MLP, clearing its 235K gradients was 4 % of a
// step). DP-SGD, which sums several backward passes, computes these layers'
// gradients itself.
type gradOverwriter interface {
	overwritesGrads()
}

// eachSample runs a layer's per-sample loop fn over samples [0, n), split
// across the pass's matrix threads when the batch holds at least
// splitMinFloats values (below that, handing a range over costs about what
// it saves). fn writes only its samples' outputs, so the result does not
// depend on the split.
func eachSample(p *pass, n, perSample int, fn func(worker, lo, hi int)) {
	if n*perSample < splitMinFloats || p.eng.Threads() == 1 {
		fn(0, 0, n)
		return
	}
	p.eng.Each(n, fn)
}

// splitMinFloats: a ReLU over 64 Ki floats takes about 30 µs on one core.
const splitMinFloats = 1 << 16

func size(shape []int) int {
	s := 1
	for _, d := range shape {
		s *= d
	}
	return s
}

func shapeString(shape []int) string {
	s := ""
	for i, d := range shape {
		if i > 0 {
			s += "×"
		}
		s += fmt.Sprint(d)
	}
	return s
}

// grow returns buf resized to n elements, reallocating only when its
// capacity is too small.
func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

// cut is v[lo:hi], or nil for a nil v (bind without gradients).
func cut(v []float32, lo, hi int) []float32 {
	if v == nil {
		return nil
	}
	return v[lo:hi]
}
