package privacy

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestLogitConfidence(t *testing.T) {
	for _, c := range []struct{ loss, want float64 }{
		{math.Ln2, 0},                 // p = 1/2
		{-math.Log(0.9), math.Log(9)}, // p = 0.9
		{-math.Log(0.1), -math.Log(9)},
		{0, -math.Log(math.Expm1(1e-15))}, // clamped
		{30, -math.Log(math.Expm1(30))},   // either side of the switch: the same value
		{30.5, -math.Log(math.Expm1(30.5))},
		{800, -800}, // e^800 overflows: −800 − log(1 − e^−800) = −800 to float64's precision
		{1e6, -1e6},
	} {
		if got := LogitConfidence(c.loss); math.Abs(got-c.want) > 1e-12*max(1, math.Abs(c.want)) {
			t.Errorf("LogitConfidence(%v) = %v, want %v", c.loss, got, c.want)
		}
	}
	if got := logNormal(1, 0, 4); math.Abs(got-(-0.125-0.5*math.Log(8*math.Pi))) > 1e-15 {
		t.Errorf("logNormal(1; 0, 4) = %v", got)
	}
}

// liraWorld draws a pool of n examples whose statistic is N(μ_e + d, σ²_in)
// in a model that saw example e and N(μ_e, σ²_out) in one that did not,
// the example's difficulty μ_e ~ N(0, spread²) — what makes a global
// threshold weak and LiRA's per-example calibration strong — with k
// shadows (each example in with probability 1/2) and a target whose
// members are a fair coin per example.
func liraWorld(r *rand.Rand, n, k int, d, sdIn, sdOut, spread float64) (shadows []Shadow, target []float64, member []bool) {
	mu := make([]float64, n)
	for e := range mu {
		mu[e] = spread * r.NormFloat64()
	}
	draw := func(e int, in bool) float64 {
		if in {
			return mu[e] + d + sdIn*r.NormFloat64()
		}
		return mu[e] + sdOut*r.NormFloat64()
	}
	for range k {
		s := Shadow{Phi: make([]float64, n), In: make([]bool, n)}
		for e := range n {
			s.In[e] = r.IntN(2) == 1
			s.Phi[e] = draw(e, s.In[e])
		}
		shadows = append(shadows, s)
	}
	target, member = make([]float64, n), make([]bool, n)
	for e := range n {
		member[e] = r.IntN(2) == 1
		target[e] = draw(e, member[e])
	}
	return shadows, target, member
}

func split(scores []float64, member []bool) (in, out []float64) {
	for e, s := range scores {
		if member[e] {
			in = append(in, s)
		} else {
			out = append(out, s)
		}
	}
	return in, out
}

// TestLiRAOnGaussiansEqualVariance: with σ_in = σ_out = σ the likelihood
// ratio is monotone in φ − μ_e, so the ideal attack's ROC is the binormal
// one with separation d/σ: AUC = Φ(d/(σ√2)), TPR at FPR f =
// 1 − Φ(Φ⁻¹(1 − f) − d/σ). LiRA with a fixed variance, fitted on 128
// shadows (64 under -short, with twice the tolerances), must reach it (its means are estimated from ≈ 64 shadows each,
// which costs a relative ≈ 1.6 % of the separation); the uncalibrated
// threshold on φ itself sees the spread of μ_e as noise and must not.
// liraSize is the pool and the shadows of the synthetic tests, and how
// much wider their tolerances are (a quarter of the pool under -short).
func liraSize() (n, k int, slack float64) {
	if testing.Short() {
		return 5000, 64, 2
	}
	return 20000, 128, 1
}

