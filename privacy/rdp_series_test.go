package privacy

import (
	"math"
	"testing"
)

// orderGrid holds the (q, σ) pairs over which the fractional-order series is
// checked: small and large sampling rates, noise from strong to weak.
var (
	seriesRates  = []float64{0.001, 0.01, 0.1, 0.38, 0.5, 1}
	seriesSigmas = []float64{0.5, 1, 2, 8, 20, 50}
)

// TestFractionalOrdersBetweenIntegerNeighbours: RDP is non-decreasing in α
// (van Erven and Harremoës 2014, Thm. 3), so at every fractional order of
// the dense grid it lies between its values at the neighbouring integers,
// which the binomial sum computes exactly. A series cut too early (the
// defect this guards against gave log A < 0, an RDP of 0, at q = 0.5,
// σ = 20, α = 47.5) falls below the lower neighbour.
func TestFractionalOrdersBetweenIntegerNeighbours(t *testing.T) {
	const tol = 1e-6
	bad := 0
	for _, q := range seriesRates {
		for _, s := range seriesSigmas {
			e := GaussianEvent{Multiplier: s, Sampling: Poisson(q)}
			for _, a := range DenseOrders() {
				if a == math.Trunc(a) {
					continue
				}
				r := e.RDP(a)
				lo := 0.0 // RDP at α → 1 is the KL divergence, ≥ 0
				if f := math.Floor(a); f >= 2 {
					lo = e.RDP(f)
				}
				hi := e.RDP(math.Ceil(a))
				if math.IsNaN(r) || r < lo-tol*lo || r > hi+tol*hi {
					if bad++; bad <= 10 {
						t.Errorf("q=%g σ=%g α=%g: RDP %.10g outside [RDP(%g), RDP(%g)] = [%.10g, %.10g]",
							q, s, a, r, math.Floor(a), math.Ceil(a), lo, hi)
					}
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d fractional orders outside their integer neighbours", bad)
	}
}

// TestFractionalSeriesMatchesQuadrature compares the series with A_α
// integrated directly, A_α = ∫ μ0(z)^{1−α} μ(z)^α dz, by the trapezoid rule
// in log space on a fine grid around the integrand's mass (the integrand is
// smooth and decays like a Gaussian, where the trapezoid rule converges
// geometrically).
func TestFractionalSeriesMatchesQuadrature(t *testing.T) {
	if testing.Short() {
		t.Skip("the series against numerical quadrature on a grid: 3.5 s; the full suite runs it")
	}
	for _, q := range seriesRates[:5] { // q = 1 is the closed form α/(2σ²)
		for _, s := range seriesSigmas {
			for _, a := range []float64{1.3, 2.55, 6.55, 10.05, 20.5, 47.5, 63.5} {
				got := GaussianEvent{Multiplier: s, Sampling: Poisson(q)}.RDP(a)
				want := quadratureLogA(q, s, a) / (a - 1)
				if relErr(got, want) > 1e-6 && math.Abs(got-want) > 1e-12 {
					t.Errorf("q=%g σ=%g α=%g: series RDP %.12g, quadrature %.12g (rel. %.1e)",
						q, s, a, got, want, relErr(got, want))
				}
			}
		}
	}
}

// quadratureLogA is log A_α by the trapezoid rule over z, with
// log μ0(z) = −z²/(2σ²) + c and log μ(z) = log((1−q)e^{−z²/(2σ²)} +
// q e^{−(z−1)²/(2σ²)}) + c (the constant c cancels: (1−α)c + αc − c = 0
// after the normalisation by ∫μ0).
func quadratureLogA(q, sigma, alpha float64) float64 {
	s2 := 2 * sigma * sigma
	logF := func(z float64) float64 {
		l0 := -z * z / s2
		l1 := -(z - 1) * (z - 1) / s2
		lmix := logAdd(math.Log1p(-q)+l0, math.Log(q)+l1)
		return (1-alpha)*l0 + alpha*lmix - 0.5*math.Log(math.Pi*s2)
	}
	// The integrand's mass lies within a few σ of its mode, which is
	// between 0 and α (the exponent's slope is positive at 0 and negative
	// past α): scan for the mode, then integrate ±40σ around it.
	mode, best := 0.0, math.Inf(-1)
	for z := -10 * sigma; z <= alpha+10*sigma; z += sigma / 50 {
		if v := logF(z); v > best {
			mode, best = z, v
		}
	}
	const n = 200000
	lo, hi := mode-40*sigma-1, mode+40*sigma+1
	h := (hi - lo) / n
	sum := 0.0
	for i := 0; i <= n; i++ {
		w := 1.0
		if i == 0 || i == n {
			w = 0.5
		}
		sum += w * math.Exp(logF(lo+float64(i)*h)-best)
	}
	return best + math.Log(sum*h)
}

// TestDenseOrdersNeverReportZero is the reported case: 1000 steps at
// q = 0.5, σ = 20, δ = 1e-5 on the dense grid gave ε = 0 (at α = 47.5);
// the best integer order gives 3.637, and the dense grid, a superset of
// the integers from 2 to 11, can only improve on it slightly.
func TestDenseOrdersNeverReportZero(t *testing.T) {
	e := GaussianEvent{Multiplier: 20, Sampling: Poisson(0.5)}
	var ints []float64
	for a := 2.0; a <= 256; a++ {
		ints = append(ints, a)
	}
	intEps, _, err := EpsilonAfter(e, 1000, 1e-5, ints)
	if err != nil {
		t.Fatal(err)
	}
	denseEps, _, err := EpsilonAfter(e, 1000, 1e-5, DenseOrders())
	if err != nil {
		t.Fatal(err)
	}
	if relErr(intEps, 3.637) > 5e-3 {
		t.Errorf("integer orders: ε = %v, want 3.637 ± 0.5 %%", intEps)
	}
	if denseEps > intEps || relErr(denseEps, intEps) > 5e-3 {
		t.Errorf("dense orders: ε = %v, integer orders %v: want at most it and within 0.5 %%", denseEps, intEps)
	}
	z, err := Calibrate(1, 1e-5, 1000, Poisson(0.5), DenseOrders())
	if err != nil {
		t.Fatal(err)
	}
	eps, _, _ := EpsilonAfter(GaussianEvent{Multiplier: z, Sampling: Poisson(0.5)}, 1000, 1e-5, ints)
	if relErr(eps, 1) > 1e-2 {
		t.Errorf("calibrated σ = %v on the dense grid has ε = %v on integer orders, want 1 ± 1 %%", z, eps)
	}
}

// nanEvent stands for an event whose RDP could not be computed.
type nanEvent struct{}

func (nanEvent) RDP(float64) float64 { return math.NaN() }
func (nanEvent) validate() error     { return nil }

// TestComposeRefusesUncomputedRDP: an RDP the series could not compute is an
// error, never a 0 (which the conversion would turn into ε = 0) nor a value
// cached for the next composition.
func TestComposeRefusesUncomputedRDP(t *testing.T) {
	a, err := NewAccountant(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Compose(nanEvent{}, 3); err == nil {
		t.Fatal("an event with an uncomputed RDP was composed")
	}
	if err := a.Compose(nanEvent{}, 3); err == nil {
		t.Fatal("the second composition of the same event was accepted from the cache")
	}
	if a.Steps() != 0 {
		t.Errorf("%d steps counted after refusals", a.Steps())
	}
	if got := sgmRDP(0.5, 20, 47.5); !(got > 0) {
		t.Errorf("sgmRDP(0.5, 20, 47.5) = %v, want > 0", got)
	}
}
