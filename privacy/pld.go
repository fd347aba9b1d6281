package privacy

import (
	"fmt"
	"math"
	"math/cmplx"
)

// This file is the privacy loss distribution (PLD) accountant: the
// distribution of the privacy loss L = log(P(o)/Q(o)), o ∼ P, of one
// release under a dominating pair (P, Q), discretized on a grid of step h,
// composed by multiplying Fourier transforms, and read out as
//
//	δ(ε) = P[L = ∞] + E_P[(1 − e^{ε−L})₊],
//
// the hockey-stick divergence (Koskela, Jälkö and Honkela 2020; Google's
// dp_accounting). Unlike RDP, the read-out is exact for the distribution
// it is given, so the only slack is the discretization's.
//
// Pessimism, step by step:
//
//   - Discretization is "connect the dots" (Doroshenko, Ghazi, Kamath,
//     Kumar and Manurangsi 2022): given the mechanism's exact privacy
//     profile δ(ε) at the grid points ε_i = i·h, the discrete PLD is the one
//     whose δ, as a function of e^ε, interpolates those points linearly. δ
//     is convex in e^ε, so the chords lie above it: the discrete pair
//     dominates the mechanism, at every ε, and so do its compositions. Its
//     masses are second differences of δ at the grid points:
//     p_i = [(δ_{i+1} − δ_i) − e^h (δ_i − δ_{i−1})] / (e^h − 1).
//   - The tail above the grid (δ at the top grid point) goes to +∞.
//   - Composition over a window of the composed loss: the mass that a
//     Chernoff bound cannot rule out above the window goes to +∞; mass
//     below it wraps around into the window, which only adds mass.
//   - Floating-point noise of the FFT (its negative values set to 0, and
//     their largest magnitude times the window charged to +∞).
//
// Add/remove adjacency: for the subsampled Gaussian mechanism the two
// directions (P the mixture and Q the plain Gaussian, or the reverse) have
// different PLDs; each is composed on its own and δ is the larger of the
// two, as dp_accounting does. The Gaussian and Laplace mechanisms are
// symmetric and have one.

// pldTail is the mass the accountant lets go to +∞ through truncation,
// per direction, split evenly over the per-release grids and the
// composition window.
const pldTail = 1e-15

// pldInterval is the default grid step of the privacy loss, dp_accounting's
// default too.
const pldInterval = 1e-4

// pldMaxWindow is the largest FFT the accountant runs (2²⁰ points, 16 MiB
// of complex numbers); a composition that needs more at the coarsest grid
// step is an error.
const pldMaxWindow = 1 << 20

// pldMaxInterval is the coarsest grid step the accountant falls back to
// when the composed loss is too wide for pldMaxWindow at the finer ones.
const pldMaxInterval = 0.05

// lossPMF is a discretized privacy loss distribution: mass[i] at loss
// (lo+i)·h, and inf at +∞.
type lossPMF struct {
	h    float64
	lo   int
	mass []float64
	inf  float64
}

// delta is δ(ε) = inf + Σ_{l > ε} m_l (1 − e^{ε−l}).
func (p *lossPMF) delta(eps float64) float64 {
	d := p.inf
	for i := len(p.mass) - 1; i >= 0; i-- {
		l := float64(p.lo+i) * p.h
		if l <= eps {
			break
		}
		d -= p.mass[i] * math.Expm1(eps-l)
	}
	return min(d, 1)
}

