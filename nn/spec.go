package nn

import (
	"fmt"
	"strings"
)

// Spec declares a model so configs can name it. Kind selects the
// architecture; the other fields parameterize it where the kind allows.
type Spec struct {
	// Kind is "logreg", "mlp", "femnist_cnn" or "lenet5".
	Kind string
	// Input is the per-sample input shape: [D] or [C, H, W]. Dense kinds
	// flatten any shape; the CNNs need [1, 28, 28] (femnist_cnn) or
	// [1, 28, 28] / [3, 32, 32] (lenet5).
	Input []int
	// Classes is the number of outputs.
	Classes int
	// Hidden lists the MLP's hidden widths, e.g. [256, 128].
	Hidden []int
	// Dropout is the MLP's dropout probability after each hidden layer
	// (0 = none). The FEMNIST CNN always uses its 0.5.
	Dropout float64
	// BatchNorm inserts batch normalization after each hidden linear layer
	// of the MLP (Linear → BatchNorm → ReLU → Dropout, as DMTT's HAR model).
	BatchNorm bool
	// Head is "softmax" (default) or "evidential".
	Head string
}

// Kinds lists the model kinds Build accepts.
var Kinds = []string{"logreg", "mlp", "femnist_cnn", "lenet5"}

// layers builds the layer stack the spec describes.
func (s Spec) layers() ([]layer, error) { return s.stackWith(false) }

// stackWith is layers, keeping a ReLU before a following max-pool when
// keepOrder is set (see stackBuilder.maxPool).
func (s Spec) stackWith(keepOrder bool) ([]layer, error) {
	if s.Classes < 2 {
		return nil, fmt.Errorf("model %s: classes = %d, need at least 2", s.Kind, s.Classes)
	}
	if len(s.Input) == 0 || size(s.Input) < 1 {
		return nil, fmt.Errorf("model %s: input shape %v is empty", s.Kind, s.Input)
	}
	for _, d := range s.Input {
		if d < 1 {
			return nil, fmt.Errorf("model %s: input shape %v has a non-positive dimension", s.Kind, s.Input)
		}
	}
	b := &stackBuilder{shape: append([]int(nil), s.Input...), keepOrder: keepOrder}
	switch s.Kind {
	case "logreg":
		b.flatten()
		b.linear(s.Classes)
	case "mlp":
		if s.Dropout < 0 || s.Dropout >= 1 {
			return nil, fmt.Errorf("model mlp: dropout = %v, allowed range [0, 1)", s.Dropout)
		}
		b.flatten()
		for _, h := range s.Hidden {
			if h < 1 {
				return nil, fmt.Errorf("model mlp: hidden width %d, need ≥ 1", h)
			}
			b.linear(h)
			if s.BatchNorm {
				b.batchNorm()
			}
			b.relu()
			if s.Dropout > 0 {
				b.dropout(s.Dropout)
			}
		}
		b.linear(s.Classes)
	case "femnist_cnn":
		// the LIGHTYEAR paper: conv5x5-32 pad 2 → ReLU → maxpool 2 →
		// conv5x5-64 pad 2 → ReLU → maxpool 2 → FC 3136-512 → ReLU →
		// dropout 0.5 → FC classes. (Each pool is built before its ReLU:
		// the same function, cheaper; see stackBuilder.maxPool.)
		if !sameShape(s.Input, []int{1, 28, 28}) {
			return nil, fmt.Errorf("model femnist_cnn needs input 1×28×28, got %s", shapeString(s.Input))
		}
		b.conv(32, 5, 1, 2)
		b.relu()
		b.maxPool(2)
		b.conv(64, 5, 1, 2)
		b.relu()
		b.maxPool(2)
		b.flatten()
		b.linear(512)
		b.relu()
		b.dropout(0.5)
		b.linear(s.Classes)
	case "lenet5":
		// LeNet-5 with ReLU and max pooling: 28×28 inputs are padded by 2
		// so both input sizes reach the 16×5×5 feature map.
		pad := 0
		switch {
		case sameShape(s.Input, []int{1, 28, 28}):
			pad = 2
		case sameShape(s.Input, []int{3, 32, 32}):
		default:
			return nil, fmt.Errorf("model lenet5 needs input 1×28×28 or 3×32×32, got %s", shapeString(s.Input))
		}
		b.conv(6, 5, 1, pad)
		b.relu()
		b.maxPool(2)
		b.conv(16, 5, 1, 0)
		b.relu()
		b.maxPool(2)
		b.flatten()
		b.linear(120)
		b.relu()
		b.linear(84)
		b.relu()
		b.linear(s.Classes)
	default:
		return nil, fmt.Errorf("unknown model kind %q (want one of %s)", s.Kind, strings.Join(Kinds, ", "))
	}
	return b.stack, b.err
}

