package privacy

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/trellis-fl/trellis/internal/special"
)

// This file is the core of the leakage audit: the loss-threshold
// membership-inference attack (Yeom, Giacomelli, Fredrikson and Jha 2018,
// "Privacy Risk in Machine Learning", Sec. 3.2) on the per-sample losses of
// a released model, and the ε it proves the model cannot be below.
//
// A sample is guessed a member when its loss is at most a threshold τ.
// For an (ε, δ)-DP training procedure every such test satisfies
// (Kairouz, Oh and Viswanath 2015, Thm. 2.1; the auditing form of
// Jagielski, Ullman and Oprea 2020, "Auditing Differentially Private
// Machine Learning", Sec. 3):
//
//	TPR ≤ e^ε·FPR + δ   and   1 − FPR ≤ e^ε·(1 − TPR) + δ,
//
// so ε ≥ max( log((TPR − δ)/FPR), log((1 − FPR − δ)/(1 − TPR)) ).
// With finitely many samples TPR and FPR are estimates: the bound that
// holds with confidence 1 − α uses the Clopper–Pearson lower end of TPR
// and upper end of FPR (each at level α/2).

// AuditResult is what the loss-threshold attack achieved.
type AuditResult struct {
	Members, NonMembers int
	// AUC is the area under the ROC curve: the probability that a random
	// member's loss is below a random non-member's (ties count half).
	AUC float64
	// TPRAt1FPR is the largest true-positive rate over thresholds whose
	// false-positive rate is at most 1 %; TPRAt01FPR at most 0.1 %
	// (meaningful only with thousands of non-members: below 1000 it is the
	// TPR at no false positive).
	TPRAt1FPR  float64
	TPRAt01FPR float64
	// Advantage is max over thresholds of TPR − FPR (Yeom et al.'s
	// membership advantage).
	Advantage float64
	// EpsilonPoint is the largest ε lower bound over thresholds computed
	// from the observed rates themselves (an estimate, not a guarantee).
	EpsilonPoint float64
	// EpsilonLower is an ε lower bound that holds with confidence
	// 1 − alpha: the threshold is chosen on half of the samples and
	// certified (Clopper–Pearson) on the other half.
	EpsilonLower float64
	// Threshold is the loss threshold EpsilonLower certifies.
	Threshold float64
}

// LossThresholdAudit runs the attack on the losses of members (training
// samples) and non-members (held-out samples) at δ and confidence 1 − alpha.
func LossThresholdAudit(member, nonMember []float64, delta, alpha float64) (AuditResult, error) {
	if len(member) == 0 || len(nonMember) == 0 {
		return AuditResult{}, fmt.Errorf("audit: %d member and %d non-member losses, need both", len(member), len(nonMember))
	}
	if !(delta >= 0 && delta < 1) || !(alpha > 0 && alpha < 1) {
		return AuditResult{}, fmt.Errorf("audit: delta = %v (want [0, 1)), alpha = %v (want (0, 1))", delta, alpha)
	}
	for _, l := range [][]float64{member, nonMember} {
		for i, v := range l {
			if math.IsNaN(v) {
				return AuditResult{}, fmt.Errorf("audit: loss %d is NaN", i)
			}
		}
	}
	m, o := sortedCopy(member), sortedCopy(nonMember)
	nm, no := len(m), len(o)
	res := AuditResult{Members: nm, NonMembers: no}
	var auc float64
	for _, p := range roc(m, o) {
		tpr, fpr := float64(p.tp)/float64(nm), float64(p.fp)/float64(no)
		if fpr <= 0.01 {
			res.TPRAt1FPR = max(res.TPRAt1FPR, tpr)
		}
		if fpr <= 0.001 {
			res.TPRAt01FPR = max(res.TPRAt01FPR, tpr)
		}
		res.Advantage = max(res.Advantage, tpr-fpr)
		res.EpsilonPoint = max(res.EpsilonPoint, epsFromRates(tpr, fpr, delta))
		auc += p.auc
	}
	res.AUC = auc / (float64(nm) * float64(no))
	// Certified bound: pick the threshold on the even-indexed samples (the
	// one whose Clopper–Pearson bound is largest there), certify it on the
	// odd-indexed ones, so that the threshold does not depend on the
	// samples that certify it (samples are assumed in exchangeable order).
	if nm < 2 || no < 2 {
		return res, nil
	}
	sm, so := sortedCopy(every(member, 0)), sortedCopy(every(nonMember, 0))
	cm, co := sortedCopy(every(member, 1)), sortedCopy(every(nonMember, 1))
	pts := roc(sm, so)
	// Four beta quantiles per candidate: up to 512 thresholds spread over
	// the curve and the 64 with the largest point estimates.
	cand := make([]int, 0, 576)
	for k := 0; k < len(pts); k += max(1, len(pts)/512) {
		cand = append(cand, k)
	}
	byEps := make([]int, len(pts))
	for k := range byEps {
		byEps[k] = k
	}
	pe := func(p rocPoint) float64 {
		return epsFromRates(float64(p.tp)/float64(len(sm)), float64(p.fp)/float64(len(so)), delta)
	}
	slices.SortFunc(byEps, func(a, b int) int { return cmp.Compare(pe(pts[b]), pe(pts[a])) })
	cand = append(cand, byEps[:min(64, len(byEps))]...)
	best, tau := -1.0, math.Inf(-1)
	for _, k := range cand {
		p := pts[k]
		if e := EpsilonLowerBound(p.tp, len(sm), p.fp, len(so), delta, alpha); e > best {
			best, tau = e, p.tau
		}
	}
	tp, _ := slices.BinarySearch(cm, math.Nextafter(tau, math.Inf(1)))
	fp, _ := slices.BinarySearch(co, math.Nextafter(tau, math.Inf(1)))
	res.EpsilonLower = EpsilonLowerBound(tp, len(cm), fp, len(co), delta, alpha)
	res.Threshold = tau
	return res, nil
}

