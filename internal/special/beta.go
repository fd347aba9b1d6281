// Package special holds special functions more than one package needs:
// the regularized incomplete beta function and its inverse (binomial
// confidence intervals, Beta trust posteriors).
package special

import "math"

// BetaCDF is the regularized incomplete beta function I_x(a, b), the CDF at
// x of Beta(a, b) (a, b > 0; NaN otherwise). It evaluates the continued
// fraction of Numerical Recipes (Press et al., 3rd ed., §6.4, betacf) by
// the modified Lentz method on the side of the mean where it converges
// fast, using I_x(a, b) = 1 − I_{1−x}(b, a) on the other.
func BetaCDF(x, a, b float64) float64 {
	switch {
	case math.IsNaN(x) || !(a > 0) || !(b > 0):
		return math.NaN()
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(x, a, b) / a
	}
	return 1 - front*betaFraction(1-x, b, a)/b
}

// BetaQuantile is the p-quantile of Beta(a, b): the x with BetaCDF(x, a, b)
// = p, by bisection (the CDF is monotone; 100 halvings reach float64
// resolution).
func BetaQuantile(p, a, b float64) float64 {
	lo, hi := 0.0, 1.0
	for range 100 {
		mid := 0.5 * (lo + hi)
		if BetaCDF(mid, a, b) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 0.5 * (lo + hi)
}

const tiny = 1e-300

// betaFraction evaluates the continued fraction for I_x(a, b).
func betaFraction(x, a, b float64) float64 {
	const eps = 1e-15
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, nonZero(1-qab*x/qap)
	d = 1 / d
	h := d
	for m := 1; m <= 1000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		// Even and odd terms of the fraction, one Lentz update each.
		c, d = lentz(fm*(b-fm)*x/((qam+m2)*(a+m2)), c, d)
		h *= d * c
		c, d = lentz(-(a+fm)*(qab+fm)*x/((a+m2)*(qap+m2)), c, d)
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// lentz is one step of the modified Lentz method with coefficient aa: it
// returns the new C and 1/D.
func lentz(aa, c, d float64) (float64, float64) {
	return nonZero(1 + aa/c), 1 / nonZero(1+aa*d)
}

func nonZero(v float64) float64 {
	if math.Abs(v) < tiny {
		return tiny
	}
	return v
}
