package consensus

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/internal/seed"
)

const (
	dpLaplace = 0xd901 // η_i(k) of the Laplace methods, under seed.Noise
	dpGauss   = 0xd902 // η_i of the Gaussian gossip, under seed.Noise
	dpPairs   = 0xd903 // the randomized gossip's edge schedule, under seed.Strategy
)

// laplace draws from Lap(0, b) by inversion.
func laplace(r *rand.Rand, b float64) float64 {
	u := r.Float64() - 0.5 // in [−0.5, 0.5)
	if u < 0 {
		return b * math.Log1p(2*u) // log(1 − 2|u|) ≤ 0, sign −
	}
	return -b * math.Log1p(-2*u)
}

// LaplaceDP holds the parameters of the two Laplace methods of Table 3.
// Node i's noise at iteration k is η_i(k) ~ Lap(c q^k) (decreasing
// variance, constant step), and i sends θ_i(k) = x_i(k) + η_i(k).
type LaplaceDP struct {
	Epsilon float64 // the ε of ε-DP of every x_i(0)
	Delta   float64 // adjacency: x_i(0) and x'_i(0) differ by at most Delta (0 means 1)
	Q       float64 // decay q of the noise scale, in (0, 1) (0 means 0.5)
	// S is ref. [112]'s noise gain s ∈ (0, 2) with |s − 1| < q (0 means 1);
	// H its step h ∈ (0, 1/d_max) (0 means 1/(d_max + 1)). Unused by DPHuang.
	S, H float64
	// Shift, if set, is added to the drawn η_i(k): the privacy test uses it
	// to couple two executions (nil in any real run).
	Shift func(i, k int) float64
}

func (d LaplaceDP) delta() float64 {
	if d.Delta == 0 {
		return 1
	}
	return d.Delta
}

func (d LaplaceDP) q() float64 {
	if d.Q == 0 {
		return 0.5
	}
	return d.Q
}

func (d LaplaceDP) s() float64 {
	if d.S == 0 {
		return 1
	}
	return d.S
}

// Scale is c, the noise scale at k = 0, for ε-DP of x_i(0) against an
// adversary that sees every message. Moving x_i(0) by δ moves x_i(k) by
// (1 − s)^k δ (x(k+1) = (I − hL)θ(k) + (s − 1)η(k)), which the
// coupled noise η'_i(k) = η_i(k) − (1 − s)^k δ hides from every message;
// the Laplace densities of the two noise paths differ by a factor of at
// most exp(Σ_k |1 − s|^k δ / (c q^k)) = exp(δ q / (c (q − |s − 1|))), the
// ε of ref. [112] (our derivation; TestLaplaceCoupling checks it). So
// c = δ q / (ε (q − |s − 1|)), which is δ/ε for s = 1: then only η_i(0)
// protects x_i(0), as in ref. [111]'s mechanism, which uses c = δ/ε.
func (d LaplaceDP) Scale() (float64, error) {
	q, s := d.q(), d.s()
	if !(d.Epsilon > 0) || q <= 0 || q >= 1 || s <= 0 || s >= 2 || math.Abs(s-1) >= q {
		return 0, fmt.Errorf("consensus: Laplace DP needs ε > 0, 0 < q < 1, 0 < s < 2, |s−1| < q; have ε=%v q=%v s=%v", d.Epsilon, q, s)
	}
	return d.delta() * q / (d.Epsilon * (q - math.Abs(s-1))), nil
}

// ConvergenceVar is the variance of ref. [112]'s convergence point around
// x̄ after iters iterations on n nodes: (s²/n²) Σ_i Σ_{k<iters} 2 c² q^{2k}
// = 2 s² c² (1 − q^{2·iters}) / (n (1 − q²)), because 1ᵀ(sI − hL) = s 1ᵀ.
// On a regular graph with h = 1/(d+1) it is also DPHuang's.
func (d LaplaceDP) ConvergenceVar(n, iters int) (float64, error) {
	c, err := d.Scale()
	if err != nil {
		return 0, err
	}
	q, s := d.q(), d.s()
	return 2 * s * s * c * c * (1 - math.Pow(q, 2*float64(iters))) / (float64(n) * (1 - q*q)), nil
}

