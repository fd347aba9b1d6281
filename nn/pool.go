package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/internal/memsize"
	"github.com/trellis-fl/trellis/vec"
)

// maxPool2d takes the maximum over k×k windows moved by stride s, without
// padding (PyTorch's floor mode). It remembers which input won each window,
// so backward routes the gradient there only; ties go to the first maximum in
// row-major window order, as in PyTorch.
type maxPool2d struct {
	c, h, w, k, s, ho, wo int
	// relu: the outputs are max(0, ·) of the windows' maxima, and the
	// gradient reaches a winner only where that output is positive: the
	// ReLU layer after the pool, applied here (stackBuilder.maxPool) to
	// skip its passes over the batch, with its vec.ReLU and vec.ReLUGrad
	// rules.
	relu bool
	// from is the convolution right before, when its output may come at
	// a wider row pitch (conv2d.outPitch; see rowPitch).
	from   *conv2d
	arg    []int32 // winning input offset per output, per batch
	y, dx  []float32
	needDx bool
	// The current pass's input (forward) or output gradient (backward),
	// for the worker functions, bound by alloc so that a pass allocates
	// nothing.
	x, dy                    []float32
	forward2x2Fn, backwardFn func(worker, lo, hi int)
	// pooled: the convolution before (from, which sets x) already ran this
	// pass's forward on each sample as it wrote it (conv2d.poolOutputs);
	// forward only returns the outputs.
	pooled bool
}

func newMaxPool2d(in []int, k, stride int) (*maxPool2d, error) {
	if len(in) != 3 {
		return nil, fmt.Errorf("maxpool2d needs a C×H×W input, got %s", shapeString(in))
	}
	if k < 1 || stride < 1 || in[1] < k || in[2] < k {
		return nil, fmt.Errorf("maxpool2d: window %d stride %d does not fit input %s", k, stride, shapeString(in))
	}
	m := &maxPool2d{c: in[0], h: in[1], w: in[2], k: k, s: stride}
	m.ho = (m.h-k)/stride + 1
	m.wo = (m.w-k)/stride + 1
	return m, nil
}

func (m *maxPool2d) kind() string           { return fmt.Sprintf("maxpool2d k%d s%d", m.k, m.s) }
func (m *maxPool2d) outShape() []int        { return []int{m.c, m.ho, m.wo} }
func (m *maxPool2d) paramCount() int        { return 0 }
func (m *maxPool2d) stateCount() int        { return 0 }
func (m *maxPool2d) bind(_, _, _ []float32) {}
func (m *maxPool2d) initParams(*rand.Rand)  {}
func (m *maxPool2d) bufferFloats() int      { return len(m.y) + len(m.dx) + len(m.arg) }

func (m *maxPool2d) alloc(n int, needDx bool) {
	m.forward2x2Fn, m.backwardFn = m.forward2x2Range, m.backwardRange
	out := n * m.c * m.ho * m.wo
	m.y = grow(m.y, out)
	if cap(m.arg) < out {
		m.arg = make([]int32, out)
	}
	m.arg = m.arg[:out]
	m.needDx = needDx
	if needDx {
		m.dx = grow(m.dx, n*m.inFloats())
	}
}

func (m *maxPool2d) footprint(n int, needDx bool, fp *footprinter) {
	out := memsize.Mul(int64(n), int64(m.c), int64(m.ho), int64(m.wo))
	fp.buffer(out) // y
	fp.buffer(out) // arg, int32
	if needDx {
		fp.buffer(memsize.Mul(int64(n), int64(m.inFloats())))
	}
}

func (m *maxPool2d) forward(p *pass, x []float32, n int) []float32 {
	if m.pooled && len(x) == len(m.x) && len(x) > 0 && &x[0] == &m.x[0] {
		m.pooled = false
		return m.y[:n*m.c*m.ho*m.wo]
	}
	m.pooled = false
	if m.k == 2 && m.s == 2 {
		m.x = x
		eachSample(p, n, m.inFloats(), m.forward2x2Fn)
		return m.y[:n*m.c*m.ho*m.wo]
	}
	y := m.forwardGeneral(x, n)
	if m.relu {
		vec.ReLU(y, y)
	}
	return y
}

