package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/internal/gemm"
	"github.com/trellis-fl/trellis/internal/memsize"
	"github.com/trellis-fl/trellis/vec"
)

// linear is y = x Wᵀ + b with W stored [out, in] as in PyTorch, so that
// weights exported to or compared with PyTorch need no transposition.
type linear struct {
	in, out int
	w, b    []float32 // views into the flat parameters
	gw, gb  []float32 // views into the flat gradients
	x       []float32 // input of the last forward (owned by the previous layer)
	dy      []float32 // output gradient of the last backward (owned by the next layer)
	y, dx   []float32
	needDx  bool
	// bounded: the last backward's gradients are finite by
	// gradsBoundedFinite's bound.
	bounded bool
	// aligned: W's range in the flat vectors starts and ends on a multiple
	// of 8 (set by assemble), so an optimizer step over the other ranges
	// takes the same vector or scalar path, element by element, as one over
	// the whole vector (SGD.stepRange).
	aligned bool
	// deferred: the last backward (a fuseSGD pass) left dW uncomputed; the
	// step applies W ← W − lr·dyᵀx as one product (applyDeferred).
	deferred bool
}

func newLinear(in, out int) *linear { return &linear{in: in, out: out} }

func (l *linear) kind() string      { return fmt.Sprintf("linear %d→%d", l.in, l.out) }
func (l *linear) outShape() []int   { return []int{l.out} }
func (l *linear) paramCount() int   { return l.out*l.in + l.out }
func (l *linear) stateCount() int   { return 0 }
func (l *linear) bufferFloats() int { return len(l.y) + len(l.dx) }

func (l *linear) bind(p, g, _ []float32) {
	nw := l.out * l.in
	l.w, l.b = p[:nw], p[nw:nw+l.out]
	l.gw, l.gb = cut(g, 0, nw), cut(g, nw, nw+l.out)
}

// initParams follows torch.nn.Linear: weights and bias uniform in
// ±1/sqrt(fan_in) (kaiming_uniform with a = sqrt(5)).
func (l *linear) initParams(r *rand.Rand) {
	uniformInit(r, l.w, l.in)
	uniformInit(r, l.b, l.in)
}

func uniformInit(r *rand.Rand, dst []float32, fanIn int) {
	bound := 1 / math.Sqrt(float64(fanIn))
	for i := range dst {
		dst[i] = float32((2*r.Float64() - 1) * bound)
	}
}

func (l *linear) alloc(n int, needDx bool) {
	l.y = grow(l.y, n*l.out)
	l.needDx = needDx
	if needDx {
		l.dx = grow(l.dx, n*l.in)
	}
}

func (l *linear) footprint(n int, needDx bool, fp *footprinter) {
	B, in, out := int64(n), int64(l.in), int64(l.out)
	fp.buffer(memsize.Mul(B, out))
	// forward y = x·Wᵀ, backward dW = dyᵀ·x, and dx = dy·W.
	fp.product(gemm.Product{M: B, N: out, K: in, LDB: in, TransB: true}, gemm.Product{M: out, N: in, K: B, LDB: in})
	if needDx {
		fp.buffer(memsize.Mul(B, in))
		fp.product(gemm.Product{M: B, N: in, K: out, LDB: in})
	}
}

func (l *linear) forward(p *pass, x []float32, n int) []float32 {
	l.x = x
	y := l.y[:n*l.out]
	p.eng.Sgemm(false, true, n, l.out, l.in, 1, x, l.in, l.w, l.in, 0, y, l.out)
	for i := 0; i < n; i++ {
		vec.AddTo(y[i*l.out:(i+1)*l.out], l.b)
	}
	return y
}

func (l *linear) overwritesGrads() {}

func (l *linear) backward(p *pass, dy []float32, n int) []float32 {
	// dW = dyᵀ x ; db = Σ_rows dy ; dx = dy W.
	l.dy = dy[:n*l.out]
	l.bounded = l.gradsBoundedFinite(n)
	l.deferred = p.fuseSGD && l.bounded && l.aligned && gemm.OneKBlock(n)
	if !l.deferred {
		p.eng.Sgemm(true, false, l.out, l.in, n, 1, dy, l.out, l.x, l.in, 0, l.gw, l.in)
	}
	copy(l.gb, dy[:l.out])
	for i := 1; i < n; i++ {
		row := dy[i*l.out : (i+1)*l.out]
		for j, v := range row {
			l.gb[j] += v
		}
	}
	if !l.needDx {
		return nil
	}
	dx := l.dx[:n*l.in]
	p.eng.Sgemm(false, false, n, l.in, l.out, 1, dy, l.out, l.w, l.in, 0, dx, l.in)
	return dx
}

// gradsBoundedFinite reports whether this backward's weight and bias
// gradients are finite by a bound on their inputs, without reading them:
// when every x and dy of the batch is finite, each of dW = dyᵀ x's sums
// has n terms of magnitude at most max|dy|·max|x| (db's, max|dy|), and
// rounding grows a partial sum by at most (1 + 2⁻²⁴) per addition, so
// n·max|dy|·max(max|x|, 1) below half of MaxFloat32 means no sum
// overflows, and finite operands without overflow give no NaN. Reading
// x and dy, n·(in + out) floats, replaces reading dW, in·out: for the
// FEMNIST CNN's 3136→512 layer at batch 32 that is 0.1M instead of 1.6M
// (the scan was 2.7 % of a step). False says nothing: the caller then
// reads the gradients.
func (l *linear) gradsBoundedFinite(n int) bool {
	if n*(l.in+l.out) >= l.in*l.out || len(l.dy) != n*l.out {
		return false
	}
	mx, okx := maxAbs(l.x[:n*l.in])
	my, oky := maxAbs(l.dy)
	return okx && oky && float64(n)*float64(my)*max(float64(mx), 1) < math.MaxFloat32/2
}

// applyDeferred applies plain SGD with rate lr to W after a backward that
// deferred it: W ← W + (−lr)·dyᵀx as one product with beta = 1, so W is
// read and written once, where computing dW and then stepping wrote dW and
// read W and dW again (for the FEMNIST CNN's 3136→512 layer, 19 MB of a
// step's memory traffic). The bits are the unfused step's: dW's product
// has a single k block (gemm.OneKBlock), so each element of dW is one
// accumulator acc, stored as 1·acc, and SGD's vector kernel computes
// w − lr·acc with one fused multiply-add, as the product's update does.
// dW itself is never formed: the layer's weight gradient stays as it was.
func (l *linear) applyDeferred(eng *gemm.Engine, lr float32) {
	n := len(l.dy) / l.out
	eng.Sgemm(true, false, l.out, l.in, n, -lr, l.dy, l.out, l.x[:n*l.in], l.in, 1, l.w, l.in)
	l.deferred = false
}

// maxAbs returns max |v| over x and whether every v is finite, from the
// bits: with the sign cleared, a float's bits order as its magnitude, and
// the infinities and NaNs are the largest.
func maxAbs(x []float32) (float32, bool) {
	var m uint32
	for _, v := range x {
		m = max(m, math.Float32bits(v)&0x7fffffff)
	}
	return math.Float32frombits(m), m < 0x7f800000
}
