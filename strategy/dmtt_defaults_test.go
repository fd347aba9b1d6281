package strategy

import (
	"math"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/nn"
)

// TestDMTTDefaultsAreTheSpec pins every default of the learning step to
// the DMTT paper, §IV-E (the quantity named below), in the constants and
// in NewDMTT.
func TestDMTTDefaultsAreTheSpec(t *testing.T) {
	d := NewDMTT()
	for _, f := range []struct {
		name, item string
		got, want  float64
	}{
		{"NEval", "3: n_eval = 128", float64(d.NEval), 128},
		{"WA", "3: w_a = 0.7", d.WA, 0.7},
		{"TauU", "3: τ_u = 0.5", d.TauU, 0.5},
		{"L[0]", "4: λ1 = 0.4", d.L[0], 0.4},
		{"L[1]", "4: λ2 = 0.3", d.L[1], 0.3},
		{"L[2]", "4: λ3 = 0.2", d.L[2], 0.2},
		{"L[3]", "4: λ4 = 0.1", d.L[3], 0.1},
		{"Gamma", "5: γ = 0.6", d.Gamma, 0.6},
		{"TauTrust", "5: τ_trust = 0.25", d.TauTrust, 0.25},
		{"Kappa", "5: κ = 5", d.Kappa, 5},
		{"Budget", "5: B = 5", float64(d.Budget), 5},
		{"SelfWeight", "6: ω = 0.5", d.SelfWeight, 0.5},
	} {
		if f.got != f.want {
			t.Errorf("NewDMTT().%s = %v, the DMTT paper, §IV-E: %s", f.name, f.got, f.item)
		}
	}
	consts := []float64{DMTTNEval, DMTTL1, DMTTL2, DMTTL3, DMTTL4, DMTTGamma, DMTTTauTrust, DMTTKappa, DMTTBudget, DMTTSelfWeight}
	if want := []float64{128, 0.4, 0.3, 0.2, 0.1, 0.6, 0.25, 5, 5, 0.5}; !slices.Equal(consts, want) {
		t.Errorf("DMTT constants %v, spec %v", consts, want)
	}
	if !d.NormGate {
		t.Error("NewDMTT: norm gate off; the DMTT paper (§IV-E) has it on")
	}
}

// TestDMTTSelfWeight: θ ← ω θ + (1 − ω) Σ (q_j / Σ q) θ_j with ω = 0.2
// (§IV-E): one candidate (sender 1 of TestDMTTAggregationHandValues).
func TestDMTTSelfWeight(t *testing.T) {
	m, _ := nn.Build(nn.Spec{Kind: "logreg", Input: []int{1}, Classes: 2}, 1, nn.Options{Batch: 1})
	own := []float32{0.8, 0.2, 1, 0}
	peer := []float32{0.9, 0.2, 2, 0}
	for _, omega := range []float64{0.2, 0.9} {
		_ = m.SetParams(own)
		d := NewDMTT()
		d.SelfWeight = omega
		tr := fakeTrust{t: map[int]float64{1: 0.9}, p: map[int]float64{1: 0.5}}
		w, err := d.Combine(&View{Model: m, Validate: evidentialValidate, Trust: tr},
			[]Incoming{{From: 1, Tag: TagModel, Vector: peer}})
		if err != nil {
			t.Fatal(err)
		}
		if !close6(w[1], 1-omega) {
			t.Errorf("ω = %v: weight of 1 = %v, want %v", omega, w[1], 1-omega)
		}
		for i, x := range m.Params() {
			want := omega*float64(own[i]) + (1-omega)*float64(peer[i])
			if math.Abs(float64(x)-want) > 1e-6 {
				t.Errorf("ω = %v: θ[%d] = %v, want %v", omega, i, x, want)
			}
		}
	}
}

// TestDMTTZeroScoreCandidate: a candidate passing every gate with q = 0
// (τ_trust = 0, and T = p = s = 0 with a vacuous own model) must not be
// selected: Σ_C q would be 0 and its weight 0/0. The node keeps its model.
func TestDMTTZeroScoreCandidate(t *testing.T) {
	m, _ := nn.Build(nn.Spec{Kind: "logreg", Input: []int{1}, Classes: 2}, 1, nn.Options{Batch: 1})
	own := []float32{0, 1, 1, 0} // accuracy 0, vacuity 1: s_ii = 0
	_ = m.SetParams(own)
	d := NewDMTT()
	d.TauTrust = 0
	tr := fakeTrust{t: map[int]float64{1: 0}, p: map[int]float64{1: 0}}
	w, err := d.Combine(&View{Model: m, Validate: evidentialValidate, Trust: tr},
		[]Incoming{{From: 1, Tag: TagModel, Vector: []float32{0, 1, 0.5, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if w[1] != 0 || !slices.Equal(m.Params(), own) {
		t.Errorf("q = 0 candidate: weights %v, θ %v (want weight 0, θ kept)", w, m.Params())
	}
}

// TestDMTTNormGateAblation: with the norm gate off, sender 5 of
// TestDMTTAggregationHandValues (norm 1000) passes and is weighted; the
// "gate" score names the gates each sender failed, the norm gate's even
// when it is off.
func TestDMTTNormGateAblation(t *testing.T) {
	if got := DMTTGateFailures(0.1, 1, 0.1, 10, 1, 0.6, 0.25, 5); got != GateModel|GateTrust|GateNorm {
		t.Errorf("all gates failed: mask %d", got)
	}
	m, _ := nn.Build(nn.Spec{Kind: "logreg", Input: []int{1}, Classes: 2}, 1, nn.Options{Batch: 1})
	in := []Incoming{
		{From: 2, Tag: TagModel, Vector: []float32{0.9, 0.2, 0, 0}},
		{From: 5, Tag: TagModel, Vector: []float32{0.9, 0.2, 1000, 0}},
	}
	tr := fakeTrust{t: map[int]float64{2: 0.1, 5: 0.9}, p: map[int]float64{2: 1, 5: 1}}
	for _, gate := range []bool{true, false} {
		_ = m.SetParams([]float32{0.8, 0.2, 1, 0})
		d := NewDMTT()
		d.NormGate = gate
		w, err := d.Combine(&View{Model: m, Validate: evidentialValidate, Trust: tr}, in)
		if err != nil {
			t.Fatal(err)
		}
		masks := map[int]float64{}
		for _, s := range d.Scores() {
			if s.Kind == "gate" {
				masks[s.From] = s.Value
			}
		}
		if masks[2] != GateTrust || masks[5] != GateNorm { // reported either way
			t.Errorf("norm gate %v: masks %v", gate, masks)
		}
		if (w[5] > 0) == gate || w[2] != 0 {
			t.Errorf("norm gate %v: weights %v", gate, w)
		}
	}
}
