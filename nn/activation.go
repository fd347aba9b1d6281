package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/internal/memsize"
	"github.com/trellis-fl/trellis/vec"
)

// relu is max(0, x). Backward reads its own output: y > 0 exactly where the
// input was positive.
type relu struct {
	shape []int
	// inPool: the max-pool before it applies the ReLU to its outputs and
	// masks their gradients (maxPool2d.relu), so this layer passes both
	// through untouched and holds no buffers. It stays in the stack so
	// that Describe, layer indices and tensor names do not change.
	inPool bool
	y, dx  []float32
	needDx bool
	// The current pass's input (forward) or output gradient (backward),
	// for the worker functions, bound by alloc so that a pass allocates
	// nothing.
	x, dy                 []float32
	forwardFn, backwardFn func(worker, lo, hi int)
}

func (r *relu) kind() string           { return "relu" }
func (r *relu) outShape() []int        { return r.shape }
func (r *relu) paramCount() int        { return 0 }
func (r *relu) stateCount() int        { return 0 }
func (r *relu) bind(_, _, _ []float32) {}
func (r *relu) initParams(*rand.Rand)  {}
func (r *relu) bufferFloats() int      { return len(r.y) + len(r.dx) }

func (r *relu) alloc(n int, needDx bool) {
	if r.inPool {
		return
	}
	r.forwardFn, r.backwardFn = r.forwardRange, r.backwardRange
	r.y = grow(r.y, n*size(r.shape))
	r.needDx = needDx
	if needDx {
		r.dx = grow(r.dx, n*size(r.shape))
	}
}

func (r *relu) footprint(n int, needDx bool, fp *footprinter) {
	if r.inPool {
		return
	}
	fp.buffer(memsize.Mul(int64(n), int64(size(r.shape))))
	if needDx {
		fp.buffer(memsize.Mul(int64(n), int64(size(r.shape))))
	}
}

func (r *relu) forward(p *pass, x []float32, n int) []float32 {
	if r.inPool {
		return x
	}
	r.x = x
	eachSample(p, n, size(r.shape), r.forwardFn)
	return r.y[:n*size(r.shape)]
}

// forwardRange computes samples [lo, hi) (vec.ReLU: branch-free, negative
// inputs and −0 become +0).
func (r *relu) forwardRange(_, lo, hi int) {
	sz := size(r.shape)
	vec.ReLU(r.y[lo*sz:hi*sz], r.x[lo*sz:hi*sz])
}

func (r *relu) backward(p *pass, dy []float32, n int) []float32 {
	if r.inPool {
		return dy
	}
	if !r.needDx {
		return nil
	}
	r.dy = dy
	eachSample(p, n, size(r.shape), r.backwardFn)
	return r.dx[:n*size(r.shape)]
}

// backwardRange computes samples [lo, hi): the gradient passes where the
// output is positive (y ≥ 0 always, and y > 0 exactly when its bits are
// non-zero; vec.ReLUGrad).
func (r *relu) backwardRange(_, lo, hi int) {
	sz := size(r.shape)
	vec.ReLUGrad(r.dx[lo*sz:hi*sz], r.dy[lo*sz:hi*sz], r.y[lo*sz:hi*sz])
}

// dropout zeroes each activation with probability p while training and scales
// the survivors by 1/(1-p) (inverted dropout, as PyTorch), so evaluation is
// the identity. The mask comes from the training RNG the caller gives.
type dropout struct {
	shape   []int
	p       float32
	mask, y []float32
	dx      []float32
	needDx  bool
	active  bool // whether the last forward applied a mask
}

func newDropout(shape []int, p float64) (*dropout, error) {
	if !(p >= 0 && p < 1) {
		return nil, fmt.Errorf("dropout probability %v outside [0, 1)", p)
	}
	return &dropout{shape: shape, p: float32(p)}, nil
}

func (d *dropout) kind() string           { return fmt.Sprintf("dropout %g", d.p) }
func (d *dropout) outShape() []int        { return d.shape }
func (d *dropout) paramCount() int        { return 0 }
func (d *dropout) stateCount() int        { return 0 }
func (d *dropout) bind(_, _, _ []float32) {}
func (d *dropout) initParams(*rand.Rand)  {}
func (d *dropout) bufferFloats() int      { return len(d.mask) + len(d.y) + len(d.dx) }

func (d *dropout) alloc(n int, needDx bool) {
	d.mask = grow(d.mask, n*size(d.shape))
	d.y = grow(d.y, n*size(d.shape))
	d.needDx = needDx
	if needDx {
		d.dx = grow(d.dx, n*size(d.shape))
	}
}

func (d *dropout) footprint(n int, needDx bool, fp *footprinter) {
	all := memsize.Mul(int64(n), int64(size(d.shape)))
	fp.buffer(all) // mask
	fp.buffer(all) // output
	if needDx {
		fp.buffer(all)
	}
}

func (d *dropout) forward(p *pass, x []float32, n int) []float32 {
	d.active = p.train && d.p > 0
	if !d.active {
		return x
	}
	keep := math.Float32bits(1 / (1 - d.p))
	y := d.y[:n*size(d.shape)]
	mask := d.mask[:len(y)]
	// An activation is dropped when rng.Float32() < p, drawn in order.
	// Float32 is u/2²⁴ for u the low 24 bits of rng.Uint32(), so the same
	// test on the same draw is u < ⌈p·2²⁴⌉ (exact: p·2²⁴ is a float32
	// times a power of two), made without a branch: a drop is a coin toss,
	// and a mispredicted branch per activation cost more than the draw.
	// TestDropoutMaskIsFloat32Draw holds it to the Float32 test.
	t := int32(math.Ceil(float64(d.p) * (1 << 24)))
	for i := range y {
		u := int32(p.rng.Uint32() & (1<<24 - 1))
		dropped := uint32((u - t) >> 31) // all ones when u < t
		mask[i] = math.Float32frombits(keep &^ dropped)
		y[i] = x[i] * mask[i]
	}
	return y
}

func (d *dropout) backward(_ *pass, dy []float32, n int) []float32 {
	if !d.needDx {
		return nil
	}
	if !d.active {
		return dy
	}
	dx := d.dx[:n*size(d.shape)]
	for i, g := range dy[:len(dx)] {
		dx[i] = g * d.mask[i]
	}
	return dx
}

// flatten reshapes C×H×W to one vector; the data layout is already flat, so
// it passes slices through untouched.
type flatten struct{ in []int }

func (f *flatten) kind() string                                    { return "flatten" }
func (f *flatten) outShape() []int                                 { return []int{size(f.in)} }
func (f *flatten) paramCount() int                                 { return 0 }
func (f *flatten) stateCount() int                                 { return 0 }
func (f *flatten) bind(_, _, _ []float32)                          {}
func (f *flatten) initParams(*rand.Rand)                           {}
func (f *flatten) alloc(int, bool)                                 {}
func (f *flatten) footprint(int, bool, *footprinter)               {}
func (f *flatten) bufferFloats() int                               { return 0 }
func (f *flatten) forward(_ *pass, x []float32, n int) []float32   { return x[:n*size(f.in)] }
func (f *flatten) backward(_ *pass, dy []float32, n int) []float32 { return dy[:n*size(f.in)] }