// forwardGeneral is any window and stride.
func (m *maxPool2d) forwardGeneral(x []float32, n int) []float32 {
	planes := n * m.c
	y := m.y[:planes*m.ho*m.wo]
	o := 0
	for pl := 0; pl < planes; pl++ {
		base := pl * m.h * m.w
		for oy := 0; oy < m.ho; oy++ {
			for ox := 0; ox < m.wo; ox++ {
				best := base + oy*m.s*m.w + ox*m.s
				bv := x[best]
				for ky := 0; ky < m.k; ky++ {
					row := base + (oy*m.s+ky)*m.w + ox*m.s
					for kx := 0; kx < m.k; kx++ {
						// NaN never wins a comparison; the finiteness check
						// after the loss catches it instead.
						if v := x[row+kx]; v > bv {
							bv, best = v, row+kx
						}
					}
				}
				y[o] = bv
				m.arg[o] = int32(best)
				o++
			}
		}
	}
	return y
}

func (m *maxPool2d) backward(p *pass, dy []float32, n int) []float32 {
	if !m.needDx {
		return nil
	}
	if m.from != nil && m.from.takesPooledGrad(p) {
		return dy // the convolution reads the winners itself (poolgrad.go)
	}
	m.dy = dy
	eachSample(p, n, m.inFloats(), m.backwardFn)
	return m.dx[:n*m.inFloats()]
}

// rowPitch is the distance between the input's (and input gradient's)
// rows: w, or the convolution's output pitch when it feeds the pool.
func (m *maxPool2d) rowPitch() int {
	if m.from != nil {
		return m.from.outPitch()
	}
	return m.w
}

// inFloats is the floats of one sample's input (and input gradient), at
// the row pitch.
func (m *maxPool2d) inFloats() int { return m.c * m.h * m.rowPitch() }

// backwardRange routes the output gradients of samples [lo, hi) to their
// windows' winners (which lie in the same sample). A sample at a time: its
// input gradient is cleared and then scattered into while it is in cache
// (the samples' whole range, cleared first, is several MiB for the FEMNIST
// CNN's first pool and left cache before the scatter reached it).
func (m *maxPool2d) backwardRange(_, lo, hi int) {
	in, out := m.inFloats(), m.c*m.ho*m.wo
	for i := lo; i < hi; i++ {
		dx := m.dx[i*in : (i+1)*in]
		clear(dx)
		dx = m.dx[:(i+1)*in] // the winners' offsets count from the batch's start
		dy, arg := m.dy[i*out:(i+1)*out], m.arg[i*out:(i+1)*out]
		if !m.relu {
			for o, g := range dy {
				dx[arg[o]] += g
			}
			continue
		}
		// vec.ReLUGrad's rule: the gradient where the output's bits are
		// non-zero (it is ≥ +0), +0 elsewhere.
		y := m.y[i*out : (i+1)*out]
		for o, g := range dy {
			b := int32(math.Float32bits(y[o]))
			dx[arg[o]] += math.Float32frombits(math.Float32bits(g) & uint32((b|-b)>>31))
		}
	}
}

// forward2x2Range runs forward2x2 on samples [lo, hi).
func (m *maxPool2d) forward2x2Range(_, lo, hi int) {
	in, out := m.inFloats(), m.c*m.ho*m.wo
	y := m.y[lo*out : hi*out]
	m.forward2x2(m.x[lo*in:hi*in], hi-lo, y, m.arg[lo*out:hi*out], lo*in)
	if m.relu {
		vec.ReLU(y, y)
	}
}