func (s Spec) head() (Head, error) {
	switch s.Head {
	case "", "softmax":
		return Softmax{}, nil
	case "evidential":
		return &Evidential{}, nil
	}
	return nil, fmt.Errorf("unknown head %q (want softmax or evidential)", s.Head)
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// stackBuilder appends layers while tracking the running shape; the first
// error sticks.
type stackBuilder struct {
	shape []int
	stack []layer
	err   error
	// keepOrder builds a ReLU followed by a max-pool in that order (maxPool
	// swaps them); for the test of the swap.
	keepOrder bool
}

// last is the most recently added layer, nil for none.
func (b *stackBuilder) last() layer {
	if len(b.stack) == 0 {
		return nil
	}
	return b.stack[len(b.stack)-1]
}

func (b *stackBuilder) add(l layer, err error) {
	if b.err != nil {
		return
	}
	if err != nil {
		b.err = err
		return
	}
	b.stack = append(b.stack, l)
	b.shape = l.outShape()
}

func (b *stackBuilder) flatten() {
	if len(b.shape) > 1 {
		b.add(&flatten{in: b.shape}, nil)
	}
}
func (b *stackBuilder) linear(out int) {
	if len(b.shape) != 1 {
		b.add(nil, fmt.Errorf("linear layer needs a flat input, got %s", shapeString(b.shape)))
		return
	}
	b.add(newLinear(b.shape[0], out), nil)
}
func (b *stackBuilder) relu()             { b.add(&relu{shape: b.shape}, nil) }
func (b *stackBuilder) dropout(p float64) { b.add(newDropout(b.shape, p)) }
func (b *stackBuilder) batchNorm()        { b.add(newBatchNorm(b.shape)) }

// maxPool adds a k×k max-pool with stride k. Right after a ReLU it goes
// before the ReLU instead: max commutes with the non-decreasing ReLU, so
// relu(maxpool(x)) is maxpool(relu(x)) bit for bit, gradient included
// (TestReLUPoolSwapIsExact), and the ReLU and its gradient then run on a
// k²-th of the values (for the FEMNIST CNN, 5 % of a training step). Both
// layers are parameterless, so the swap moves no parameter and no tensor
// index (Tensors numbers layers as nn.Sequential does); only Describe shows
// the order that runs. The pool then applies the ReLU itself, to each
// worker's outputs while they are in cache, and masks the gradient as it
// routes it (maxPool2d.relu); the ReLU layer stays, passing both through.
//
// A 2×2 pool right after a convolution reads its output in place at the
// convolution's row pitch (conv2d.outPitch).
func (b *stackBuilder) maxPool(k int) {
	if b.err != nil {
		return
	}
	r, swap := b.last().(*relu)
	swap = swap && !b.keepOrder
	if swap {
		b.stack, b.shape = b.stack[:len(b.stack)-1], r.shape
	}
	pool, err := newMaxPool2d(b.shape, k, k)
	if err == nil {
		pool.relu = swap
		if c, ok := b.last().(*conv2d); ok && k == 2 {
			c.pool, pool.from = pool, c
		}
	}
	b.add(pool, err)
	if swap {
		b.add(&relu{shape: b.shape, inPool: true}, nil)
	}
}
func (b *stackBuilder) conv(cout, k, s, p int) { b.add(newConv2d(b.shape, cout, k, s, p)) }
