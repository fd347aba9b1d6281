package strategy

import (
	"bytes"
	"math"
	"testing"
)

// On separable quadratics over an irregular graph, gradient tracking with
// a state-decomposed tracker reaches the closed-form optimum of Σ_i f_i,
// as plain gradient tracking (Metropolis–Hastings) does; D-PSGD with the
// same constant step stops short of it, so the tolerance can tell.
func TestTrackingSDReachesOptimum(t *testing.T) {
	const eta, rounds = 0.2, 1500
	sd := newQuadNet(t, irregularGraph(), 3, eta, func() Strategy { return &GradientTrackingSD{Spread: 1} })
	gt := newQuadNet(t, irregularGraph(), 3, eta, func() Strategy { return &GradientTracking{Weighting: MetropolisHastings} })
	ds := newQuadNet(t, irregularGraph(), 3, eta, func() Strategy { return &DPSGD{Weighting: MetropolisHastings} })
	if e := gt.run(t, rounds); e > 1e-5 {
		t.Errorf("gradient tracking: max |x − x*| = %.3g", e)
	}
	if e := sd.run(t, rounds); e > 1e-5 {
		t.Errorf("gradient tracking with state decomposition: max |x − x*| = %.3g", e)
	}
	if e := ds.run(t, rounds); e < 1e-3 {
		t.Errorf("D-PSGD with a constant step came within %.3g of x*: the check cannot fail", e)
	}
}

