package inversion

import "math"

// Matcher is the gradient-matching objective of an optimization attack
// (DLG, Zhu et al. 2019; "Inverting gradients", Geiping et al. 2020): the
// cosine distance J(x̂) = 1 − ⟨G(x̂), T⟩ / (‖G(x̂)‖‖T‖) between the gradient
// G the net gives the dummy batch x̂ (labels fixed) and the observed one T,
// over all parameters. Cosine rather than DLG's squared distance: it does
// not depend on T's scale, which clipping (DP) and the unknown step count
// change. Gradients with respect to x̂ are exact (double backpropagation
// by hand, below), not finite differences.
type Matcher struct {
	net    *Net
	target []float64
	tnorm  float64
	y      []int
	traces []*trace
	g, r   []float64
	// per-sample scratch of InputGrad
	u, t [][]float64
}

// NewMatcher returns the objective for dummy labels y against target.
func NewMatcher(net *Net, target []float64, y []int) *Matcher {
	m := &Matcher{net: net, target: target, tnorm: math.Sqrt(dot(target, target)), y: y,
		g: make([]float64, net.NumParams()), r: make([]float64, net.NumParams())}
	for range y {
		m.traces = append(m.traces, net.newTrace())
	}
	for _, s := range net.Sizes[1:] {
		m.u, m.t = append(m.u, make([]float64, s)), append(m.t, make([]float64, s))
	}
	return m
}

// Eval returns J at x (len(y) samples, sample-major) and writes ∂J/∂x into
// dx (same shape).
func (m *Matcher) Eval(x, dx []float64) float64 {
	n, D := m.net, m.net.Input()
	inv := 1 / float64(len(m.y))
	clear(m.g)
	for i, c := range m.y {
		n.run(m.traces[i], x[i*D:(i+1)*D], c)
		n.accumulate(m.g, m.traces[i], inv)
	}
	gg, gt := dot(m.g, m.g), dot(m.g, m.target)
	gn := math.Sqrt(gg)
	if gn == 0 || m.tnorm == 0 {
		clear(dx)
		return 1
	}
	// R = ∂J/∂G = −T/(‖G‖‖T‖) + ⟨G,T⟩ G/(‖G‖³‖T‖).
	a, b := -1/(gn*m.tnorm), gt/(gg*gn*m.tnorm)
	for i := range m.r {
		m.r[i] = a*m.target[i] + b*m.g[i]
	}
	for i := range m.y {
		n.inputVJP(m.traces[i], m.r, dx[i*D:(i+1)*D], inv, m.u, m.t)
	}
	return 1 - gt/(gn*m.tnorm)
}

// inputVJP writes s·∂⟨r, δ_l h_{l−1}ᵀ, δ_l⟩/∂x for one sample's trace
// into dx (R = r: a vector in the flat parameter layout; u and t are
// scratch of the activations' widths, Sizes[1:]). With the ReLU masks M_l fixed (they are piecewise constant in
// x), δ_l = M_l W_{l+1}ᵀ δ_{l+1} is linear in e = p − y, so
//
//	u_l = R_{W,l} h_{l−1} + R_{b,l},  t_1 = u_1,  t_{l+1} = u_{l+1} + W_{l+1}(M_l t_l)
//
// is the coefficient of de; through the softmax Jacobian, c_z = p⊙t_L −
// p⟨p, t_L⟩; then backward through the forward pass, adding at every
// h_{l−1} the direct term R_{W,l}ᵀ δ_l of the weight gradient.
func (n *Net) inputVJP(tr *trace, r, dx []float64, s float64, mu, mt [][]float64) {
	L := n.Layers()
	for l := range L {
		in, out := n.Sizes[l], n.Sizes[l+1]
		rw, rb := n.WeightGrad(r, l), n.BiasGrad(r, l)
		for o := range out {
			mu[l][o] = rb[o] + dot(rw[o*in:(o+1)*in], tr.h[l])
		}
	}
	copy(mt[0], mu[0])
	for l := 1; l < L; l++ {
		in := n.Sizes[l]
		prev := mt[l-1]
		for i, h := range tr.h[l] {
			if h <= 0 {
				prev[i] = 0
			}
		}
		for o := range n.Sizes[l+1] {
			mt[l][o] = mu[l][o] + dot(n.w[l][o*in:(o+1)*in], prev)
		}
	}
	// c_z, into the last t (it is not needed after).
	p, te := tr.h[L], mt[L-1]
	pt := dot(p, te)
	for k := range te {
		te[k] = p[k] * (te[k] - pt)
	}
	c := te
	for l := L - 1; l >= 0; l-- {
		in := n.Sizes[l]
		var ch []float64
		if l == 0 {
			ch = dx
		} else {
			ch = mu[l-1] // free again: u is read only above
		}
		clear(ch)
		rw := n.WeightGrad(r, l)
		for o := range n.Sizes[l+1] {
			axpy(ch, c[o], n.w[l][o*in:(o+1)*in])
			axpy(ch, tr.d[l][o], rw[o*in:(o+1)*in])
		}
		if l > 0 {
			for i, h := range tr.h[l] {
				if h <= 0 {
					ch[i] = 0
				}
			}
		}
		c = ch
	}
	for i := range dx {
		dx[i] *= s
	}
}