// forward2x2 is the common 2×2, stride 2 case, without branches: on
// activations the winner of a window is random, so a compare-and-branch
// mispredicts about once per window (measured: 8 % of a FEMNIST CNN step).
// The four values are compared as integers (orderKey) and the winner is
// picked with masks (pick), and the output is the winner's own value. Ties
// resolve as in the general loop (first maximum in row-major window order;
// −0 ties with +0). A NaN is ordered by its bits: one with the sign bit
// clear wins its window, one with it set (x86's default NaN) loses, as
// every NaN does in the general loop; either way a NaN in the weights or
// the input reaches the finiteness checks through other windows.
//
// It writes the n samples of x into y and arg; the winners' offsets are
// recorded relative to x plus base0 (x's offset in the batch). On amd64
// the rows go through AVX2 (pool_amd64.s: the same keys and picks, 8
// windows at once), many rows a call: with an even input height, every
// row pair of the n samples lies two row pitches after the previous one,
// so one call pools them all (but the last few, whose last group of 8
// would run past the buffers, done by the Go loop). Rows are rowPitch
// apart: a wide convolution's extra columns are never in a window.
func (m *maxPool2d) forward2x2(x []float32, n int, y []float32, arg []int32, base0 int) {
	planes, h, w, ho, wo := n*m.c, m.h, m.rowPitch(), m.ho, m.wo
	y, arg = y[:planes*ho*wo], arg[:planes*ho*wo]
	// A run is rows consecutive row pairs from input offset base: one
	// plane, or with an even height all the remaining planes.
	for pl := 0; pl < planes; {
		base, rows := pl*h*w, ho
		if h%2 == 0 {
			rows = (planes - pl) * ho
		}
		o := pl * ho * wo
		done := 0
		if pool2x2Vector {
			done = pool2x2Rows(x, base, w, y[o:], arg[o:], wo, rows, base0+base)
		}
		for r := done; r < rows; r++ {
			pool2x2RowGo(x, base+2*r*w, w, y[o+r*wo:o+(r+1)*wo], arg[o+r*wo:o+(r+1)*wo], base0)
		}
		pl += rows / ho
	}
}

// pool2x2RowGo pools one output row whose row pair's top row starts at
// x[r0], into out and idx (offsets relative to x plus base0).
func pool2x2RowGo(x []float32, r0, w int, out []float32, idx []int32, base0 int) {
	wo := len(out)
	top, bot := x[r0:r0+2*wo], x[r0+w:r0+w+2*wo]
	idx = idx[:wo]
	for ox := range out {
		t0, t1 := int64(orderKey(top[2*ox])), int64(orderKey(top[2*ox+1]))
		b0, b1 := int64(orderKey(bot[2*ox])), int64(orderKey(bot[2*ox+1]))
		// Window positions 0, 1 (top row), 2, 3 (bottom row).
		k, i := pick(t0, 0, t1, 1)
		k, i = pick(k, i, b0, 2)
		_, i = pick(k, i, b1, 3)
		at := r0 + 2*ox + int(i&1) + int(i>>1)*w
		out[ox], idx[ox] = x[at], int32(base0+at)
	}
}

// pool2x2Vector lets forward2x2 use pool2x2Rows; tests turn it off to
// compare with the Go loop.
var pool2x2Vector = true

// pick returns (kb, ib) if kb > ka, else (ka, ia), with a mask instead of
// a branch (keys are int32 values, so the difference cannot overflow).
func pick(ka, ia, kb, ib int64) (int64, int64) {
	t := (ka - kb) >> 63 // −1 when kb > ka
	return ka ^ ((ka ^ kb) & t), ia ^ ((ia ^ ib) & t)
}

// orderKey maps a float32 to an int32 in the same order (for non-NaN
// values): non-negative floats keep their bits, negative ones have their
// magnitude bits flipped, and 1 is added to negatives so that −0 and +0 get
// the same key, 0.
func orderKey(v float32) int32 {
	b := int32(math.Float32bits(v))
	s := b >> 31 // −1 for negatives, 0 otherwise
	return (b ^ int32(uint32(s)>>1)) - s
}