// noise draws η(k) for every node.
func (d LaplaceDP) noise(p *Problem, c float64, k int, eta []float64) {
	b := c * math.Pow(d.q(), float64(k))
	for i := range eta {
		eta[i] = laplace(seed.Stream(p.Seed, seed.Noise, dpLaplace, uint64(i), uint64(k)), b)
		if d.Shift != nil {
			eta[i] += d.Shift(i, k)
		}
	}
}

// DPHuang is ref. [111]'s distributed mechanism (the survey, §3.2.2,
// Table 3: states perturbed by Laplace noise of decreasing variance,
// constant weights): node i sends θ_i(k) = x_i(k) + η_i(k) and sets
//
//	x_i(k+1) = (1/(d_i + 1)) Σ_{j ∈ N_i ∪ {i}} θ_j(k)
//
// (equal weights on its own and its neighbours' noisy states, a recorded
// choice). The weights are row-stochastic only, so on an irregular graph
// the run agrees on a point whose mean is the (d_i + 1)-weighted average,
// not x̄: ref. [112]'s correction is what makes the expectation exact.
func DPHuang(p *Problem, d LaplaceDP) (*Trace, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	d.S = 1
	c, err := d.Scale()
	if err != nil {
		return nil, err
	}
	return d.run(p, c, func(next, _, th, _ []float64) {
		for i := range next {
			s := th[i]
			for _, j := range p.G.Out(i) {
				s += th[j]
			}
			next[i] = s / float64(p.G.Degree(i)+1)
		}
	}), nil
}

// DPNozari is ref. [112]'s algorithm (the survey, §3.2.2, Table 3: "exact
// expected value of convergence"): node i sends θ_i(k) = x_i(k) + η_i(k)
// and sets
//
//	x_i(k+1) = x_i(k) + h Σ_{j∈N_i} (θ_j(k) − θ_i(k)) + s η_i(k)
//
// so x(k+1) = (I − hL) x(k) + (sI − hL) η(k), 1ᵀ(I − hL) = 1ᵀ, and the
// agreed point is x̄ + (s/n) Σ_i Σ_k η_i(k): unbiased, with the variance
// of ConvergenceVar.
func DPNozari(p *Problem, d LaplaceDP) (*Trace, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	c, err := d.Scale()
	if err != nil {
		return nil, err
	}
	dmax := maxDegree(p.G)
	h := d.H
	if h == 0 {
		h = 1 / float64(dmax+1)
	}
	if h <= 0 || h*float64(dmax) >= 1 {
		return nil, fmt.Errorf("consensus: step h = %v, want 0 < h < 1/d_max = %v", h, 1/float64(dmax))
	}
	s := d.s()
	return d.run(p, c, func(next, x, th, eta []float64) {
		for i := range next {
			lap := 0.0
			for _, j := range p.G.Out(i) {
				lap += th[j] - th[i]
			}
			next[i] = x[i] + h*lap + s*eta[i]
		}
	}), nil
}

// run is the iteration both Laplace methods share: at each k every node
// draws η_i(k) (scale c·q^k), sends θ_i(k) = x_i(k) + η_i(k) (recorded),
// and update writes the next states from the current ones, the θ and the η.
func (d LaplaceDP) run(p *Problem, c float64, update func(next, x, th, eta []float64)) *Trace {
	n := p.G.N()
	x := append([]float64(nil), p.X0...)
	th, eta, next := make([]float64, n), make([]float64, n), make([]float64, n)
	t := newTrace(p)
	t.observe(x)
	for k := range p.Iters {
		d.noise(p, c, k, eta)
		for i := range n {
			th[i] = x[i] + eta[i]
		}
		t.broadcast(p, k, th)
		update(next, x, th, eta)
		x, next = next, x
		t.observe(x)
	}
	t.finish(x)
	return t
}
