package consensus

import (
	"fmt"
	"math"

	"github.com/trellis-fl/trellis/internal/seed"
)

const dpDynamic = 0xd904 // η_i(k) of DynamicDP, under seed.Noise

// PlainDynamic runs first-order dynamic average consensus without privacy:
// x_i(0) = r_i(0) and
//
//	x(k+1) = W x(k) + r(k+1) − r(k)
//
// with Metropolis–Hastings weights. W is doubly stochastic, so Σ_i x_i(k) =
// Σ_i r_i(k) at every k: the nodes' mean is r̄(k) exactly, and the
// disagreement around it is driven by the increments' spread. When the
// increments vanish (Converging) the nodes reach r̄(∞); when they do not
// (Ramp) a tracking error stays. Every node sends x_i(k); the first message
// is r_i(0) itself.
func PlainDynamic(p *Problem) (*Trace, error) {
	r, err := p.refs()
	if err != nil {
		return nil, err
	}
	w, err := Metropolis(p.G)
	if err != nil {
		return nil, err
	}
	t := newDynTrace(r)
	x := append([]float64(nil), r[0]...)
	t.observeAt(0, x)
	for k := range p.Iters {
		t.broadcast(p, k, x)
		x = w.Mix(x)
		for i := range x {
			x[i] += r[k+1][i] - r[k][i]
		}
		t.observeAt(k+1, x)
	}
	t.finish(x)
	return t, nil
}

// DynamicDP is our rendering of ref. [113] (the survey, §3.2.2, Table 3:
// dynamic average consensus, states perturbed, Laplace noise of
// *increasing* variance, a *decreasing* step — the weight on neighbouring
// information — and composition over an infinite horizon). Node i draws
// η_i(k) ~ Lap(ν_k), ν_k = ν_0 (k+1)^ς, sends θ_i(k) = x_i(k) + η_i(k),
// and sets
//
//	x_i(k+1) = x_i(k) + γ_k Σ_{j∈N_i} w_ij (θ_j(k) − θ_i(k)) + r_i(k+1) − r_i(k),
//	γ_k = γ_0 (k+1)^−u
//
// with Metropolis–Hastings w_ij. Using its own noisy θ_i (not x_i) is what
// keeps Σ_i x_i(k) = Σ_i r_i(k) exactly (w symmetric), so the noise moves
// only the disagreement, x(k+1) = (I − γ_k L) x(k) − γ_k L η(k) + Δr(k)
// with L = I − W, whose noise term has variance ∝ γ_k² ν_k²: it dies out
// when u > 2ς, while Σ γ_k = ∞ (u ≤ 1) keeps the averaging going.
//
// Privacy of r_i against an adversary that sees every message, for
// signals adjacent when |r'_i(k) − r_i(k)| ≤ Δ ρ^k (every other node's
// the same): the coupled noise η'_i(k) = η_i(k) − (r'_i(k) − r_i(k))
// gives every message the same value (then x'_i(k) − x_i(k) = r'_i(k) −
// r_i(k) at every k), at a Laplace density ratio of at most
// exp(Δ Σ_k ρ^k / ν_k). Scale sets ν_0 so that this is ε. The derivation
// is ours (we could not read [113]'s update rule; see
// docs/methods/p2p-consensus.md for what we took from the survey).
type DynamicDP struct {
	Epsilon float64
	Delta   float64 // Δ (0 means 1)
	// Rho is the adjacency's decay ρ ∈ (0, 1] (0 means 1: signals that
	// differ by up to Δ at every k). With ρ < 1 the series converges for
	// every ς and ε holds over an infinite horizon; with ρ = 1 and ς ≤ 1
	// it diverges, and ε is accounted over the run's Iters.
	Rho float64
	// Growth ς ≥ 0 of the noise scale (0 means 0.2); Decay u ∈ (0, 1] of
	// the step (0 means 0.8); Gamma γ_0 ∈ (0, 1] (0 means 1).
	Growth, Decay, Gamma float64
	// Shift, if set, is added to the drawn η_i(k) (the coupling test).
	Shift func(i, k int) float64
}

func (d DynamicDP) params() (delta, rho, vs, u, g0 float64, err error) {
	delta, rho, vs, u, g0 = d.Delta, d.Rho, d.Growth, d.Decay, d.Gamma
	if delta == 0 {
		delta = 1
	}
	if rho == 0 {
		rho = 1
	}
	if vs == 0 {
		vs = 0.2
	}
	if u == 0 {
		u = 0.8
	}
	if g0 == 0 {
		g0 = 1
	}
	if !(d.Epsilon > 0) || !(delta > 0) || !(rho > 0 && rho <= 1) || !(vs >= 0) || !(u > 0 && u <= 1) || !(g0 > 0 && g0 <= 1) {
		err = fmt.Errorf("consensus: dynamic DP needs ε > 0, Δ > 0, 0 < ρ ≤ 1, ς ≥ 0, 0 < u ≤ 1, 0 < γ_0 ≤ 1; have ε=%v Δ=%v ρ=%v ς=%v u=%v γ_0=%v",
			d.Epsilon, delta, rho, vs, u, g0)
	}
	return
}