// rocPoint is the ROC curve at one distinct loss value τ: tp members and fp
// non-members have loss ≤ τ; auc is this step's contribution to the
// Mann–Whitney count.
type rocPoint struct {
	tp, fp int
	tau    float64
	auc    float64
}

// roc sweeps the thresholds of sorted member and non-member losses in
// increasing order.
func roc(m, o []float64) []rocPoint {
	var pts []rocPoint
	i, j := 0, 0
	for i < len(m) || j < len(o) {
		var tau float64
		if j == len(o) || (i < len(m) && m[i] <= o[j]) {
			tau = m[i]
		} else {
			tau = o[j]
		}
		ti, tj := i, j
		for i < len(m) && m[i] == tau {
			i++
		}
		for j < len(o) && o[j] == tau {
			j++
		}
		// Members at τ beat the non-members above τ and tie those at τ.
		a := float64(i-ti) * (float64(len(o)-j) + 0.5*float64(j-tj))
		pts = append(pts, rocPoint{i, j, tau, a})
	}
	return pts
}

func sortedCopy(x []float64) []float64 {
	c := slices.Clone(x)
	slices.Sort(c)
	return c
}

// every returns x[off], x[off+2], ….
func every(x []float64, off int) []float64 {
	out := make([]float64, 0, (len(x)+1)/2)
	for i := off; i < len(x); i += 2 {
		out = append(out, x[i])
	}
	return out
}

// EpsilonLowerBound is the ε that a test with tp of nm members and fp of no
// non-members flagged proves, with confidence 1 − alpha, at δ: both
// inequalities above evaluated at the Clopper–Pearson lower end of TPR and
// upper end of FPR, each at level alpha/2 (so both hold together with
// probability ≥ 1 − alpha by the union bound). It is 0 when the test proves
// nothing.
func EpsilonLowerBound(tp, nm, fp, no int, delta, alpha float64) float64 {
	// Both inequalities want TPR small and FPR large to be conservative:
	// TPR at its lower end and FPR at its upper end, in both.
	tprLo := clopperPearsonLower(tp, nm, alpha/2)
	fprHi := clopperPearsonUpper(fp, no, alpha/2)
	return max(0, epsBound(tprLo, fprHi, delta), epsBound(1-fprHi, 1-tprLo, delta))
}

// epsFromRates is the bound at the observed rates.
func epsFromRates(tpr, fpr, delta float64) float64 {
	return max(0, epsBound(tpr, fpr, delta), epsBound(1-fpr, 1-tpr, delta))
}

// epsBound is log((a − δ)/b), or 0 where it is undefined or negative
// (b = 0 with a > δ would be ε = ∞ from a point estimate; the confidence
// bounds never give b = 0).
func epsBound(a, b, delta float64) float64 {
	if a-delta <= 0 || b <= 0 {
		return 0
	}
	return max(0, math.Log((a-delta)/b))
}

// clopperPearsonLower is the lower end of the one-sided 1 − a confidence
// interval for a binomial proportion with k successes in n trials
// (Clopper and Pearson 1934): the a-quantile of Beta(k, n − k + 1).
func clopperPearsonLower(k, n int, a float64) float64 {
	if k == 0 {
		return 0
	}
	return special.BetaQuantile(a, float64(k), float64(n-k+1))
}

// clopperPearsonUpper is the upper end: the (1 − a)-quantile of
// Beta(k + 1, n − k).
func clopperPearsonUpper(k, n int, a float64) float64 {
	if k == n {
		return 1
	}
	return special.BetaQuantile(1-a, float64(k+1), float64(n-k))
}