func TestLiRAOnGaussiansEqualVariance(t *testing.T) {
	const d, spread = 1.0, 3.0
	n, k, slack := liraSize()
	r := rand.New(rand.NewPCG(71, 72))
	shadows, target, member := liraWorld(r, n, k, d, 1, 1, spread)
	fit, err := FitLiRA(shadows, true)
	if err != nil {
		t.Fatal(err)
	}
	if v := fit.VarIn[0]; math.Abs(v-1) > 0.02 {
		t.Errorf("pooled in-variance %v, want 1", v)
	}
	scores, err := fit.Scores(target)
	if err != nil {
		t.Fatal(err)
	}
	in, out := split(scores, member)
	res, err := ScoreAudit(in, out, 1e-5, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	auc := normalCDF(d / math.Sqrt2)
	tpr1 := 1 - normalCDF(normalQuantile(0.99)-d)
	tpr01 := 1 - normalCDF(normalQuantile(0.999)-d)
	t.Logf("LiRA: AUC %.4f (closed form %.4f), TPR@1%% %.4f (%.4f), TPR@0.1%% %.4f (%.4f)", res.AUC, auc, res.TPRAt1FPR, tpr1, res.TPRAt01FPR, tpr01)
	// Standard errors at 10⁴ + 10⁴: AUC ≈ 0.004; TPR at 1 % ≈ 0.005 (with
	// the threshold's own noise ≈ 0.01), at 0.1 % ≈ 0.005.
	if math.Abs(res.AUC-auc) > 0.015*slack || math.Abs(res.TPRAt1FPR-tpr1) > 0.025*slack || math.Abs(res.TPRAt01FPR-tpr01) > 0.015*slack {
		t.Errorf("LiRA off its closed-form ROC")
	}
	// The global threshold on φ: binormal with noise √(σ² + spread²).
	pin, pout := split(target, member)
	glob, err := ScoreAudit(pin, pout, 1e-5, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	gauc := normalCDF(d / math.Sqrt(2*(1+spread*spread)))
	t.Logf("global threshold: AUC %.4f (closed form %.4f), TPR@1%% %.4f", glob.AUC, gauc, glob.TPRAt1FPR)
	if math.Abs(glob.AUC-gauc) > 0.015*slack || glob.TPRAt1FPR > res.TPRAt1FPR/2 {
		t.Errorf("global threshold: AUC %v (want %v), TPR@1%% %v against LiRA's %v", glob.AUC, gauc, glob.TPRAt1FPR, res.TPRAt1FPR)
	}
	// The certified bound holds: these statistics are what a model that
	// is ε-DP with ε(δ) of μ-GDP with μ = d would give at best.
	if eps := gaussianDPEpsilon(d, 1e-5); res.EpsilonLower > eps {
		t.Errorf("certified ε ≥ %v above the true ε %v", res.EpsilonLower, eps)
	}
}

// TestLiRAOnGaussiansUnequalVariance: with σ_in = 0.5 < σ_out = 1 the
// ideal test accepts an interval of φ − μ_e (Λ is a concave parabola), so
// for each threshold the ROC point is exact: TPR = Φ((t₂−d)/σ_in) −
// Φ((t₁−d)/σ_in), FPR = Φ(t₂/σ_out) − Φ(t₁/σ_out), [t₁, t₂] = {Λ ≥ c}.
// LiRA with per-example variances (128 shadows) must match it at 1 % FPR
// and in AUC (the integral of that curve), and so must the fixed-variance
// fit: the in and out variances differ, but not between examples, so
// pooling them loses nothing here.
func TestLiRAOnGaussiansUnequalVariance(t *testing.T) {
	const d, sIn, sOut = 1.0, 0.5, 1.0
	n, k, slack := liraSize()
	r := rand.New(rand.NewPCG(81, 82))
	shadows, target, member := liraWorld(r, n, k, d, sIn, sOut, 3)
	// The exact curve: Λ(t) = a t² + b t + c0.
	a := -0.5/(sIn*sIn) + 0.5/(sOut*sOut)
	b := d / (sIn * sIn)
	c0 := -0.5*d*d/(sIn*sIn) - math.Log(sIn/sOut)
	roc := func(c float64) (tpr, fpr float64) {
		disc := b*b - 4*a*(c0-c)
		if disc <= 0 {
			return 0, 0
		}
		t1, t2 := (-b+math.Sqrt(disc))/(2*a), (-b-math.Sqrt(disc))/(2*a)
		if t1 > t2 {
			t1, t2 = t2, t1
		}
		return normalCDF((t2-d)/sIn) - normalCDF((t1-d)/sIn), normalCDF(t2/sOut) - normalCDF(t1/sOut)
	}
	tprAt := func(f float64) float64 { // bisection on c: FPR falls as c grows
		lo, hi := -50.0, 50.0
		for range 200 {
			mid := (lo + hi) / 2
			if _, fp := roc(mid); fp > f {
				lo = mid
			} else {
				hi = mid
			}
		}
		tp, _ := roc(hi)
		return tp
	}
	var auc float64
	pf, pt := 1.0, 1.0
	for j := 0; j <= 4000; j++ {
		tp, fp := roc(-50 + 100*float64(j)/4000)
		auc += (pf - fp) * (pt + tp) / 2
		pf, pt = fp, tp
	}
	auc += pf * pt / 2
	tpr1 := tprAt(0.01)
	for _, fixed := range []bool{false, true} {
		fit, err := FitLiRA(shadows, fixed)
		if err != nil {
			t.Fatal(err)
		}
		scores, _ := fit.Scores(target)
		in, out := split(scores, member)
		res, err := ScoreAudit(in, out, 1e-5, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("fixed variance %v: AUC %.4f (exact test %.4f), TPR@1%% %.4f (%.4f)", fixed, res.AUC, auc, res.TPRAt1FPR, tpr1)
		// Standard errors: AUC ≈ 0.004, TPR at 1 % ≈ 0.002 (plus the
		// threshold's noise).
		if math.Abs(res.AUC-auc) > 0.015*slack || math.Abs(res.TPRAt1FPR-tpr1) > 0.01*slack {
			t.Errorf("fixed variance %v: off the exact ROC", fixed)
		}
	}
}

func TestFitLiRAErrors(t *testing.T) {
	if _, err := FitLiRA(nil, true); err == nil {
		t.Error("no shadows accepted")
	}
	all := []Shadow{{Phi: []float64{1, 2}, In: []bool{true, true}}}
	if _, err := FitLiRA(all, true); err == nil {
		t.Error("shadows with no out statistic accepted")
	}
	bad := []Shadow{{Phi: []float64{1, 2}, In: []bool{true, false}}, {Phi: []float64{1}, In: []bool{true}}}
	if _, err := FitLiRA(bad, true); err == nil {
		t.Error("shadows of different pools accepted")
	}
	nan := []Shadow{{Phi: []float64{math.NaN(), 2}, In: []bool{true, false}}}
	if _, err := FitLiRA(nan, true); err == nil {
		t.Error("a NaN statistic accepted")
	}
}
