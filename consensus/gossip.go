package consensus

import (
	"fmt"
	"math"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/topology"
)

// GaussianGossip is ref. [115]'s noise-then-gossip averaging (the survey,
// §3.2.2, Table 3: "[115] (Algs. 1–2), Gaussian constant, composition
// range T, O(1/(n²ε)) in consensus error"): every node adds Gaussian noise
// once, x_v(0) = x_v + η_v with η_v ~ N(0, σ²), then the nodes gossip for
// T iterations without further noise:
//
//   - Alg. 1 (synchronous): x(t+1) = W x(t), W the Metropolis–Hastings
//     weights;
//   - Alg. 2 (randomized): an iteration is |E| activations of an edge
//     {u, v} drawn uniformly, each setting x_u, x_v ← (x_u + x_v)/2.
//
// Privacy is ref. [115]'s pairwise network DP in Rényi form: what v
// receives is linear in x + η, each message x_w(t) = M_t[w,:](x + η) a
// Gaussian mechanism on x_u with sensitivity Δ|M_t[w,u]| and noise
// σ‖M_t[w,:]‖, so by composition the loss from u to v is
//
//	ε_{u→v} = (α Δ² / (2σ²)) Σ_t Σ_{messages x_w(t) to v} M_t[w,u]² / ‖M_t[w,:]‖²
//
// and σ is set so that the mean over ordered pairs u ≠ v is Epsilon
// (PairFactor computes the sum). M_t is W^t (Alg. 1) or the product of the
// averaging steps so far (Alg. 2). The agreed value is x̄ + (1/n) Σ η_v,
// whose mean squared error σ²/n, with σ² ∝ T d/(n ε), gives the survey's
// 1/(n² ε).
type GaussianGossip struct {
	Epsilon    float64 // mean pairwise Rényi-DP ε of order Alpha
	Alpha      float64 // Rényi order (0 means 2)
	Delta      float64 // adjacency bound on x_u (0 means 1)
	Randomized bool    // Alg. 2 instead of Alg. 1
}

func (g GaussianGossip) alpha() float64 {
	if g.Alpha == 0 {
		return 2
	}
	return g.Alpha
}

func (g GaussianGossip) delta() float64 {
	if g.Delta == 0 {
		return 1
	}
	return g.Delta
}

// schedule returns, for Alg. 2, the activated edges of the run in order.
func (g GaussianGossip) schedule(p *Problem) []topology.Edge {
	if !g.Randomized {
		return nil
	}
	es := p.G.Edges()
	r := seed.Stream(p.Seed, seed.Strategy, dpPairs)
	out := make([]topology.Edge, 0, p.Iters*len(es))
	for range p.Iters * len(es) {
		out = append(out, es[r.IntN(len(es))])
	}
	return out
}

// PairFactor is the mean over ordered pairs u ≠ v of
// Σ_t Σ_{messages x_w(t) to v} M_t[w,u]²/‖M_t[w,:]‖², so that the mean
// pairwise ε is α Δ² PairFactor / (2σ²). It depends on the graph, T and,
// for Alg. 2, the schedule; not on the values or the noise.
func (g GaussianGossip) PairFactor(p *Problem) (float64, error) {
	if err := p.check(); err != nil {
		return 0, err
	}
	n := p.G.N()
	if n < 2 {
		return 0, fmt.Errorf("consensus: pairwise privacy needs n ≥ 2")
	}
	m := make([][]float64, n) // M_t, row by row
	for i := range n {
		m[i] = make([]float64, n)
		m[i][i] = 1
	}
	// acc[v][u] accumulates the terms of ε_{u→v}; u = v is dropped at the end.
	acc := make([][]float64, n)
	for v := range n {
		acc[v] = make([]float64, n)
	}
	add := func(w, v int) { // v receives x_w(t) = M_t[w,:](x+η)
		nn := 0.0
		for _, c := range m[w] {
			nn += c * c
		}
		for u, c := range m[w] {
			acc[v][u] += c * c / nn
		}
	}
	if !g.Randomized {
		w, err := Metropolis(p.G)
		if err != nil {
			return 0, err
		}
		for range p.Iters {
			for v := range n {
				for _, u := range p.G.Out(v) {
					add(u, v)
				}
			}
			next := make([][]float64, n)
			for i := range n {
				next[i] = make([]float64, n)
				for c := range n {
					s := w.Self[i] * m[i][c]
					for q, j := range p.G.Out(i) {
						s += w.Nbr[i][q] * m[j][c]
					}
					next[i][c] = s
				}
			}
			m = next
		}
	} else {
		for _, e := range g.schedule(p) {
			add(e.To, e.From)
			add(e.From, e.To)
			for c := range n {
				a := (m[e.From][c] + m[e.To][c]) / 2
				m[e.From][c], m[e.To][c] = a, a
			}
		}
	}
	s := 0.0
	for v := range n {
		for u := range n {
			if u != v {
				s += acc[v][u]
			}
		}
	}
	return s / float64(n*(n-1)), nil
}

// Sigma is the noise standard deviation that makes the mean pairwise ε
// equal to Epsilon on this problem.
func (g GaussianGossip) Sigma(p *Problem) (float64, error) {
	if !(g.Epsilon > 0) {
		return 0, fmt.Errorf("consensus: ε = %v, want > 0", g.Epsilon)
	}
	f, err := g.PairFactor(p)
	if err != nil {
		return 0, err
	}
	return g.delta() * math.Sqrt(g.alpha()*f/(2*g.Epsilon)), nil
}

// Run runs the method with the σ of Sigma.
func (g GaussianGossip) Run(p *Problem) (*Trace, error) {
	sigma, err := g.Sigma(p)
	if err != nil {
		return nil, err
	}
	return g.RunSigma(p, sigma)
}

// RunSigma runs the method with noise σ given.
func (g GaussianGossip) RunSigma(p *Problem, sigma float64) (*Trace, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	n := p.G.N()
	x := make([]float64, n)
	for i := range n {
		x[i] = p.X0[i] + sigma*seed.Stream(p.Seed, seed.Noise, dpGauss, uint64(i)).NormFloat64()
	}
	t := newTrace(p)
	t.observe(x)
	if !g.Randomized {
		w, err := Metropolis(p.G)
		if err != nil {
			return nil, err
		}
		for k := range p.Iters {
			t.broadcast(p, k, x)
			x = w.Mix(x)
			t.observe(x)
		}
	} else {
		sched := g.schedule(p)
		per := p.G.NumEdges()
		for k := range p.Iters {
			for _, e := range sched[k*per : (k+1)*per] {
				if p.Record {
					t.Msgs = append(t.Msgs,
						Message{Iter: k, From: e.From, To: e.To, Kind: State, Value: x[e.From]},
						Message{Iter: k, From: e.To, To: e.From, Kind: State, Value: x[e.To]})
				}
				a := (x[e.From] + x[e.To]) / 2
				x[e.From], x[e.To] = a, a
			}
			t.observe(x)
		}
	}
	t.finish(x)
	return t, nil
}