// epsilon is the smallest ε ≥ −∞ with δ(ε) ≤ delta, +Inf when the mass
// at +∞ alone exceeds delta. On [l_{k−1}, l_k] δ(ε) = inf + P_k − e^ε E_k
// with P_k, E_k the sums of m_j and m_j e^{−l_j} over j ≥ k, so the
// solution is read off in closed form once the bracket is found, scanning
// down from the top. E is kept scaled by e^{l_k} so that nothing overflows.
func (p *lossPMF) epsilon(delta float64) float64 {
	if p.inf >= delta {
		return math.Inf(1)
	}
	eh := math.Exp(-p.h)
	var mass, scaled float64 // P_k and e^{l_k}·E_k
	for k := len(p.mass) - 1; k >= 0; k-- {
		scaled = scaled*eh + p.mass[k]
		mass += p.mass[k]
		lk := float64(p.lo+k) * p.h
		// δ at l_{k−1} = lk − h, from the masses at and above k.
		if p.inf+mass-eh*scaled >= delta || k == 0 {
			if scaled == 0 {
				return lk
			}
			return lk + math.Log((p.inf+mass-delta)/scaled)
		}
	}
	return math.Inf(-1) // no finite mass and inf < delta
}

// profile is a mechanism's exact privacy profile in one direction, the
// hockey-stick divergence δ(ε) = sup_S P(S) − e^ε Q(S), and where its
// privacy loss lives. The two directions of a pair are tied by
// δ_{P,Q}(ε) = 1 − e^ε + e^ε δ_{Q,P}(−ε).
type profile interface {
	delta(eps float64) float64
	// support is [lo, hi] such that δ(hi) ≤ tail; below lo the loss may
	// carry mass, which the discretization moves up to lo (pessimistic).
	support(tail float64) (lo, hi float64)
}

// discretize is the connect-the-dots PLD of pr on the grid of step h, with
// the tail above the grid at +∞. noise is the total of the (rounding)
// negative masses it set to 0.
//
// Below ε = 0, δ(ε) is 1 − e^ε plus a small remainder, and the second
// difference of δ there would be mostly the rounding error of that 1. As
// the second difference of 1 − e^ε is zero, the masses at negative losses
// are taken from the remainder alone, g(ε) = δ(ε) − (1 − e^ε) = e^ε δ'(−ε)
// with δ' the reverse direction's profile (rev), computed without the 1.
func discretize(pr, rev profile, h, tail float64) (p lossPMF, noise float64, err error) {
	lo, hi := pr.support(tail)
	// Checked in floating point before anything becomes an index: a
	// tiny noise multiplier puts the loss's tail beyond any int.
	if !(math.Abs(lo) < 1e12 && math.Abs(hi) < 1e12 && (hi-lo)/h < pldMaxWindow-2) {
		return lossPMF{}, 0, errWindow{what: fmt.Sprintf("one release's privacy loss spans [%.4g, %.4g]", lo, hi), h: h}
	}
	i0, i1 := int(math.Floor(lo/h)), int(math.Ceil(hi/h))
	if i1 <= i0 {
		i1 = i0 + 1
	}
	d := make([]float64, i1-i0+1)
	for i := range d {
		d[i] = pr.delta(float64(i0+i) * h)
	}
	// g is the remainder at the grid points up to ε = 0.
	g := make([]float64, max(0, min(len(d), 1-i0)))
	for i := range g {
		eps := float64(i0+i) * h
		g[i] = math.Exp(eps) * rev.delta(-eps)
	}
	em, e := math.Expm1(h), math.Exp(h)
	m := make([]float64, len(d))
	last := len(d) - 1
	if len(g) > 1 {
		m[0] = (g[1]-g[0])/em - g[0]
	} else {
		m[0] = (d[1]-d[0])/em + 1 - d[0]
	}
	for i := 1; i < last; i++ {
		if i+1 < len(g) {
			m[i] = ((g[i+1] - g[i]) - e*(g[i]-g[i-1])) / em
		} else {
			m[i] = ((d[i+1] - d[i]) - e*(d[i]-d[i-1])) / em
		}
	}
	m[last] = e * (d[last-1] - d[last]) / em
	for i, v := range m {
		if v < 0 {
			noise -= v
			m[i] = 0
		}
	}
	return lossPMF{h: h, lo: i0, mass: m, inf: d[last]}, noise, nil
}

