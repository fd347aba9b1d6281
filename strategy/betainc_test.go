package strategy

import (
	"math"
	"testing"
)

// binomialTail is I_x(a, b) for integer a, b: P(Bin(a+b−1, x) >= a).
func binomialTail(x float64, a, b int) float64 {
	n := a + b - 1
	var s float64
	for j := a; j <= n; j++ {
		c := 1.0
		for i := 0; i < j; i++ {
			c = c * float64(n-i) / float64(i+1)
		}
		s += c * math.Pow(x, float64(j)) * math.Pow(1-x, float64(n-j))
	}
	return s
}

func TestBetaCDFClosedForms(t *testing.T) {
	const tol = 1e-12
	check := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.17g, want %.17g", what, got, want)
		}
	}
	xs := []float64{0.001, 0.1, 0.25, 0.5, 0.7, 0.9, 0.999}
	for _, x := range xs {
		check("I_x(1,1)", betaCDF(x, 1, 1), x)
		for _, a := range []float64{0.5, 2, 3.7, 10} {
			check("I_x(a,1)", betaCDF(x, a, 1), math.Pow(x, a))
			check("I_x(1,b)", betaCDF(x, 1, a), 1-math.Pow(1-x, a))
			for _, b := range []float64{0.3, 1.5, 3, 20} {
				check("symmetry", betaCDF(x, a, b), 1-betaCDF(1-x, b, a))
			}
		}
		check("I_x(1/2,1/2)", betaCDF(x, 0.5, 0.5), 2/math.Pi*math.Asin(math.Sqrt(x)))
		for a := 1; a <= 12; a++ {
			for b := 1; b <= 12; b++ {
				check("binomial", betaCDF(x, float64(a), float64(b)), binomialTail(x, a, b))
			}
		}
	}
	// Known values: I_{1/2}(a, a) = 1/2; I_{1/2}(4, 3) = 22/64; AFA's
	// blocking: after k bad rounds from the prior (3, 3),
	// I_{1/2}(3, 3+k) = P(Bin(5+k, 1/2) >= 3): 968/1024 at k = 5 (kept),
	// 1981/2048 at k = 6 (blocked, > 0.95).
	check("I(3,3)", betaCDF(0.5, 3, 3), 0.5)
	check("I(7.5,7.5)", betaCDF(0.5, 7.5, 7.5), 0.5)
	check("I(4,3)", betaCDF(0.5, 4, 3), 22.0/64)
	check("I(3,8)", betaCDF(0.5, 3, 8), 968.0/1024)
	check("I(3,9)", betaCDF(0.5, 3, 9), 1981.0/2048)
	check("I_0(2,3)", betaCDF(0, 2, 3), 0)
	check("I_1(2,3)", betaCDF(1, 2, 3), 1)
	if !math.IsNaN(betaCDF(0.5, 0, 1)) || !math.IsNaN(betaCDF(math.NaN(), 1, 1)) {
		t.Error("invalid arguments should give NaN")
	}
}
