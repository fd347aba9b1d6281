package consensus

import (
	"fmt"

	"github.com/trellis-fl/trellis/internal/seed"
)

const offStream = 0x0ff5 // u_i(k) under seed.Strategy

// Offsets is the zero-sum offset method of ref. [169] (the survey,
// §3.4.2, Table 6: "zero-sum deterministic offsets"): node i adds offsets
// u_i(0), …, u_i(L−1) to its own state in the first L iterations, with
// Σ_k u_i(k) = 0 exactly, and otherwise runs plain consensus on what it
// sends:
//
//	x_i(0) = v_i + u_i(0),   x_i(k+1) = Σ_j w_ij x_j(k) + u_i(k+1)
//
// (u_i(k) = 0 for k ≥ L). W is doubly stochastic, so Σ_i x_i(k) changes by
// Σ_i u_i(k) each step and is back to Σ_i v_i after L steps: the average is
// kept exactly. u_i(0..L−2) are drawn uniformly from [−U, U] and u_i(L−1)
// is minus their sum (a recorded choice).
type Offsets struct {
	L int     // iterations that carry an offset (0 means 5; 1 means none)
	U float64 // offsets' range (0 means 10)
}

func (o Offsets) l() int {
	if o.L == 0 {
		return 5
	}
	return o.L
}

func (o Offsets) u() float64 {
	if o.U == 0 {
		return 10
	}
	return o.U
}

// offsets returns u_i(0..L−1) of node i.
func (o Offsets) offsets(sd uint64, i int) []float64 {
	l := o.l()
	u := make([]float64, l)
	r := seed.Stream(sd, seed.Strategy, offStream, uint64(i))
	s := 0.0
	for k := range l - 1 {
		u[k] = (2*r.Float64() - 1) * o.u()
		s += u[k]
	}
	u[l-1] = -s
	return u
}

// Run runs the method; the nodes' estimates are their states x_i(k).
func (o Offsets) Run(p *Problem) (*Trace, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if o.l() < 1 || !(o.u() > 0) {
		return nil, fmt.Errorf("consensus: offsets over L = %d iterations of range %v; want L ≥ 1, U > 0", o.l(), o.u())
	}
	w, err := Metropolis(p.G)
	if err != nil {
		return nil, err
	}
	n := p.G.N()
	u := make([][]float64, n)
	x := make([]float64, n)
	for i := range n {
		u[i] = o.offsets(p.Seed, i)
		x[i] = p.X0[i] + u[i][0]
	}
	t := newTrace(p)
	t.observe(x)
	for k := range p.Iters {
		t.broadcast(p, k, x)
		x = w.Mix(x)
		if k+1 < o.l() {
			for i := range n {
				x[i] += u[i][k+1]
			}
		}
		t.observe(x)
	}
	t.finish(x)
	return t, nil
}
