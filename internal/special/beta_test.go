package special

import (
	"math"
	"testing"
)

func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r *= float64(n-k+i) / float64(i)
	}
	return r
}

func TestBetaCDFKnownValues(t *testing.T) {
	// I_x(a, n−a+1) = P(Bin(n, x) ≥ a) for integer a (here a = 50, n = 51).
	var binTail float64
	for k := 50; k <= 51; k++ {
		binTail += binom(51, k) * math.Pow(0.9, float64(k)) * math.Pow(0.1, float64(51-k))
	}
	for _, c := range []struct{ x, a, b, want float64 }{
		{0.3, 1, 1, 0.3},                  // uniform
		{0.5, 7, 7, 0.5},                  // symmetric
		{0.2, 3, 1, 0.008},                // I_x(a, 1) = xᵃ
		{0.2, 1, 4, 1 - math.Pow(0.8, 4)}, // I_x(1, b) = 1 − (1−x)ᵇ
		{0.9, 50, 2, binTail},
		{0.25, 2.5, 3.5, 0.2092843318634301}, // scipy.special.betainc(2.5, 3.5, 0.25), SciPy 1.10.1
	} {
		if got := BetaCDF(c.x, c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("I_%g(%g, %g) = %.15g, want %.15g", c.x, c.a, c.b, got, c.want)
		}
	}
	if !math.IsNaN(BetaCDF(0.5, 0, 1)) {
		t.Error("a = 0 accepted")
	}
}

func TestBetaQuantileInverts(t *testing.T) {
	for _, c := range [][3]float64{{0.025, 1, 10}, {0.5, 3, 3}, {0.975, 20, 2.5}} {
		x := BetaQuantile(c[0], c[1], c[2])
		if got := BetaCDF(x, c[1], c[2]); math.Abs(got-c[0]) > 1e-12 {
			t.Errorf("BetaCDF(BetaQuantile(%v)) = %v", c[0], got)
		}
	}
	// Beta(1, 10) has CDF 1 − (1−x)¹⁰.
	if got, want := BetaQuantile(0.975, 1, 10), 1-math.Pow(0.025, 0.1); math.Abs(got-want) > 1e-12 {
		t.Errorf("quantile %v, want %v", got, want)
	}
}
