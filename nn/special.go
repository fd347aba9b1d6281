package nn

import "math"

// digamma returns ψ(x) = d/dx ln Γ(x) for x > 0: the recurrence
// ψ(x) = ψ(x+1) − 1/x lifts x to 12 or more, where the asymptotic series
// ln x − 1/(2x) − Σ B_2k/(2k x^2k) is accurate to double precision.
func digamma(x float64) float64 {
	var r float64
	for x < 12 {
		r -= 1 / x
		x++
	}
	f := 1 / (x * x)
	return r + math.Log(x) - 0.5/x -
		f*(1.0/12-f*(1.0/120-f*(1.0/252-f*(1.0/240-f*(1.0/132)))))
}

// trigamma returns ψ'(x) for x > 0, by ψ'(x) = ψ'(x+1) + 1/x² and the
// asymptotic series 1/x + 1/(2x²) + Σ B_2k / x^(2k+1).
func trigamma(x float64) float64 {
	var r float64
	for x < 12 {
		r += 1 / (x * x)
		x++
	}
	f := 1 / (x * x)
	return r + 1/x + f/2 +
		f/x*(1.0/6-f*(1.0/30-f*(1.0/42-f*(1.0/30-f*(5.0/66)))))
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// softplus is ln(1 + e^z), computed without overflow for large z.
func softplus(z float64) float64 {
	if z > 30 {
		return z
	}
	return math.Log1p(math.Exp(z))
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