// Metamorphic privacy test (the survey, §3.4.2, ref. [122]; the
// construction of consensus.TestDecompIndistinguishable, ref. [164]):
// target i with a neighbour m outside the coalition. The second run gives
// i the objective f_i + ⟨δ, x⟩ and m the objective f_m − ⟨δ, x⟩ (so
// d_i^0 moves by ηδ and d_m^0 by −ηδ), keeps every draw, and changes only
// the first iteration's private weights c_i(0), c_m(0) and a_im(0) (inside
// their range [0.1, 1]) so that every share after it is what it was.
// Every message any other node receives is then the same in both runs,
// for all rounds: they cannot tell the two objectives apart. With plain
// gradient tracking the first tracker message to a neighbour is d_i^0 and
// differs by ηδ.
func TestTrackingSDHidesLinearTerm(t *testing.T) {
	const eta, rounds, seed = 0.1, 60, 11
	const target, other = 0, 3 // an edge of the irregular graph
	mk := func() Strategy { return &GradientTrackingSD{Spread: 1} }
	a := newQuadNet(t, irregularGraph(), seed, eta, mk)
	b := newQuadNet(t, irregularGraph(), seed, eta, mk)
	a.step(t)
	sa, sb := a.strats[target].(*GradientTrackingSD), b.strats[target].(*GradientTrackingSD)
	sm := a.strats[other].(*GradientTrackingSD)

	// Round 0 of the first run, redone by hand: the shares before the
	// first iteration and the draws it used.
	d := len(a.h[0])
	alphaI, alphaM := make([]float64, d), make([]float64, d)
	betaI, betaM := make([]float64, d), make([]float64, d)
	ci, cm, aim := make([]float64, d), make([]float64, d), make([]float64, d)
	delta := make([]float64, d)
	epsI := 1 / float64(1+len(a.adj[target]))
	epsM := 1 / float64(1+len(a.adj[other]))
	epsIM := 1 / float64(1+max(len(a.adj[target]), len(a.adj[other])))
	ui, um := a.sent[msgKey{target, other, 0, TagSDEdge}], a.sent[msgKey{other, target, 0, TagSDEdge}]
	for k := range d {
		alphaI[k] = float64(a.sent[msgKey{target, other, 0, TagAlpha}][k])
		alphaM[k] = float64(a.sent[msgKey{other, target, 0, TagAlpha}][k])
		// β(0) = 2 d(0) − α(0); the model starts at 0, where the gradient
		// is −h·c, so d(0) = 0 − float32(η h c).
		betaI[k] = -2*float64(float32(eta*a.h[target][k]*a.c[target][k])) - alphaI[k]
		betaM[k] = -2*float64(float32(eta*a.h[other][k]*a.c[other][k])) - alphaM[k]
		s := float64(ui[k]) + float64(um[k])
		aim[k] = sdLo + (1-sdLo)*(s-math.Floor(s))
	}
	// c_i(0) and c_m(0): the first draws of the nodes' Combine streams
	// after Share's; recover them from the shares after the iteration.
	for k := range d {
		// β(1) = β(0) − ε c (β(0) − α(0)).
		ci[k] = (betaI[k] - sa.beta[k]) / (epsI * (betaI[k] - alphaI[k]))
		cm[k] = (betaM[k] - sm.beta[k]) / (epsM * (betaM[k] - alphaM[k]))
	}
	// δ per coordinate: small enough that the new weights stay in range.
	ci2, cm2, aim2 := make([]float64, d), make([]float64, d), make([]float64, d)
	for k := range d {
		D := 0.2 * math.Min(math.Abs(betaI[k]-alphaI[k]), math.Abs(betaM[k]-alphaM[k])) * epsIM * math.Abs(alphaM[k]-alphaI[k])
		delta[k] = D / eta / 2
		two := 2 * eta * delta[k] // the shift of β_i(0)
		ci2[k] = (epsI*ci[k]*(betaI[k]-alphaI[k]) + two) / (epsI * (betaI[k] - alphaI[k] + two))
		cm2[k] = (epsM*cm[k]*(betaM[k]-alphaM[k]) - two) / (epsM * (betaM[k] - alphaM[k] - two))
		aim2[k] = aim[k] - two/(epsIM*(alphaM[k]-alphaI[k]))
		for _, w := range []float64{ci[k], cm[k], aim[k], ci2[k], cm2[k], aim2[k]} {
			if !(w >= sdLo && w <= 1) {
				t.Fatalf("coordinate %d: weight %v outside [0.1, 1]", k, w)
			}
		}
		b.l[target][k], b.l[other][k] = delta[k], -delta[k]
	}
	sb.Coupling = map[int][]float64{0: ci2}
	sb.Edge = map[int][]float64{other: aim2}
	bm := b.strats[other].(*GradientTrackingSD)
	bm.Coupling = map[int][]float64{0: cm2}
	bm.Edge = map[int][]float64{target: aim2}

	for range rounds - 1 {
		a.step(t)
	}
	for range rounds {
		b.step(t)
	}
	var coalition []int
	for j := range a.adj {
		if j != target && j != other {
			coalition = append(coalition, j)
		}
	}
	got := maxDiff(t, a, b, coalition)
	t.Logf("coalition messages differ by %.3g", got)
	if got > 1e-6 {
		t.Errorf("the coalition's messages differ by %.3g between the two objectives", got)
	}
	minShift := math.Inf(1)
	for _, x := range delta {
		minShift = math.Min(minShift, eta*math.Abs(x))
	}
	if minShift < 1e-4 {
		t.Fatalf("δ too small to tell (η|δ| ≥ %.3g)", minShift)
	}

	// Plain gradient tracking: the same change shows in the first tracker
	// message to a colluding neighbour of the target.
	mkGT := func() Strategy { return &GradientTracking{Weighting: MetropolisHastings} }
	pa := newQuadNet(t, irregularGraph(), seed, eta, mkGT)
	pb := newQuadNet(t, irregularGraph(), seed, eta, mkGT)
	copy(pb.l[target], b.l[target])
	copy(pb.l[other], b.l[other])
	pa.step(t)
	pb.step(t)
	if got := maxDiff(t, pa, pb, coalition); got < 0.5*minShift {
		t.Errorf("plain gradient tracking's messages differ by only %.3g: the check cannot fail", got)
	}
}

// The state of both privacy strategies survives a round trip mid-run and
// refuses truncation and trailing bytes.
func TestPrivacyStrategiesState(t *testing.T) {
	for _, mk := range []func() Strategy{
		func() Strategy { return &GradientTrackingSD{Spread: 1} },
		func() Strategy { return newFunctionSharing(1, true) },
		func() Strategy { return newFunctionSharing(1, false) },
	} {
		q := newQuadNet(t, irregularGraph(), 2, 0.1, mk)
		q.run(t, 3)
		s := q.strats[0].(Stateful)
		b, err := s.SaveState()
		if err != nil {
			t.Fatal(err)
		}
		fresh := mk().(Stateful)
		if err := fresh.LoadState(b); err != nil {
			t.Fatalf("%s: %v", s.Name(), err)
		}
		if again, _ := fresh.SaveState(); !bytes.Equal(again, b) {
			t.Errorf("%s: state differs after a round trip", s.Name())
		}
		for n := range len(b) {
			if err := fresh.LoadState(b[:n]); err == nil {
				t.Fatalf("%s: state truncated to %d of %d bytes accepted", s.Name(), n, len(b))
			}
		}
		if err := fresh.LoadState(append(bytes.Clone(b), 0)); err == nil {
			t.Errorf("%s: trailing byte accepted", s.Name())
		}
	}
}
