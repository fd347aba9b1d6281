package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/vec"
)

// linear is y = x Wᵀ + b with W stored [out, in] as in PyTorch, so that
// weights exported to or compared with PyTorch need no transposition.
type linear struct {
	in, out int
	w, b    []float32 // views into the flat parameters
	gw, gb  []float32 // views into the flat gradients
	x       []float32 // input of the last forward (owned by the previous layer)
	y, dx   []float32
	needDx  bool
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
	l.gw, l.gb = g[:nw], g[nw:nw+l.out]
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
	p.eng.Sgemm(true, false, l.out, l.in, n, 1, dy, l.out, l.x, l.in, 0, l.gw, l.in)
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