// composeResult is a composed PLD with the bookkeeping of what it lost.
type composeResult struct {
	pmf lossPMF
	// truncated is the mass sent to +∞ by truncation (grids and window)
	// and FFT rounding, included in pmf.inf.
	truncated float64
	window    int
}

// compose is the PLD of the sum of counts[i] independent draws from each
// parts[i] (all on the same grid), over an FFT window chosen by Chernoff
// bounds so that at most tail of the mass lies above it.
func compose(parts []lossPMF, counts []int, tail float64) (composeResult, error) {
	h := parts[0].h
	total, base, span, logFinite := 0, 0, 0, 0.0
	longest := 0
	var wide float64 // the support's extent, in floating point
	for i, p := range parts {
		wide += float64(counts[i]) * float64(len(p.mass)+abs(p.lo))
	}
	if !(wide < 1e15) {
		return composeResult{}, errWindow{what: fmt.Sprintf("the composition's privacy loss spans %.3g grid points", wide), h: h}
	}
	for i, p := range parts {
		c := counts[i]
		total += c
		base += c * p.lo
		span += c * (len(p.mass) - 1)
		logFinite += float64(c) * math.Log1p(-p.inf)
		longest = max(longest, len(p.mass))
	}
	inf := -math.Expm1(logFinite)
	if total == 1 {
		for i, p := range parts {
			if counts[i] == 1 {
				return composeResult{pmf: p, window: len(p.mass)}, nil
			}
		}
	}
	// Window [lo, hi] of the shifted sum (each part's index from 0).
	lo, hi := 0, span
	if span >= pldMaxWindow/2 || span >= 2*longest {
		lo, hi = chernoffWindow(parts, counts, tail, span)
	}
	n := 1
	for n < hi-lo+1 || n < longest {
		n <<= 1
	}
	if n > pldMaxWindow {
		return composeResult{}, errWindow{what: fmt.Sprintf("the composed privacy loss needs %d grid points", hi-lo+1), h: h}
	}
	acc := make([]complex128, n)
	buf := make([]complex128, n)
	for i := range acc {
		acc[i] = 1
	}
	for i, p := range parts {
		clear(buf)
		for k, v := range p.mass {
			buf[k] = complex(v, 0)
		}
		fft(buf, false)
		c := float64(counts[i])
		for k, z := range buf {
			acc[k] *= powComplex(z, c)
		}
	}
	fft(acc, true)
	out := make([]float64, n)
	worst := 0.0
	for m := range out {
		v := real(acc[(lo+m)%n]) / float64(n)
		if v < 0 {
			worst = max(worst, -v)
			v = 0
		}
		out[m] = v
	}
	truncated := tail + worst*float64(n)
	if hi == span && lo == 0 && n > span {
		truncated = worst * float64(n) // nothing outside the window
	}
	return composeResult{
		pmf:       lossPMF{h: h, lo: base + lo, mass: out, inf: min(1, inf+truncated)},
		truncated: truncated, window: n,
	}, nil
}

// errWindow is a distribution too wide for the largest FFT at grid step
// h (a coarser grid may do).
type errWindow struct {
	what string
	h    float64
}

