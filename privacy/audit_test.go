package privacy

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestClopperPearsonClosedForms(t *testing.T) {
	// Clopper–Pearson with no successes in 10 trials: the one-sided 97.5 %
	// upper end is 1 − 0.025^{1/10}.
	if got, want := clopperPearsonUpper(0, 10, 0.025), 1-math.Pow(0.025, 0.1); math.Abs(got-want) > 1e-12 {
		t.Errorf("CP upper(0/10) = %v, want %v", got, want)
	}
	if got, want := clopperPearsonLower(10, 10, 0.025), math.Pow(0.025, 0.1); math.Abs(got-want) > 1e-12 {
		t.Errorf("CP lower(10/10) = %v, want %v", got, want)
	}
}

func normalQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

// gaussianDPEpsilon is the exact ε(δ) of μ-GDP, the privacy of one release
// of the Gaussian mechanism with sensitivity/σ = μ (Dong, Roth and Su 2019,
// Cor. 2.13: δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)), inverted by
// bisection.
func gaussianDPEpsilon(mu, delta float64) float64 {
	dOf := func(e float64) float64 {
		return normalCDF(-e/mu+mu/2) - math.Exp(e)*normalCDF(-e/mu-mu/2)
	}
	lo, hi := 0.0, 50.0
	for dOf(hi) > delta {
		lo, hi = hi, 2*hi
	}
	for range 200 {
		mid := (lo + hi) / 2
		if dOf(mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// TestAuditOnShiftedGaussians: member losses N(0, 1), non-member losses
// N(μ, 1). Then AUC = Φ(μ/√2), TPR at 1 % FPR = Φ(μ − Φ⁻¹(0.99)), the best
// advantage is 2Φ(μ/2) − 1, and the attack faces exactly the trade-off of
// μ-GDP, so the certified lower bound may not exceed its ε(δ). (The point
// estimate may: it is a maximum over thresholds of noisy ratios.)
func TestAuditOnShiftedGaussians(t *testing.T) {
	const n = 20000
	r := rand.New(rand.NewPCG(41, 42))
	for _, mu := range []float64{0.5, 1, 2} {
		mem, non := make([]float64, n), make([]float64, n)
		for i := range mem {
			mem[i] = r.NormFloat64()
			non[i] = mu + r.NormFloat64()
		}
		delta := 1e-3
		res, err := LossThresholdAudit(mem, non, delta, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		auc := normalCDF(mu / math.Sqrt2)
		tpr := normalCDF(mu - normalQuantile(0.99))
		adv := 2*normalCDF(mu/2) - 1
		trueEps := gaussianDPEpsilon(mu, delta)
		t.Logf("μ=%g: AUC %.4f (exact %.4f), TPR@1%% %.4f (%.4f), advantage %.4f (%.4f), ε point %.3f, ε lower %.3f, true ε(δ) %.3f",
			mu, res.AUC, auc, res.TPRAt1FPR, tpr, res.Advantage, adv, res.EpsilonPoint, res.EpsilonLower, trueEps)
		// Standard errors at n = 20000: AUC ≈ 0.003, the rates ≈ 0.003–0.005.
		if math.Abs(res.AUC-auc) > 0.015 || math.Abs(res.TPRAt1FPR-tpr) > 0.03 || math.Abs(res.Advantage-adv) > 0.03 {
			t.Errorf("μ=%g: AUC %v (want %v), TPR@1%% %v (want %v), advantage %v (want %v)", mu, res.AUC, auc, res.TPRAt1FPR, tpr, res.Advantage, adv)
		}
		if res.EpsilonLower > trueEps || res.EpsilonLower <= 0 {
			t.Errorf("μ=%g: certified lower bound %v, true ε %v", mu, res.EpsilonLower, trueEps)
		}
	}
}

// TestAuditOnIdenticalLaws: with no leakage the AUC is ½ and the certified
// bound is (close to) zero.
func TestAuditOnIdenticalLaws(t *testing.T) {
	const n = 5000
	r := rand.New(rand.NewPCG(7, 7))
	mem, non := make([]float64, n), make([]float64, n)
	for i := range mem {
		mem[i], non[i] = r.ExpFloat64(), r.ExpFloat64()
	}
	res, err := LossThresholdAudit(mem, non, 1e-5, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.AUC-0.5) > 0.03 || res.EpsilonLower > 0.1 {
		t.Errorf("identical laws: AUC %v, certified ε %v", res.AUC, res.EpsilonLower)
	}
}

// TestAuditTiesAndExtremes: ties count half in the AUC; separated losses
// give AUC 1; errors for empty or NaN input.
func TestAuditTiesAndExtremes(t *testing.T) {
	res, _ := LossThresholdAudit([]float64{1, 1}, []float64{1, 1}, 0, 0.05)
	if res.AUC != 0.5 {
		t.Errorf("all tied: AUC %v", res.AUC)
	}
	res, _ = LossThresholdAudit([]float64{0, 0.1, 0.2}, []float64{1, 2, 3}, 0, 0.05)
	if res.AUC != 1 || res.Advantage != 1 || res.TPRAt1FPR != 1 {
		t.Errorf("separated: %+v", res)
	}
	if _, err := LossThresholdAudit(nil, []float64{1}, 0, 0.05); err == nil {
		t.Error("no members accepted")
	}
	if _, err := LossThresholdAudit([]float64{math.NaN()}, []float64{1}, 0, 0.05); err == nil {
		t.Error("NaN accepted")
	}
}
