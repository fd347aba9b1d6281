package privacy

import "math"

// This file computes the Rényi DP of one step of the sampled Gaussian
// mechanism (SGM): a record is included with probability q (Poisson
// sampling), the clipped sum gets N(0, σ²) noise per unit of sensitivity.
// Everything is in log space so that large orders and small σ neither
// overflow nor produce NaN.
//
// Mironov, Talwar and Zhang (2019), "Rényi Differential Privacy of the
// Sampled Gaussian Mechanism", arXiv:1908.10530:
//
//	RDP(α) = log A_α / (α − 1),
//	A_α = E_{z∼μ0} [(μ(z)/μ0(z))^α],  μ0 = N(0, σ²),  μ = (1−q)μ0 + q N(1, σ²).
//
// Integer α (Sec. 3.3, Eq. for A_α as a binomial sum):
//
//	A_α = Σ_{k=0}^{α} C(α,k) (1−q)^{α−k} q^k exp((k² − k)/(2σ²)).
//
// Fractional α (Sec. 3.3, the two convergent series split at
// z0 = σ² log(1/q − 1) + 1/2):
//
//	A_α = Σ_k C(α,k) (1−q)^{α−k} q^k exp((k²−k)/(2σ²)) · ½ erfc((k − z0)/(√2σ))
//	    + Σ_k C(α,k) (1−q)^k q^{α−k} exp(((α−k)²−(α−k))/(2σ²)) · ½ erfc((z0 − (α−k))/(√2σ)).
//
// The fractional binomials C(α,k) change sign once k > α; their terms are
// added or subtracted in log space accordingly. The series is cut only once
// k has passed α (every positive term is in: the terms that dominate A_α lie
// between 0 and α, often far from both ends), the terms have started to
// fall, and both are below e⁻³⁰, absolute and relative to the running sum — past α the
// terms alternate with falling magnitude, so what is left out is below the
// last term kept. The reference implementation of the paper (and
// TF-Privacy's) cuts as soon as both terms are below e⁻³⁰ in absolute
// terms, which at large q and σ happens at k = 0, before the dominant
// terms: at q = 0.5, σ = 20, α = 47.5 it returns log A_α < 0, an RDP of 0
// and ε = 0 where the true ε is 3.64.

// sgmRDP is the RDP at order alpha > 1 of one SGM step with sampling rate q
// in [0, 1] and noise multiplier sigma > 0. A value that cannot be computed
// reliably is returned as +Inf, which is always a valid (useless) bound.
func sgmRDP(q, sigma, alpha float64) float64 {
	switch {
	case q == 0:
		return 0
	case math.IsInf(alpha, 1):
		return math.Inf(1)
	case q == 1:
		// The Gaussian mechanism itself: α/(2σ²) (Mironov 2017, "Rényi
		// Differential Privacy", Table II).
		return alpha / (2 * sigma * sigma)
	}
	var la float64
	if alpha == math.Trunc(alpha) && alpha < 1<<20 {
		la = logAInt(q, sigma, int(alpha))
	} else {
		la = logAFrac(q, sigma, alpha)
	}
	if math.IsNaN(la) {
		// The alternating tail lost precision (logSub): no value, but +Inf
		// is a valid (useless) bound and the conversion skips it.
		return math.Inf(1)
	}
	// A_α ≥ 1, so log A_α ≥ 0: a value below 0 beyond rounding means the
	// series is wrong, and clamping it would turn a wrong A into ε = 0.
	// NaN makes the accountant refuse the event with an error.
	if la < -logATolerance {
		return math.NaN()
	}
	return max(la/(alpha-1), 0)
}

// logATolerance is how far below 0 a computed log A_α may fall by rounding
// alone (the sums carry ~1e−16 relative error per term).
const logATolerance = 1e-9

// logAInt is log A_α for integer α ≥ 2 (MTZ 2019, Sec. 3.3).
func logAInt(q, sigma float64, alpha int) float64 {
	lq, l1q := math.Log(q), math.Log1p(-q)
	s2 := 2 * sigma * sigma
	la := math.Inf(-1)
	logC := 0.0 // log C(α, 0)
	for k := 0; k <= alpha; k++ {
		if k > 0 {
			// C(α,k) = C(α,k−1)·(α−k+1)/k, in log space (exact for
			// large α, unlike differences of log-gammas).
			logC += math.Log(float64(alpha-k+1)) - math.Log(float64(k))
		}
		fk := float64(k)
		t := logC + fk*lq + float64(alpha-k)*l1q + (fk*fk-fk)/s2
		la = logAdd(la, t)
	}
	return la
}

