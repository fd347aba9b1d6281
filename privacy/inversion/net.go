package inversion

import (
	"fmt"
	"math"

	"github.com/trellis-fl/trellis/nn"
)

// Net is the attacker's float64 copy of a shared dense model (logreg, or
// an MLP of ReLU layers) at the parameters the victim started its round
// from. The attacker knows them: in the first round every node starts
// from the same seed, and later a neighbour that sees the node's start
// (or an update-sharing strategy) does too.
//
// Layer l computes a_l = W_l h_{l−1} + b_l, h_l = relu(a_l) for hidden
// layers, the logits z = a_L for the last; the flat layout of parameters
// and gradients is nn's: per layer W ([out, in], row-major) then b.
type Net struct {
	// Sizes is the width of each activation: the input, each hidden layer,
	// the classes.
	Sizes []int
	w, b  [][]float64
	// off[l] is where layer l's W starts in the flat vector; off[L] the
	// length.
	off []int
}

// NetOf copies model m's parameters. Logreg and an MLP under the
// softmax head qualify, the MLP without dropout (its masks are random
// and the attacker does not see them) or batch norm (its gradient couples
// the batch's samples: not modelled here).
func NetOf(m *nn.Model) (*Net, error) {
	s := m.Spec()
	if s.Head != "" && s.Head != "softmax" {
		return nil, fmt.Errorf("inversion: head %q, want softmax cross-entropy", s.Head)
	}
	sizes := []int{m.InputSize()}
	switch s.Kind {
	case "logreg":
	case "mlp":
		if s.BatchNorm || s.Dropout > 0 {
			return nil, fmt.Errorf("inversion: MLP with batch norm or dropout: not modelled")
		}
		sizes = append(sizes, s.Hidden...)
	default:
		return nil, fmt.Errorf("inversion: model kind %q, want logreg or mlp", s.Kind)
	}
	sizes = append(sizes, m.Classes())
	n := &Net{Sizes: sizes}
	p := m.Params()
	at := 0
	for l := 1; l < len(sizes); l++ {
		in, out := sizes[l-1], sizes[l]
		n.off = append(n.off, at)
		if at+out*in+out > len(p) {
			break
		}
		n.w = append(n.w, widen(p[at:at+out*in]))
		n.b = append(n.b, widen(p[at+out*in:at+out*in+out]))
		at += out*in + out
	}
	if at != len(p) || len(n.w) != len(sizes)-1 {
		return nil, fmt.Errorf("inversion: model %s has %d parameters, its layers %v take %d", s.Kind, len(p), sizes, at)
	}
	n.off = append(n.off, at)
	return n, nil
}

func widen(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// flat is the net's parameters as one vector in nn's layout.
func (n *Net) flat() []float64 {
	theta := make([]float64, n.NumParams())
	for l := range n.Layers() {
		copy(n.WeightGrad(theta, l), n.w[l])
		copy(n.BiasGrad(theta, l), n.b[l])
	}
	return theta
}

// at is the same architecture at parameters theta (nn's flat layout),
// whose blocks it views rather than copies: a simulated local step
// writes the next theta, and the net at it costs no allocation of
// weights.
func (n *Net) at(theta []float64) *Net {
	o := &Net{Sizes: n.Sizes, off: n.off, w: make([][]float64, n.Layers()), b: make([][]float64, n.Layers())}
	for l := range n.Layers() {
		o.w[l], o.b[l] = n.WeightGrad(theta, l), n.BiasGrad(theta, l)
	}
	return o
}

// Layers is the number of linear layers L.
func (n *Net) Layers() int { return len(n.w) }

// NumParams is the length of the flat parameter (and gradient) vector.
func (n *Net) NumParams() int { return n.off[len(n.off)-1] }

// Input and Classes are the first and last widths.
func (n *Net) Input() int   { return n.Sizes[0] }
func (n *Net) Classes() int { return n.Sizes[len(n.Sizes)-1] }

// WeightGrad and BiasGrad are layer l's (0-based) blocks of a flat
// gradient g: W's [out, in] row-major, then b.
func (n *Net) WeightGrad(g []float64, l int) []float64 {
	return g[n.off[l] : n.off[l]+n.Sizes[l]*n.Sizes[l+1]]
}
func (n *Net) BiasGrad(g []float64, l int) []float64 {
	lo := n.off[l] + n.Sizes[l]*n.Sizes[l+1]
	return g[lo : lo+n.Sizes[l+1]]
}

// trace is one sample's forward and backward pass: h[l] the activations
// (h[0] the input, h[L] the softmax probabilities), d[l] = ∂loss/∂a_{l+1}
// (d[L−1] = p − onehot(y)).
type trace struct {
	h, d [][]float64
}

func (n *Net) newTrace() *trace {
	t := &trace{h: make([][]float64, len(n.Sizes)), d: make([][]float64, n.Layers())}
	for l, s := range n.Sizes {
		t.h[l] = make([]float64, s)
		if l > 0 {
			t.d[l-1] = make([]float64, s)
		}
	}
	return t
}

// run fills t for input x and label y.
func (n *Net) run(t *trace, x []float64, y int) {
	copy(t.h[0], x)
	L := n.Layers()
	for l := 0; l < L; l++ {
		in, out := n.Sizes[l], n.Sizes[l+1]
		a := t.h[l+1]
		for o := range out {
			a[o] = n.b[l][o] + dot(n.w[l][o*in:(o+1)*in], t.h[l])
			if l < L-1 && a[o] < 0 {
				a[o] = 0
			}
		}
	}
	softmaxInPlace(t.h[L])
	e := t.d[L-1]
	copy(e, t.h[L])
	e[y]--
	for l := L - 1; l > 0; l-- {
		in, out := n.Sizes[l], n.Sizes[l+1]
		prev := t.d[l-1]
		clear(prev)
		for o := range out {
			axpy(prev, t.d[l][o], n.w[l][o*in:(o+1)*in])
		}
		for i, h := range t.h[l] {
			if h <= 0 {
				prev[i] = 0
			}
		}
	}
}

// Gradient is the gradient of the mean softmax cross-entropy over the
// batch x (len(y) samples of Input() values, sample-major) with labels y,
// in the flat layout: what nn.Model.Gradient computes, in float64.
func (n *Net) Gradient(x []float64, y []int) []float64 {
	g := make([]float64, n.NumParams())
	t := n.newTrace()
	inv := 1 / float64(len(y))
	D := n.Input()
	for i, c := range y {
		n.run(t, x[i*D:(i+1)*D], c)
		n.accumulate(g, t, inv)
	}
	return g
}

// accumulate adds s·(δ_l h_{l−1}ᵀ, δ_l) of one sample's trace to g.
func (n *Net) accumulate(g []float64, t *trace, s float64) {
	for l := range n.Layers() {
		in := n.Sizes[l]
		gw, gb := n.WeightGrad(g, l), n.BiasGrad(g, l)
		for o, d := range t.d[l] {
			if d == 0 {
				continue
			}
			axpy(gw[o*in:(o+1)*in], s*d, t.h[l])
			gb[o] += s * d
		}
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// axpy is y += a·x.
func axpy(y []float64, a float64, x []float64) {
	if a == 0 {
		return
	}
	for i, v := range x {
		y[i] += a * v
	}
}

func softmaxInPlace(z []float64) {
	m := z[0]
	for _, v := range z[1:] {
		m = math.Max(m, v)
	}
	var s float64
	for i, v := range z {
		z[i] = math.Exp(v - m)
		s += z[i]
	}
	for i := range z {
		z[i] /= s
	}
}
