package privacy

import (
	"fmt"
	"math"
)

// This file is the likelihood-ratio attack LiRA (Carlini, Chien, Nasr,
// Song, Terzis and Tramèr 2022, "Membership Inference Attacks From First
// Principles", IEEE S&P, Sec. IV, the online attack). K shadow models are
// trained on random subsets of a pool of examples, so that each example is
// in some shadows' training sets and out of the others'. For each example
// e, its logit-scaled confidence φ = log(p/(1 − p)) (p the model's
// probability of the true label) under the shadows that saw it and under
// those that did not are fitted with Gaussians N(μ_in,e, σ²_in) and
// N(μ_out,e, σ²_out); the target model's φ_e is scored by the likelihood
// ratio
//
//	Λ_e = log N(φ_e; μ_in,e, σ²_in) − log N(φ_e; μ_out,e, σ²_out),
//
// higher for a member. The per-example means are what makes the attack
// strong at low false-positive rates: an example that every model fits
// well is not mistaken for a member. With few shadows (Carlini et al. use
// a "fixed variance" below 64) the variances are pooled over examples —
// the mean squared deviation from each example's own mean — and the
// per-example variance is an option.

// LogitConfidence is LiRA's statistic for a sample whose cross-entropy loss
// is loss = −log p: φ = log(p/(1 − p)) = −log(e^loss − 1), with loss
// clamped at 10⁻¹⁵ from below (a loss that rounds to 0), so φ ≤ 34.5.
// Above a loss of 30 it is computed as −loss − log(1 − e^−loss), which
// stays finite where e^loss overflows (a loss past 709.8: a model made
// useless by DP noise is still scored, far below every member).
func LogitConfidence(loss float64) float64 {
	if loss > 30 {
		return -loss - math.Log1p(-math.Exp(-loss))
	}
	return -math.Log(math.Expm1(max(loss, 1e-15)))
}

// Shadow is one shadow model's statistics on the pool: Phi[e] its
// logit-scaled confidence on example e, In[e] whether e was in its
// training set.
type Shadow struct {
	Phi []float64
	In  []bool
}

// LiRAFit is the fitted per-example Gaussians.
type LiRAFit struct {
	MuIn, MuOut []float64
	// VarIn and VarOut are per example; with a fixed variance every entry
	// is the pooled value.
	VarIn, VarOut []float64
	// Counts of the shadows in and out per example.
	NIn, NOut []int
}

// FitLiRA fits the in and out Gaussians of every example from the
// shadows (all over the same pool). An example no shadow saw (or every
// shadow saw) takes the mean of that side over the whole pool. With
// fixedVariance the variances are pooled over examples (within-example
// deviations); otherwise each example's own, floored at the pooled one
// times 10⁻² (two shadows can agree to many digits).
func FitLiRA(shadows []Shadow, fixedVariance bool) (*LiRAFit, error) {
	if len(shadows) == 0 {
		return nil, fmt.Errorf("lira: no shadow models")
	}
	n := len(shadows[0].Phi)
	for k, s := range shadows {
		if len(s.Phi) != n || len(s.In) != n {
			return nil, fmt.Errorf("lira: shadow %d has %d statistics and %d memberships, shadow 0 %d", k, len(s.Phi), len(s.In), n)
		}
		for e, v := range s.Phi {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("lira: shadow %d, example %d: statistic %v", k, e, v)
			}
		}
	}
	f := &LiRAFit{MuIn: make([]float64, n), MuOut: make([]float64, n), VarIn: make([]float64, n), VarOut: make([]float64, n),
		NIn: make([]int, n), NOut: make([]int, n)}
	var sumIn, sumOut float64
	var cntIn, cntOut int
	for _, s := range shadows {
		for e, v := range s.Phi {
			if s.In[e] {
				f.MuIn[e] += v
				f.NIn[e]++
				sumIn += v
				cntIn++
			} else {
				f.MuOut[e] += v
				f.NOut[e]++
				sumOut += v
				cntOut++
			}
		}
	}
	if cntIn == 0 || cntOut == 0 {
		return nil, fmt.Errorf("lira: %d in and %d out statistics over all shadows, need both", cntIn, cntOut)
	}
	for e := range n {
		if f.NIn[e] > 0 {
			f.MuIn[e] /= float64(f.NIn[e])
		} else {
			f.MuIn[e] = sumIn / float64(cntIn)
		}
		if f.NOut[e] > 0 {
			f.MuOut[e] /= float64(f.NOut[e])
		} else {
			f.MuOut[e] = sumOut / float64(cntOut)
		}
	}
	// Within-example squared deviations, per example and pooled (an
	// example seen by one shadow on a side contributes nothing there).
	var ssIn, ssOut float64
	var dfIn, dfOut int
	for _, s := range shadows {
		for e, v := range s.Phi {
			if s.In[e] {
				d := v - f.MuIn[e]
				f.VarIn[e] += d * d
			} else {
				d := v - f.MuOut[e]
				f.VarOut[e] += d * d
			}
		}
	}
	for e := range n {
		ssIn += f.VarIn[e]
		ssOut += f.VarOut[e]
		dfIn += max(0, f.NIn[e]-1)
		dfOut += max(0, f.NOut[e]-1)
	}
	if dfIn == 0 || dfOut == 0 {
		return nil, fmt.Errorf("lira: no example is in (or out of) two shadows' training sets; more shadows are needed")
	}
	poolIn, poolOut := max(ssIn/float64(dfIn), 1e-12), max(ssOut/float64(dfOut), 1e-12)
	for e := range n {
		if fixedVariance || f.NIn[e] < 2 {
			f.VarIn[e] = poolIn
		} else {
			f.VarIn[e] = max(f.VarIn[e]/float64(f.NIn[e]-1), poolIn*1e-2)
		}
		if fixedVariance || f.NOut[e] < 2 {
			f.VarOut[e] = poolOut
		} else {
			f.VarOut[e] = max(f.VarOut[e]/float64(f.NOut[e]-1), poolOut*1e-2)
		}
	}
	return f, nil
}

// Score is the likelihood ratio Λ_e of the target model's statistic phi
// on example e (higher: more likely a member).
func (f *LiRAFit) Score(e int, phi float64) float64 {
	return logNormal(phi, f.MuIn[e], f.VarIn[e]) - logNormal(phi, f.MuOut[e], f.VarOut[e])
}

// Scores is Score for every example of the pool.
func (f *LiRAFit) Scores(target []float64) ([]float64, error) {
	if len(target) != len(f.MuIn) {
		return nil, fmt.Errorf("lira: %d target statistics for a pool of %d", len(target), len(f.MuIn))
	}
	out := make([]float64, len(target))
	for e, v := range target {
		if math.IsNaN(v) {
			return nil, fmt.Errorf("lira: target statistic %d is NaN", e)
		}
		out[e] = f.Score(e, v)
	}
	return out, nil
}

// logNormal is the log density of N(mu, v) at x.
func logNormal(x, mu, v float64) float64 {
	d := x - mu
	return -0.5 * (d*d/v + math.Log(2*math.Pi*v))
}

// ScoreAudit is LossThresholdAudit for scores that are higher for members
// (a likelihood ratio): the same ROC statistics and certified ε lower
// bound, with "guess member when the score is at least τ".
func ScoreAudit(member, nonMember []float64, delta, alpha float64) (AuditResult, error) {
	neg := func(x []float64) []float64 {
		out := make([]float64, len(x))
		for i, v := range x {
			out[i] = -v
		}
		return out
	}
	r, err := LossThresholdAudit(neg(member), neg(nonMember), delta, alpha)
	r.Threshold = -r.Threshold
	return r, err
}