// Scale is ν_0 for a run of iters iterations: Δ S / ε with
// S = Σ_k ρ^k (k+1)^−ς, over k < iters when ρ = 1 and over every k ≥ 0
// (summed until the terms fall under 1e-17 of S) when ρ < 1.
func (d DynamicDP) Scale(iters int) (float64, error) {
	delta, rho, vs, _, _, err := d.params()
	if err != nil {
		return 0, err
	}
	s := 0.0
	for k := 0; ; k++ {
		if rho == 1 && k >= iters {
			break
		}
		term := math.Pow(rho, float64(k)) * math.Pow(float64(k+1), -vs)
		s += term
		if rho < 1 && term < 1e-17*s {
			break
		}
	}
	return delta * s / d.Epsilon, nil
}

// schedule returns ν_k and γ_k for k < iters.
func (d DynamicDP) schedule(iters int) (nu, gamma []float64, err error) {
	nu0, err := d.Scale(iters)
	if err != nil {
		return nil, nil, err
	}
	_, _, vs, u, g0, _ := d.params()
	nu, gamma = make([]float64, iters), make([]float64, iters)
	for k := range iters {
		nu[k] = nu0 * math.Pow(float64(k+1), vs)
		gamma[k] = g0 * math.Pow(float64(k+1), -u)
	}
	return nu, gamma, nil
}

// Run runs the method; the trace's errors are tracking errors against
// r̄(k), and Trace.Msgs holds every θ_i(k).
func (d DynamicDP) Run(p *Problem) (*Trace, error) {
	r, err := p.refs()
	if err != nil {
		return nil, err
	}
	nu, gamma, err := d.schedule(p.Iters)
	if err != nil {
		return nil, err
	}
	w, err := Metropolis(p.G)
	if err != nil {
		return nil, err
	}
	n := p.G.N()
	t := newDynTrace(r)
	x := append([]float64(nil), r[0]...)
	th, next := make([]float64, n), make([]float64, n)
	t.observeAt(0, x)
	for k := range p.Iters {
		for i := range n {
			eta := laplace(seed.Stream(p.Seed, seed.Noise, dpDynamic, uint64(i), uint64(k)), nu[k])
			if d.Shift != nil {
				eta += d.Shift(i, k)
			}
			th[i] = x[i] + eta
		}
		t.broadcast(p, k, th)
		for i := range n {
			s := 0.0
			for q, j := range p.G.Out(i) {
				s += w.Nbr[i][q] * (th[j] - th[i])
			}
			next[i] = x[i] + gamma[k]*s + r[k+1][i] - r[k][i]
		}
		x, next = next, x
		t.observeAt(k+1, x)
	}
	t.finish(x)
	return t, nil
}

// ExpectedMSE is the closed form of E[(1/n) Σ_i (x_i(T) − r̄(T))²]: the
// run is linear in the noise, x(T) = m(T) + e(T) with m the noiseless run
// (m(k+1) = (I − γ_k L) m(k) + Δr(k)) and e(T) zero-mean with covariance
// Σ(T), Σ(k+1) = A_k Σ(k) A_kᵀ + 2 ν_k² γ_k² L², A_k = I − γ_k L; so the
// expectation is (‖m(T) − r̄(T) 1‖² + tr Σ(T))/n. Computed with dense
// n×n matrices (O(n³ T)), independently of Run's neighbour loops; it also
// returns diag Σ(T), each node's variance.
func (d DynamicDP) ExpectedMSE(p *Problem) (mse float64, variance []float64, err error) {
	r, err := p.refs()
	if err != nil {
		return 0, nil, err
	}
	nu, gamma, err := d.schedule(p.Iters)
	if err != nil {
		return 0, nil, err
	}
	w, err := Metropolis(p.G)
	if err != nil {
		return 0, nil, err
	}
	n := p.G.N()
	lap := make([][]float64, n) // L = I − W
	for i := range n {
		lap[i] = make([]float64, n)
		for j := range n {
			lap[i][j] = -w.At(i, j)
		}
		lap[i][i] += 1
	}
	l2 := matMul(lap, lap)
	m := append([]float64(nil), r[0]...)
	sig := make([][]float64, n)
	for i := range sig {
		sig[i] = make([]float64, n)
	}
	for k := range p.Iters {
		a := make([][]float64, n)
		for i := range n {
			a[i] = make([]float64, n)
			for j := range n {
				a[i][j] = -gamma[k] * lap[i][j]
			}
			a[i][i] += 1
		}
		nm := make([]float64, n)
		for i := range n {
			s := 0.0
			for j := range n {
				s += a[i][j] * m[j]
			}
			nm[i] = s + r[k+1][i] - r[k][i]
		}
		m = nm
		sig = matMul(matMul(a, sig), transpose(a))
		c := 2 * nu[k] * nu[k] * gamma[k] * gamma[k]
		for i := range n {
			for j := range n {
				sig[i][j] += c * l2[i][j]
			}
		}
	}
	avg := newDynTrace(r).Avg
	variance = make([]float64, n)
	for i := range n {
		dv := m[i] - avg
		mse += dv*dv + sig[i][i]
		variance[i] = sig[i][i]
	}
	return mse / float64(n), variance, nil
}

func matMul(a, b [][]float64) [][]float64 {
	n := len(a)
	c := make([][]float64, n)
	for i := range n {
		c[i] = make([]float64, len(b[0]))
		for k, aik := range a[i] {
			if aik == 0 {
				continue
			}
			for j, bkj := range b[k] {
				c[i][j] += aik * bkj
			}
		}
	}
	return c
}

func transpose(a [][]float64) [][]float64 {
	t := make([][]float64, len(a[0]))
	for j := range t {
		t[j] = make([]float64, len(a))
		for i := range a {
			t[j][i] = a[i][j]
		}
	}
	return t
}
