package privacy

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestFFTMatchesDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 8, 64} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
		}
		got := append([]complex128(nil), x...)
		fft(got, false)
		for k := range n {
			var want complex128
			for j, v := range x {
				want += v * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k)/float64(n)))
			}
			if cmplx.Abs(got[k]-want) > 1e-12*float64(n) {
				t.Fatalf("n = %d, X[%d] = %v, DFT %v", n, k, got[k], want)
			}
		}
		fft(got, true)
		for j := range x {
			if cmplx.Abs(got[j]/complex(float64(n), 0)-x[j]) > 1e-12 {
				t.Fatalf("n = %d: inverse does not return x at %d", n, j)
			}
		}
	}
}

// hockeyStick is ∫ (p − e^ε q)₊ by the trapezoid rule on a fine grid: the
// definition of δ(ε), independent of the closed forms in pld.go.
func hockeyStick(p, q func(float64) float64, eps, from, to float64) float64 {
	const n = 200000
	dx := (to - from) / n
	var s float64
	for i := 0; i <= n; i++ {
		x := from + float64(i)*dx
		v := max(0, p(x)-math.Exp(eps)*q(x))
		if i == 0 || i == n {
			v /= 2
		}
		s += v
	}
	return s * dx
}

func TestSubsampledProfileMatchesIntegration(t *testing.T) {
	for _, c := range []struct{ q, sigma float64 }{{0.01, 1}, {256.0 / 60000, 1.1}, {0.3, 0.7}} {
		phi := func(mean float64) func(float64) float64 {
			return func(x float64) float64 {
				z := (x - mean) / c.sigma
				return math.Exp(-z*z/2) / (c.sigma * math.Sqrt(2*math.Pi))
			}
		}
		mix := func(x float64) float64 { return (1-c.q)*phi(0)(x) + c.q*phi(1)(x) }
		up, down := subsampledUp{c.q, c.sigma}, subsampledDown{c.q, c.sigma}
		for _, eps := range []float64{-0.5, -0.01, 0, 0.001, 0.01, 0.1, 0.5, 1, 2} {
			from, to := -30*c.sigma, 1+30*c.sigma
			for _, d := range []struct {
				name      string
				got, want float64
			}{
				{"up", up.delta(eps), hockeyStick(mix, phi(0), eps, from, to)},
				{"down", down.delta(eps), hockeyStick(phi(0), mix, eps, from, to)},
			} {
				if math.Abs(d.got-d.want) > 1e-6*d.want+1e-13 {
					t.Errorf("q %v σ %v ε %v %s: δ = %.12g, integration %.12g", c.q, c.sigma, eps, d.name, d.got, d.want)
				}
			}
		}
	}
}

