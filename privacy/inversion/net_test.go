package inversion

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trellis-fl/trellis/nn"
)

// TestGradientMatchesNNAndFiniteDifferences holds the attacker's float64
// gradient to nn's float32 one (two implementations) and to central
// finite differences of the loss in float64, for logreg and a two-hidden-
// layer MLP on a random batch.
func TestGradientMatchesNNAndFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, spec := range []nn.Spec{
		{Kind: "logreg", Input: []int{13}, Classes: 4},
		{Kind: "mlp", Input: []int{13}, Hidden: []int{9, 7}, Classes: 4},
	} {
		const b = 3
		m, net := build(t, spec, 7, b)
		x := randomInputs(r, b*13)
		y := []int{0, 3, 3}
		x32 := make([]float32, len(x))
		for i, v := range x {
			x32[i] = float32(v)
			x[i] = float64(x32[i])
		}
		if _, err := m.Gradient(x32, y, b, nil); err != nil {
			t.Fatal(err)
		}
		g := net.Gradient(x, y)
		for i, want := range m.Grads() {
			if math.Abs(g[i]-float64(want)) > 1e-6+1e-5*math.Abs(g[i]) {
				t.Fatalf("%s: gradient %d: attacker %.8g, nn %.8g", spec.Kind, i, g[i], want)
			}
		}
		for i := 0; i < net.NumParams(); i += 5 {
			l, w := net.locate(i)
			old := w[0]
			const h = 1e-6
			w[0] = old + h
			up := loss(net, x, y)
			w[0] = old - h
			down := loss(net, x, y)
			w[0] = old
			if fd := (up - down) / (2 * h); math.Abs(fd-g[i]) > 1e-7 {
				t.Fatalf("%s: layer %d parameter %d: gradient %.10g, finite difference %.10g", spec.Kind, l, i, g[i], fd)
			}
		}
	}
}

// locate returns flat parameter i's layer and a one-element view of it.
func (n *Net) locate(i int) (int, []float64) {
	for l := range n.Layers() {
		lo, nw := n.off[l], n.Sizes[l]*n.Sizes[l+1]
		switch {
		case i < lo+nw:
			return l, n.w[l][i-lo : i-lo+1]
		case i < n.off[l+1]:
			return l, n.b[l][i-lo-nw : i-lo-nw+1]
		}
	}
	panic("parameter out of range")
}

// TestMatcherGradientIsExact holds the hand-written double
// backpropagation of the cosine gradient-matching objective to central
// finite differences in the inputs.
func TestMatcherGradientIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, spec := range []nn.Spec{
		{Kind: "logreg", Input: []int{11}, Classes: 5},
		{Kind: "mlp", Input: []int{11}, Hidden: []int{8}, Classes: 5},
		{Kind: "mlp", Input: []int{11}, Hidden: []int{9, 6}, Classes: 5},
	} {
		_, net := build(t, spec, 5, 4)
		y := []int{1, 4, 1}
		target := net.Gradient(randomInputs(r, 3*11), y)
		m := NewMatcher(net, target, y)
		x := randomInputs(r, 3*11)
		dx := make([]float64, len(x))
		m.Eval(x, dx)
		scratch := make([]float64, len(x))
		for i := range x {
			const h = 1e-6
			old := x[i]
			x[i] = old + h
			up := m.Eval(x, scratch)
			x[i] = old - h
			down := m.Eval(x, scratch)
			x[i] = old
			if fd := (up - down) / (2 * h); math.Abs(fd-dx[i]) > 1e-7+1e-5*math.Abs(fd) {
				t.Fatalf("%s %v: ∂J/∂x[%d] = %.10g, finite difference %.10g", spec.Kind, spec.Hidden, i, dx[i], fd)
			}
		}
	}
}
