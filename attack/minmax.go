package attack

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Perturbation is the direction p of min_max and min_sum (Shejwalkar and
// Houmansadr 2021, §4): the attackers send μ − γp.
type Perturbation string

// The perturbations of the spec.
const (
	// UnitVec is μ/||μ|| (the zero vector when μ = 0); the default.
	UnitVec Perturbation = "unit_vec"
	// Std is σ, the per-coordinate sample standard deviation (normalized by
	// |G| − 1) of the honest payloads; it needs two of them.
	Std Perturbation = "std"
	// Sign is sign(μ) per coordinate (0 where μ_j = 0).
	Sign Perturbation = "sign"
)

func (p Perturbation) orDefault() Perturbation {
	if p == "" {
		return UnitVec
	}
	return p
}

func checkGamma(name string, p Perturbation, gammaInit float64) error {
	switch p.orDefault() {
	case UnitVec, Std, Sign:
	default:
		return fmt.Errorf("attack %s: perturbation = %q, allowed values %q, %q, %q (\"\" means %q)", name, string(p), UnitVec, Std, Sign, UnitVec)
	}
	if !(gammaInit >= 0 && gammaInit <= MaxGammaInit) {
		return fmt.Errorf("attack %s: gamma_init = %v, allowed range (0, %g] (0 means %d)", name, gammaInit, float64(MaxGammaInit), DefaultGammaInit)
	}
	return nil
}

// MinMax is Shejwalkar and Houmansadr's min-max attack (NDSS 2021; spec:
// "min_max"): every attacker sends m = μ − γp with the largest γ the search
// finds such that m is no farther from any honest payload than the two
// farthest honest payloads are from each other,
//
//	max_i ||m − g_i||² <= max_{i,j} ||g_i − g_j||²,
//
// found by the paper's bisection (see Gamma). It assumes full knowledge of
// the honest payloads of the round (View.Honest) and ignores the attacker's
// own.
type MinMax struct {
	// Perturbation is p; "" means UnitVec.
	Perturbation Perturbation
	// GammaInit is γ_init, in (0, MaxGammaInit]; 0 means DefaultGammaInit.
	GammaInit float64
}

// MinSum is the min-sum attack of the same paper ("min_sum" in docs/methods/toolbox.md): the
// search of MinMax with the acceptance test
//
//	Σ_i ||m − g_i||² <= min_i Σ_j ||g_i − g_j||²
//
// (m's summed squared distance to the honest payloads is no larger than
// that of the most central honest payload). Same knowledge as MinMax.
type MinSum struct {
	// Perturbation is p; "" means UnitVec.
	Perturbation Perturbation
	// GammaInit is γ_init, in (0, MaxGammaInit]; 0 means DefaultGammaInit.
	GammaInit float64
}

// Name implements Attack.
func (MinMax) Name() string { return "min_max" }

// Name implements Attack.
func (MinSum) Name() string { return "min_sum" }

func (a MinMax) check() error { return checkGamma("min_max", a.Perturbation, a.GammaInit) }
func (a MinSum) check() error { return checkGamma("min_sum", a.Perturbation, a.GammaInit) }

// Gamma returns the γ MinMax sends with against the View's honest payloads,
// and p; Craft sends float32(μ_j − γ p_j).
func (a MinMax) Gamma(v *View) (gamma float64, p []float64, err error) {
	if err := a.check(); err != nil {
		return 0, nil, err
	}
	return searchView("min_max", v, a.Perturbation, a.GammaInit, false)
}

// Gamma returns the γ MinSum sends with against the View's honest payloads,
// and p; Craft sends float32(μ_j − γ p_j).
func (a MinSum) Gamma(v *View) (gamma float64, p []float64, err error) {
	if err := a.check(); err != nil {
		return 0, nil, err
	}
	return searchView("min_sum", v, a.Perturbation, a.GammaInit, true)
}

// Craft implements Attack.
func (a MinMax) Craft(dst []float32, v *View, honest []float32, _, _ int, _ *rand.Rand) error {
	if err := a.check(); err != nil {
		return err
	}
	return craftMinMax("min_max", fmt.Sprintf("%#v", a), dst, v, honest, a.Perturbation, a.GammaInit, false)
}

// Craft implements Attack.
func (a MinSum) Craft(dst []float32, v *View, honest []float32, _, _ int, _ *rand.Rand) error {
	if err := a.check(); err != nil {
		return err
	}
	return craftMinMax("min_sum", fmt.Sprintf("%#v", a), dst, v, honest, a.Perturbation, a.GammaInit, true)
}

func craftMinMax(name, key string, dst []float32, v *View, honest []float32, pert Perturbation, gammaInit float64, sum bool) error {
	if err := checkLen(name, dst, honest); err != nil {
		return err
	}
	g, err := honestOf(name, v, len(dst))
	if err != nil {
		return err
	}
	return memoVector(v, key, dst, func(out []float32) error {
		gamma, p, err := searchView(name, v, pert, gammaInit, sum)
		if err != nil {
			return err
		}
		mu := momentsOf(v, g).mean
		for j := range out {
			out[j] = float32(mu[j] - gamma*p[j])
		}
		return nil
	})
}

// perturbation returns p for the moments of G.
func perturbation(name string, pert Perturbation, m *moments) ([]float64, error) {
	p := make([]float64, len(m.mean))
	switch pert.orDefault() {
	case UnitVec:
		var ss float64
		for _, x := range m.mean {
			ss += x * x
		}
		if ss > 0 {
			norm := math.Sqrt(ss)
			for j, x := range m.mean {
				p[j] = x / norm
			}
		}
	case Std:
		if m.k < 2 {
			return nil, fmt.Errorf("attack %s: perturbation %q needs at least 2 honest payloads for the sample standard deviation, the view has %d", name, Std, m.k)
		}
		for j := range p {
			p[j] = m.std(j, true)
		}
	case Sign:
		for j, x := range m.mean {
			switch {
			case x > 0:
				p[j] = 1
			case x < 0:
				p[j] = -1
			}
		}
	}
	return p, nil
}

// searchView runs the search against the View's honest payloads G
// (checked by the caller for Craft, here for Gamma).
//
// With μ and p fixed, ||μ − γp − g_i||² = a_i − 2γ b_i + γ² c, where
// a_i = ||μ − g_i||², b_i = <μ − g_i, p> and c = ||p||², so the quantities
// are computed once, in O(|G| d), and each acceptance test costs O(|G|).
// min_sum's threshold uses Σ_j ||g_i − g_j||² = |G| a_i + Σ_j a_j, also
// O(|G| d); min_max's max_{i,j} ||g_i − g_j||² is the one O(|G|² d) step.
func searchView(name string, v *View, pert Perturbation, gammaInit float64, sum bool) (float64, []float64, error) {
	if v == nil || len(v.Honest) == 0 {
		return 0, nil, fmt.Errorf("attack %s: %w (the driver fills View.Honest with the round's honest payloads)", name, ErrNoView)
	}
	g, err := honestOf(name, v, len(v.Honest[0]))
	if err != nil {
		return 0, nil, err
	}
	m := momentsOf(v, g)
	p, err := perturbation(name, pert, m)
	if err != nil {
		return 0, nil, err
	}
	k := len(g)
	a, b := make([]float64, k), make([]float64, k)
	var c float64
	for _, x := range p {
		c += x * x
	}
	for i, x := range g {
		for j, y := range x {
			e := m.mean[j] - float64(y)
			a[i] += e * e
			b[i] += e * p[j]
		}
	}
	var accept func(gamma float64) bool
	if sum {
		var sa, sb, mina float64
		mina = math.Inf(1)
		for i := range a {
			sa += a[i]
			sb += b[i]
			mina = min(mina, a[i])
		}
		threshold := float64(k)*mina + sa
		accept = func(gamma float64) bool {
			return sa-2*gamma*sb+float64(k)*gamma*gamma*c <= threshold
		}
	} else {
		threshold := maxPairSqDist(v, g)
		accept = func(gamma float64) bool {
			for i := range a {
				if a[i]-2*gamma*b[i]+gamma*gamma*c > threshold {
					return false
				}
			}
			return true
		}
	}
	if gammaInit == 0 {
		gammaInit = DefaultGammaInit
	}
	return searchGamma(gammaInit, accept), p, nil
}

// gammaTol is the stopping tolerance |γ_succ − γ| <= 1e-5.
const gammaTol = 1e-5

// searchGamma is the paper's bisection (Shejwalkar and Houmansadr 2021,
// Algorithm 1):
//
//	γ = γ_init, step = γ_init, γ_succ = 0
//	while |γ_succ − γ| > 1e-5:
//	    if accept(γ): γ_succ = γ; γ += step/2 else γ −= step/2
//	    step /= 2
//
// In exact arithmetic γ − γ_succ = step after every pass, so the loop runs
// ceil(log2(γ_init/1e-5)) passes and never accepts γ ≥ 2γ_init; the last
// rejected γ (if any) is γ_succ + 2·step, so for a test that accepts an
// interval [0, γ*] the result is within 2e-5 below γ*. The cap of 200
// passes only guards against rounding once step falls below γ's ulp.
func searchGamma(gammaInit float64, accept func(float64) bool) float64 {
	gamma, step, succ := gammaInit, gammaInit, 0.0
	for pass := 0; pass < 200 && math.Abs(succ-gamma) > gammaTol; pass++ {
		if accept(gamma) {
			succ = gamma
			gamma += step / 2
		} else {
			gamma -= step / 2
		}
		step /= 2
	}
	return succ
}