// logAFrac is log A_α for fractional α > 1 (MTZ 2019, Sec. 3.3).
func logAFrac(q, sigma, alpha float64) float64 {
	lq, l1q := math.Log(q), math.Log1p(-q)
	s2 := 2 * sigma * sigma
	z0 := sigma*sigma*math.Log(1/q-1) + 0.5
	sq2s := math.Sqrt2 * sigma
	a0, a1 := math.Inf(-1), math.Inf(-1)
	logC, sign := 0.0, 1.0 // log |C(α, 0)|, its sign
	last := math.Inf(1)    // the larger term of the previous k
	const maxTerms = 1 << 20
	for k := 0; k < maxTerms; k++ {
		if k > 0 {
			d := alpha - float64(k) + 1
			logC += math.Log(math.Abs(d)) - math.Log(float64(k))
			if d < 0 {
				sign = -sign
			}
		}
		fk := float64(k)
		j := alpha - fk
		t0 := logC + fk*lq + j*l1q
		t1 := logC + j*lq + fk*l1q
		e0 := math.Log(0.5) + logErfc((fk-z0)/sq2s)
		e1 := math.Log(0.5) + logErfc((z0-j)/sq2s)
		s0 := t0 + (fk*fk-fk)/s2 + e0
		s1 := t1 + (j*j-j)/s2 + e1
		if sign > 0 {
			a0, a1 = logAdd(a0, s0), logAdd(a1, s1)
		} else {
			a0, a1 = logSub(a0, s0), logSub(a1, s1)
		}
		if math.IsNaN(a0) || math.IsNaN(a1) {
			return math.NaN()
		}
		term := max(s0, s1)
		// e⁻³⁰ absolute, as the reference implementation, is also e⁻³⁰
		// relative to the sum once the sum is ≥ 1 (A_α ≥ 1): where that
		// implementation stopped past α its result is kept bit for bit.
		if fk > alpha && term < last && term < min(-30, logAdd(a0, a1)-30) {
			return logAdd(a0, a1)
		}
		last = term
	}
	return math.NaN()
}

// logAdd is log(eˣ + eʸ).
func logAdd(x, y float64) float64 {
	a, b := max(x, y), min(x, y)
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// logSub is log(eˣ − eʸ) for x ≥ y; NaN when y > x (the series lost
// precision), −Inf when they are equal.
func logSub(x, y float64) float64 {
	switch {
	case math.IsInf(y, -1):
		return x
	case y > x:
		return math.NaN()
	case x == y:
		return math.Inf(-1)
	}
	return x + math.Log(-math.Expm1(y-x))
}

// logErfc is log erfc(x), accurate where erfc underflows: for x > 25 it
// uses the asymptotic series erfc(x) = e^{−x²}/(x√π) · Σ_n (−1)ⁿ (2n−1)!!/(2x²)ⁿ
// (Abramowitz and Stegun 7.1.23), whose truncation error after five terms
// is below 1e−12 there.
func logErfc(x float64) float64 {
	if x <= 25 {
		return math.Log(math.Erfc(x))
	}
	u := 1 / (2 * x * x)
	s := 1 - u*(1-3*u*(1-5*u*(1-7*u)))
	return -x*x - math.Log(x) - 0.5*math.Log(math.Pi) + math.Log(s)
}

// laplaceRDP is the RDP at order alpha > 1 of the Laplace mechanism with
// privacy eps (scale = sensitivity/eps): Mironov 2017, Table II,
//
//	RDP(α) = 1/(α−1) · log( α/(2α−1) e^{(α−1)ε} + (α−1)/(2α−1) e^{−αε} ),
//
// never above the pure-DP bound ε.
func laplaceRDP(eps, alpha float64) float64 {
	if math.IsInf(alpha, 1) {
		return eps
	}
	l := logAdd(math.Log(alpha/(2*alpha-1))+(alpha-1)*eps,
		math.Log((alpha-1)/(2*alpha-1))-alpha*eps)
	return min(max(l/(alpha-1), 0), eps)
}
