package inversion

import "math"

// Unrolled is the gradient-matching objective against an update of
// several local steps ("Inverting gradients", Geiping et al. 2020, §5,
// ref. [25]: the attacker simulates the victim's local training on the
// dummies and matches the simulated update to the observed one, rather
// than reading the update as one gradient). The victim ran Steps SGD
// steps of rate LR from the start model θ_0, step t on Batch samples:
//
//	θ_{t+1} = θ_t − LR·∇L_t(θ_t),  Δ = θ_E − θ_0,
//
// L_t the mean loss of the dummies [t·Batch mod n, +Batch) (n dummies:
// Batch = n is E steps on one batch, n = E·Batch is E distinct batches
// in order, as Update takes them). J(x̂) = 1 − cos(Δ(x̂), u) over all
// parameters. Its input gradient is exact reverse mode through the
// unrolled steps: with λ_E = ∂J/∂Δ,
//
//	∂J/∂x̂_t += −LR·(∂∇L_t/∂x̂_t)ᵀ λ_{t+1}   (Matcher's double backprop, R = −LR·λ_{t+1})
//	λ_t = λ_{t+1} − LR·H_t λ_{t+1}          (H_t the Hessian of L_t at θ_t: hvpAccumulate)
//
// At Steps = 1 it is Matcher's objective against −u/LR (the cosine does
// not see the positive scale).
type Unrolled struct {
	net          *Net
	theta0       []float64
	target       []float64
	tnorm        float64
	lr           float64
	steps, batch int
	y            []int
	// thetas[t] is θ_t; nets[t] the net viewing it; traces[t][j] step t's
	// j-th sample's pass.
	thetas [][]float64
	nets   []*Net
	traces [][]*trace
	lam, r []float64
	hv     []float64
	sc     *hvpScratch
	u, t   [][]float64
	dxs    []float64
}

// NewUnrolled returns the objective for dummy labels y against the
// observed update (w' − w, not divided by anything) after steps local
// steps of rate lr on batch samples each.
func NewUnrolled(net *Net, update []float64, y []int, lr float64, steps, batch int) *Unrolled {
	P := net.NumParams()
	m := &Unrolled{net: net, theta0: net.flat(), target: update, tnorm: math.Sqrt(dot(update, update)),
		lr: lr, steps: steps, batch: batch, y: y,
		lam: make([]float64, P), r: make([]float64, P), hv: make([]float64, P),
		sc: net.newHVPScratch(), dxs: make([]float64, net.Input())}
	for t := range steps + 1 {
		th := m.theta0
		if t > 0 {
			th = make([]float64, P)
		}
		m.thetas = append(m.thetas, th)
		m.nets = append(m.nets, net.at(th))
		if t < steps {
			var tr []*trace
			for range batch {
				tr = append(tr, net.newTrace())
			}
			m.traces = append(m.traces, tr)
		}
	}
	for _, s := range net.Sizes[1:] {
		m.u, m.t = append(m.u, make([]float64, s)), append(m.t, make([]float64, s))
	}
	return m
}

// sample is the dummy index of step t's j-th sample.
func (m *Unrolled) sample(t, j int) int { return (t*m.batch + j) % len(m.y) }

// Simulate runs the victim's steps on x and returns the simulated update
// Δ = θ_E − θ_0 (a fresh slice).
func (m *Unrolled) Simulate(x []float64) []float64 {
	m.forward(x)
	d := make([]float64, len(m.theta0))
	for i, v := range m.thetas[m.steps] {
		d[i] = v - m.theta0[i]
	}
	return d
}

// forward fills thetas and traces for x.
func (m *Unrolled) forward(x []float64) {
	D := m.net.Input()
	inv := 1 / float64(m.batch)
	for t := range m.steps {
		n, next := m.nets[t], m.thetas[t+1]
		clear(m.hv)
		for j, tr := range m.traces[t] {
			i := m.sample(t, j)
			n.run(tr, x[i*D:(i+1)*D], m.y[i])
			n.accumulate(m.hv, tr, inv)
		}
		for k, g := range m.hv {
			next[k] = m.thetas[t][k] - m.lr*g
		}
	}
}

// Eval returns J at x (len(y) samples, sample-major) and writes ∂J/∂x into
// dx (same shape).
func (m *Unrolled) Eval(x, dx []float64) float64 {
	m.forward(x)
	clear(dx)
	// Δ, into lam for now.
	last := m.thetas[m.steps]
	for i, v := range last {
		m.lam[i] = v - m.theta0[i]
	}
	dd, dt := dot(m.lam, m.lam), dot(m.lam, m.target)
	dn := math.Sqrt(dd)
	if dn == 0 || m.tnorm == 0 {
		return 1
	}
	j := 1 - dt/(dn*m.tnorm)
	a, b := -1/(dn*m.tnorm), dt/(dd*dn*m.tnorm)
	for i, d := range m.lam {
		m.lam[i] = a*m.target[i] + b*d
	}
	D := m.net.Input()
	inv := 1 / float64(m.batch)
	for t := m.steps - 1; t >= 0; t-- {
		n := m.nets[t]
		for i, l := range m.lam {
			m.r[i] = -m.lr * l
		}
		for k, tr := range m.traces[t] {
			i := m.sample(t, k)
			n.inputVJP(tr, m.r, m.dxs, inv, m.u, m.t)
			axpy(dx[i*D:(i+1)*D], 1, m.dxs)
		}
		if t == 0 {
			break
		}
		clear(m.hv)
		for _, tr := range m.traces[t] {
			n.hvpAccumulate(tr, m.lam, m.hv, inv, m.sc)
		}
		axpy(m.lam, -m.lr, m.hv)
	}
	return j
}