func (e errWindow) Error() string {
	return fmt.Sprintf("pld: %s at a grid step of %g, more than %d points", e.what, e.h, pldMaxWindow)
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// powComplex is z^c for real c ≥ 1, in polar form.
func powComplex(z complex128, c float64) complex128 {
	r := cmplx.Abs(z)
	if r == 0 {
		return 0
	}
	s, co := math.Sincos(c * cmplx.Phase(z))
	m := math.Exp(c * math.Log(r))
	return complex(m*co, m*s)
}

// chernoffWindow is the range [lo, hi] of the shifted composed index
// outside which each tail holds at most tail of the mass: P(S ≥ u) ≤
// exp(Σ c_i K_i(t) − t u) and P(S ≤ l) ≤ exp(Σ c_i K_i(−t) + t l), with
// K_i the log moment generating function of part i, minimized over a
// grid of t.
func chernoffWindow(parts []lossPMF, counts []int, tail float64, span int) (lo, hi int) {
	h := parts[0].h
	logTail := math.Log(tail)
	logs := make([][]float64, len(parts))
	for i, p := range parts {
		logs[i] = make([]float64, len(p.mass))
		for k, v := range p.mass {
			logs[i][k] = math.Log(v) // −Inf for 0
		}
	}
	up, down := float64(span), 0.0
	for j := -40; j <= 40; j++ {
		tau := math.Pow(10, float64(j)/10) // in units of 1/loss
		t := tau * h                       // in units of 1/index
		var kUp, kDown float64
		for i, l := range logs {
			kUp += float64(counts[i]) * logMGF(l, t)
			kDown += float64(counts[i]) * logMGF(l, -t)
		}
		up = min(up, (kUp-logTail)/t)
		down = max(down, (logTail-kDown)/t)
	}
	lo = max(0, int(math.Floor(down)))
	hi = min(span, int(math.Ceil(up)))
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

// logMGF is log Σ_k e^{logm[k] + t k}.
func logMGF(logm []float64, t float64) float64 {
	top := math.Inf(-1)
	for k, v := range logm {
		top = max(top, v+t*float64(k))
	}
	if math.IsInf(top, -1) {
		return top
	}
	var s float64
	for k, v := range logm {
		s += math.Exp(v + t*float64(k) - top)
	}
	return top + math.Log(s)
}

// logNormalTail is log P(N(0,1) > x) = log ½ erfc(x/√2), accurate for
// large x.
func logNormalTail(x float64) float64 { return math.Log(0.5) + logErfc(x/math.Sqrt2) }

// normalQuantileTail is the x with P(N(0,1) > x) = p, for p in (0, ½]:
// math.Erfcinv where it is accurate, Newton's method on the log tail below
// 1e−15 (where 1 − 2p rounds to 1 inside Erfcinv).
func normalQuantileTail(p float64) float64 {
	if p >= 1e-15 {
		return math.Sqrt2 * math.Erfcinv(2*p)
	}
	lp := math.Log(p)
	x := math.Sqrt(-2 * lp)
	for range 50 {
		// d/dx log Φ̄(x) = −φ(x)/Φ̄(x).
		f := logNormalTail(x) - lp
		slope := -math.Exp(-x*x/2 - 0.5*math.Log(2*math.Pi) - logNormalTail(x))
		step := f / slope
		x -= step
		if math.Abs(step) < 1e-12*x {
			break
		}
	}
	return x
}

// gaussianProfile is the Gaussian mechanism with sensitivity 1 and noise
// multiplier σ, μ = 1/σ (Balle and Wang 2018, Thm. 8):
//
//	δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2),
//
// the same in both directions. Its privacy loss is N(μ²/2, μ²).
type gaussianProfile struct{ mu float64 }

func (g gaussianProfile) delta(eps float64) float64 {
	mu := g.mu
	a := eps/mu - mu/2
	d := math.Exp(logNormalTail(a)) - math.Exp(eps+logNormalTail(a+mu))
	return max(d, 0)
}

func (g gaussianProfile) support(tail float64) (lo, hi float64) {
	k := normalQuantileTail(tail)
	return g.mu*g.mu/2 - k*g.mu, g.mu*g.mu/2 + k*g.mu
}

// laplaceProfile is the ε₀-DP Laplace mechanism (scale = sensitivity/ε₀):
// the loss lies in [−ε₀, ε₀] and, for |ε| < ε₀,
//
//	δ(ε) = 1 − e^{(ε−ε₀)/2},
//
// the same in both directions.
type laplaceProfile struct{ eps0 float64 }

func (l laplaceProfile) delta(eps float64) float64 {
	switch {
	case eps >= l.eps0:
		return 0
	case eps <= -l.eps0:
		return -math.Expm1(eps)
	}
	return -math.Expm1((eps - l.eps0) / 2)
}

func (l laplaceProfile) support(float64) (lo, hi float64) { return -l.eps0, l.eps0 }

// subsampledUp is the Poisson-subsampled Gaussian mechanism with P the
// mixture (1−q)N(0, σ²) + qN(1, σ²) and Q = N(0, σ²). The likelihood
// ratio (1−q) + q e^{(2x−1)/(2σ²)} grows with x, so the set where it
// exceeds e^ε is x > x*, x* = σ² log((e^ε − 1 + q)/q) + ½, and
//
//	δ(ε) = q Φ̄((x*−1)/σ) − (e^ε − 1 + q) Φ̄(x*/σ)   (e^ε > 1 − q),
//	δ(ε) = 1 − e^ε                                   otherwise.
//
// The loss is at least log(1 − q) and unbounded above.
type subsampledUp struct{ q, sigma float64 }

func (s subsampledUp) delta(eps float64) float64 {
	q, sg := s.q, s.sigma
	if eps <= math.Log1p(-q) {
		return -math.Expm1(eps)
	}
	c := math.Expm1(eps) + q
	x := sg*sg*(math.Log(c)-math.Log(q)) + 0.5
	d := math.Exp(math.Log(q)+logNormalTail((x-1)/sg)) - math.Exp(math.Log(c)+logNormalTail(x/sg))
	return max(d, 0)
}

func (s subsampledUp) support(tail float64) (lo, hi float64) {
	x := 1 + s.sigma*normalQuantileTail(tail)
	return math.Log1p(-s.q), s.loss(x)
}

// loss is log((1−q) + q e^{(2x−1)/(2σ²)}).
func (s subsampledUp) loss(x float64) float64 {
	return logAdd(math.Log1p(-s.q), math.Log(s.q)+(2*x-1)/(2*s.sigma*s.sigma))
}

// subsampledDown is the other direction: P = N(0, σ²), Q the mixture.
// The ratio 1/((1−q) + q e^{(2x−1)/(2σ²)}) falls with x; it exceeds e^ε
// for x < x*, x* = σ² log((e^{−ε} − 1 + q)/q) + ½, when e^{−ε} > 1 − q:
//
//	δ(ε) = (1 − e^ε(1−q)) Φ(x*/σ) − e^ε q Φ((x*−1)/σ),
//
// and 0 for ε ≥ −log(1 − q), the loss's maximum.
type subsampledDown struct{ q, sigma float64 }

func (s subsampledDown) delta(eps float64) float64 {
	q, sg := s.q, s.sigma
	l1q := math.Log1p(-q)
	if eps >= -l1q {
		return 0
	}
	c := math.Expm1(-eps) + q
	x := sg*sg*(math.Log(c)-math.Log(q)) + 0.5
	d := -math.Expm1(eps+l1q)*math.Exp(logNormalTail(-x/sg)) - math.Exp(eps+math.Log(q)+logNormalTail((1-x)/sg))
	return max(d, 0)
}

func (s subsampledDown) support(tail float64) (lo, hi float64) {
	x := s.sigma * normalQuantileTail(tail)
	return -subsampledUp(s).loss(x), -math.Log1p(-s.q)
}

// profiles is an event's privacy profile in the two directions of
// add/remove adjacency (the same profile twice for a symmetric mechanism).
func profiles(e Event) (up, down profile, err error) {
	if err := e.validate(); err != nil {
		return nil, nil, err
	}
	switch e := e.(type) {
	case GaussianEvent:
		q, z := e.Sampling.Rate(), e.Multiplier
		if q == 1 {
			g := gaussianProfile{mu: 1 / z}
			return g, g, nil
		}
		return subsampledUp{q: q, sigma: z}, subsampledDown{q: q, sigma: z}, nil
	case LaplaceEvent:
		l := laplaceProfile{eps0: e.Epsilon}
		return l, l, nil
	}
	return nil, nil, fmt.Errorf("pld: no privacy loss distribution for %T", e)
}
