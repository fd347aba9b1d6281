package strategy

import (
	"math"
	"testing"
)

func TestBALANCEAcceptsWithinShrinkingRadius(t *testing.T) {
	nan := float32(math.NaN())
	in := []Incoming{ // deliberately not in sender order
		{From: 4, Tag: TagModel, Vector: []float32{0, 0, 0, 0}},    // dist 5: rejected
		{From: 2, Tag: TagModel, Vector: []float32{3, 4, 0, 1.4}},  // dist 1.4
		{From: 1, Tag: TagModel, Vector: []float32{3, 4, 1, 0}},    // dist 1
		{From: 6, Tag: TagModel, Vector: []float32{nan, 4, 0, 0}},  // non-finite
		{From: 7, Tag: TagStart, Vector: []float32{3, 4, 0, 0, 0}}, // other tag: ignored
	}
	m := tinyModel(t, 3, 4, 0, 0) // ||x_0|| = 5
	b := &BALANCE{Gamma: BalanceGamma, Kappa: BalanceKappa, Alpha: BalanceAlpha}
	// t = 0: radius 0.3·5 = 1.5 accepts 1 and 2.
	w, err := b.Combine(&View{ID: 0, Round: 0, Rounds: 10, Model: m}, in)
	if err != nil {
		t.Fatal(err)
	}
	// 0.5·(3,4,0,0) + 0.5·mean((3,4,1,0), (3,4,0,1.4)) = (3, 4, 0.25, 0.35).
	near(t, "t=0", m.Params(), 3, 4, 0.25, 0.35)
	if w[1] != 0.25 || w[2] != 0.25 || w[4] != 0 || w[6] != 0 || len(w) != 4 {
		t.Errorf("weights %v", w)
	}
	// t = 5 of 10: radius 1.5·e^{-0.5} ≈ 0.91 rejects everyone: x_0 kept.
	_ = m.SetParams([]float32{3, 4, 0, 0})
	w, err = b.Combine(&View{ID: 0, Round: 5, Rounds: 10, Model: m}, in)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "t=5", m.Params(), 3, 4, 0, 0)
	if w[1] != 0 || w[2] != 0 {
		t.Errorf("weights %v", w)
	}
	// t = 2 of 10: radius 1.5·e^{-0.2} ≈ 1.228 keeps only sender 1.
	_ = m.SetParams([]float32{3, 4, 0, 0})
	w, _ = b.Combine(&View{ID: 0, Round: 2, Rounds: 10, Model: m}, in)
	near(t, "t=2", m.Params(), 3, 4, 0.5, 0)
	if w[1] != 0.5 || w[2] != 0 {
		t.Errorf("weights %v", w)
	}
}

func TestBALANCEErrors(t *testing.T) {
	m := tinyModel(t, 3, 4, 0, 0)
	b := &BALANCE{Gamma: BalanceGamma, Kappa: BalanceKappa, Alpha: BalanceAlpha}
	if _, err := b.Combine(&View{Rounds: 10, Model: m}, []Incoming{{From: 1, Tag: TagModel, Vector: []float32{1}}}); err == nil {
		t.Error("wrong length accepted")
	}
	if _, err := b.Combine(&View{Rounds: 0, Model: m}, nil); err == nil {
		t.Error("Rounds = 0 accepted")
	}
	if _, err := (&BALANCE{}).Combine(&View{Rounds: 10, Model: m}, nil); err == nil {
		t.Error("gamma = 0 accepted")
	}
	dup := []Incoming{{From: 1, Tag: TagModel, Vector: []float32{1, 1, 1, 1}}, {From: 1, Tag: TagModel, Vector: []float32{1, 1, 1, 1}}}
	if _, err := b.Combine(&View{Rounds: 10, Model: m}, dup); err == nil {
		t.Error("duplicate sender accepted")
	}
}