func TestGaussianPLDAgainstAnalytic(t *testing.T) {
	// Balle and Wang 2018: n releases with σ = 1 are one with μ = √n.
	steps := []int{1, 100}
	for _, n := range steps {
		want := gaussianDPEpsilon(math.Sqrt(float64(n)), 1e-5)
		ev := GaussianEvent{Multiplier: 1, Sampling: Unamplified()}
		// On the grid, composed by FFT like any other release.
		p, err := composePLD([]Charge{{ev, n}}, pldInterval, false)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Epsilon(1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if got < want || got > want*1.005 {
			t.Errorf("σ = 1, %d steps: PLD ε = %.9g (grid %g), analytic %.9g", n, got, p.Interval, want)
		}
		// Exactly, as ComposePLD does for Gaussian releases.
		exact, err := EpsilonPLD(ev, n, 1e-5)
		if err != nil || exact < want*(1-1e-12) || relErr(exact, want) > 1e-9 {
			t.Errorf("σ = 1, %d steps: exact PLD ε = %.12g (%v), analytic %.12g", n, exact, err, want)
		}
	}
}

// laplaceDelta is δ(ε) of the ε₀-DP Laplace mechanism from the definition:
// P = Lap(0, b), Q = Lap(1, b), b = 1/ε₀, and the loss exceeds ε for
// x < x* = (1 − εb)/2.
func laplaceDelta(eps0, eps float64) float64 {
	b := 1 / eps0
	switch {
	case eps >= eps0:
		return 0
	case eps <= -eps0:
		return 1 - math.Exp(eps)
	}
	x := (1 - eps*b) / 2
	return laplaceCDF(b)(x) - math.Exp(eps)*laplaceCDF(b)(x-1)
}

func TestLaplacePLD(t *testing.T) {
	for _, eps0 := range []float64{0.1, 1, 3.3} {
		p, err := ComposePLD(Charge{LaplaceEvent{Epsilon: eps0}, 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []float64{-0.5, 0, 0.2, 0.5, 0.9, 0.99} {
			eps := f * eps0
			got, _ := p.Delta(eps)
			want := laplaceDelta(eps0, eps)
			if got < want*(1-1e-12) || got > want+1e-6 {
				t.Errorf("ε₀ = %v, ε = %v: PLD δ = %.10g, closed form %.10g", eps0, eps, got, want)
			}
		}
		// One Laplace release is ε₀-DP and no better at any δ > 0 small.
		e, err := p.Epsilon(1e-9)
		if err != nil || e < eps0*(1-1e-6) || e > eps0+pldInterval {
			t.Errorf("ε₀ = %v: PLD ε(1e-9) = %v (%v)", eps0, e, err)
		}
	}
}

// convolve is the direct convolution of two PMFs on the same grid.
func convolve(a, b lossPMF) lossPMF {
	m := make([]float64, len(a.mass)+len(b.mass)-1)
	for i, x := range a.mass {
		for j, y := range b.mass {
			m[i+j] += x * y
		}
	}
	return lossPMF{h: a.h, lo: a.lo + b.lo, mass: m, inf: 1 - (1-a.inf)*(1-b.inf)}
}

func TestComposeMatchesDirectConvolution(t *testing.T) {
	h := 1e-2
	lap, _, err := discretize(laplaceProfile{0.7}, laplaceProfile{0.7}, h, 1e-18)
	if err != nil {
		t.Fatal(err)
	}
	sgm, _, err := discretize(subsampledUp{0.2, 0.9}, subsampledDown{0.2, 0.9}, h, 1e-18)
	if err != nil {
		t.Fatal(err)
	}
	want := convolve(convolve(convolve(lap, lap), sgm), convolve(sgm, sgm))
	r, err := compose([]lossPMF{lap, sgm}, []int{2, 3}, 1e-16)
	if err != nil {
		t.Fatal(err)
	}
	for _, eps := range []float64{0, 0.5, 1, 2, 3} {
		got, w := r.pmf.delta(eps), want.delta(eps)
		if got < w-1e-12 || got > w+1e-9 {
			t.Errorf("ε = %v: FFT δ = %.12g, direct %.12g", eps, got, w)
		}
	}
	// The read-outs invert each other.
	for _, d := range []float64{1e-2, 1e-4, 1e-6} {
		eps := r.pmf.epsilon(d)
		if back := r.pmf.delta(eps); math.Abs(back-d) > 1e-9*d {
			t.Errorf("δ(ε(%g)) = %g", d, back)
		}
	}
}

// TestPLDPublishedDPSGD holds the accountant to dp_accounting's PLD
// figures for DP-SGD on MNIST (q = 256/60000, σ = 1.1, δ = 1e-5,
// discretization 1e-4), given to four significant figures: 60 epochs
// (14,063 steps) ε = 2.382 and 15 epochs (3,516 steps) ε = 1.13. The
// extrapolation of this accountant's ε over grid steps 4e-4 … 5e-5
// (second-order convergence) puts the exact ε at 2.38169, inside the
// rounding interval of the published 2.382, so the lower limit here is
// that interval's lower end. RDP, also an upper bound, must not be
// tighter.
func TestPLDPublishedDPSGD(t *testing.T) {
	for _, c := range []struct {
		steps   int
		want    float64
		atLeast float64
	}{{14063, 2.382, 2.3815}, {3516, 1.13, 1.125}} {
		ev := GaussianEvent{Multiplier: 1.1, Sampling: Poisson(256.0 / 60000)}
		got, err := EpsilonPLD(ev, c.steps, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if got < c.atLeast || got > c.want*1.01 {
			t.Errorf("%d steps: PLD ε = %.6g, dp_accounting %v", c.steps, got, c.want)
		}
		for _, orders := range [][]float64{DefaultOrders(), DenseOrders()} {
			rdp, _, err := EpsilonAfter(ev, c.steps, 1e-5, orders)
			if err != nil || got > rdp {
				t.Errorf("%d steps: PLD ε = %.6g above RDP's %.6g over %d orders (%v)", c.steps, got, rdp, len(orders), err)
			}
		}
	}
}

func TestPLDBelowRDP(t *testing.T) {
	for _, ev := range []Event{
		GaussianEvent{Multiplier: 1, Sampling: Unamplified()},
		GaussianEvent{Multiplier: 0.8, Sampling: Poisson(0.01)},
		LaplaceEvent{Epsilon: 0.3},
	} {
		for _, n := range []int{1, 30} {
			pld, err := EpsilonPLD(ev, n, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			rdp, _, err := EpsilonAfter(ev, n, 1e-5, DenseOrders())
			if err != nil || pld > rdp {
				t.Errorf("%+v × %d: PLD ε = %v, RDP %v (%v)", ev, n, pld, rdp, err)
			}
		}
	}
}

func TestPLDErrors(t *testing.T) {
	for _, c := range [][]Charge{
		nil,
		{{GaussianEvent{Multiplier: 0, Sampling: Unamplified()}, 1}},
		{{LaplaceEvent{Epsilon: -1}, 1}},
		{{LaplaceEvent{Epsilon: 1}, -1}},
		{{nil, 1}},
	} {
		if _, err := ComposePLD(c...); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	// Too wide for the largest FFT even at the coarsest grid.
	if _, err := ComposePLD(Charge{LaplaceEvent{Epsilon: 1}, 1_000_000_000}); err == nil || !strings.Contains(err.Error(), "too wide") {
		t.Errorf("a composition wider than the FFT: %v", err)
	}
	// A δ below what truncation already lost.
	p, err := ComposePLD(Charge{GaussianEvent{Multiplier: 1.1, Sampling: Poisson(0.01)}, 1000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Epsilon(1e-17); err == nil || !strings.Contains(err.Error(), "tolerance") {
		t.Errorf("δ = 1e-17: %v", err)
	}
	if _, err := p.Epsilon(0); err == nil {
		t.Error("δ = 0 accepted")
	}
}

func BenchmarkPLD100kSteps(b *testing.B) {
	ev := GaussianEvent{Multiplier: 1.1, Sampling: Poisson(256.0 / 60000)}
	for b.Loop() {
		p, err := ComposePLD(Charge{ev, 100_000})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Epsilon(1e-5); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCalibrateWithPLD(t *testing.T) {
	if testing.Short() {
		t.Skip("a PLD calibration of 15 epochs of DP-SGD: 3.4 s; the full suite runs it")
	}
	// DP-SGD on MNIST for 15 epochs: PLD needs less noise than RDP for
	// ε = 1.13, and the σ it returns meets the target by PLD.
	s := Poisson(256.0 / 60000)
	zp, err := CalibrateWith(MethodPLD, 1.13, 1e-5, 3516, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := CalibrateWith(MethodRDP, 1.13, 1e-5, 3516, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := EpsilonPLD(GaussianEvent{Multiplier: zp, Sampling: s}, 3516, 1e-5)
	if err != nil || eps > 1.13 || eps < 1.13*0.999 || !(zp < zr) {
		t.Errorf("σ by PLD %v (its ε %v, %v), by RDP %v", zp, eps, err, zr)
	}
	// σ = 1.1 gives 1.1339 by PLD, so the calibrated σ is just above it.
	if zp < 1.1 || zp > 1.12 {
		t.Errorf("σ by PLD for ε = 1.13: %v, want just above 1.1", zp)
	}
	if _, err := CalibrateWith("prv", 1, 1e-5, 10, s, nil); err == nil {
		t.Error("an unknown accountant accepted")
	}
}

func TestQuestionSideBySide(t *testing.T) {
	q := Question{Sigma: 1.1, Q: 256.0 / 60000, Steps: 14063, Delta: 1e-5}
	a, err := q.Answer()
	if err != nil {
		t.Fatal(err)
	}
	if a.Accountant != MethodRDP || a.Epsilon != a.RDPEpsilon || a.PLDEpsilon == nil || !(*a.PLDEpsilon < a.RDPEpsilon) {
		t.Fatalf("answer %+v", a)
	}
	if s := a.String(); !strings.Contains(s, "by RDP") || !strings.Contains(s, "PLD: ε = 2.382") {
		t.Errorf("sentence %q", s)
	}
	q.Accountant = MethodPLD
	b, err := q.Answer()
	if err != nil || b.Accountant != MethodPLD || b.Epsilon != *a.PLDEpsilon || !strings.Contains(b.String(), "by PLD; RDP: ε = ") {
		t.Errorf("PLD answer %+v (%v): %s", b, err, b)
	}
	// A δ the PLD accountant cannot meet: RDP's bound, named.
	c, err := Question{Sigma: 1.1, Q: 0.01, Steps: 100, Delta: 1e-19, Accountant: MethodPLD}.Answer()
	if err != nil || c.Accountant != MethodRDP || c.PLDEpsilon != nil || c.PLDError == "" || !strings.Contains(c.String(), "the RDP bound is printed") {
		t.Errorf("fallback answer %+v (%v): %s", c, err, c)
	}
	if _, err := (Question{Sigma: 1, Q: 1, Steps: 1, Delta: 1e-5, Accountant: "prv"}).Answer(); err == nil {
		t.Error("an unknown accountant accepted")
	}
}

// Extreme settings give an ε or an error, never a panic or a hang.
func TestPLDExtremeSettings(t *testing.T) {
	for _, z := range []float64{1e-8, 0.05, 1e8} {
		for _, s := range []Sampling{Poisson(1e-12), Poisson(0.5), Unamplified()} {
			for _, n := range []int{1, 1e9} {
				if z == 0.05 && n > 1 && s.Rate() < 1 {
					continue // seconds of FFTs before the error
				}
				eps, err := EpsilonPLD(GaussianEvent{Multiplier: z, Sampling: s}, n, 1e-5)
				if err == nil && (math.IsNaN(eps) || eps < 0) {
					t.Errorf("z %v %v × %d: ε = %v", z, s, n, eps)
				}
			}
		}
	}
	for _, e := range []float64{1e-9, 1e300} {
		if eps, err := EpsilonPLD(LaplaceEvent{Epsilon: e}, 3, 1e-5); err == nil && (math.IsNaN(eps) || eps > 3*e*(1+1e-9)+1e-3) {
			t.Errorf("laplace %v: ε = %v", e, eps)
		}
	}
}
