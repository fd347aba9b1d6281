package strategy

import (
	"errors"
	"testing"
)

// fakeLoss is the loss ||w − target||² on a pretend batch.
func fakeLoss(target ...float32) func([]float32) (float64, error) {
	return func(w []float32) (float64, error) {
		var s float64
		for i, v := range w {
			d := float64(v) - float64(target[i])
			s += d * d
		}
		return s, nil
	}
}

func TestUBARTwoStages(t *testing.T) {
	// Own x_0 = 0. Distances: 1 → 1, 2 → 2, 3 → 3, 4 → 4, 5 → 10.
	in := []Incoming{
		{From: 5, Tag: TagModel, Vector: []float32{10, 0, 0, 0}},
		{From: 1, Tag: TagModel, Vector: []float32{-1, 0, 0, 0}},
		{From: 2, Tag: TagModel, Vector: []float32{2, 0, 0, 0}},
		{From: 3, Tag: TagModel, Vector: []float32{3, 0, 0, 0}},
		{From: 4, Tag: TagModel, Vector: []float32{0, 4, 0, 0}},
	}
	u := &UBAR{Rho: UBARRho, Alpha: UBARAlpha}
	// ceil(0.4·5) = 2: stage 1 keeps 1 and 2. Loss target (3,0,0,0): own 9,
	// sender 1 16 (rejected), sender 2 1 (kept). Sender 3 (loss 0) was cut
	// by stage 1. x_0 ← ½·0 + ½·(2,0,0,0).
	m := tinyModel(t, 0, 0, 0, 0)
	w, err := u.Combine(&View{Model: m, BatchLoss: fakeLoss(3, 0, 0, 0)}, in)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "ubar", m.Params(), 1, 0, 0, 0)
	if w[2] != 0.5 || w[1] != 0 || w[3] != 0 || w[4] != 0 || w[5] != 0 {
		t.Errorf("weights %v", w)
	}
	// Loss target (−1,0,0,0): own 1, sender 1 0, sender 2 9: only sender 1
	// passes, x_0 = ½·(−1,0,0,0).
	_ = m.SetParams([]float32{0, 0, 0, 0})
	w, _ = u.Combine(&View{Model: m, BatchLoss: fakeLoss(-1, 0, 0, 0)}, in)
	near(t, "ubar 2", m.Params(), -0.5, 0, 0, 0)
	// Loss target 0: own 0, every neighbor worse: the lowest-loss of the
	// stage-1 set, sender 1 (loss 1), is kept anyway.
	_ = m.SetParams([]float32{0, 0, 0, 0})
	w, _ = u.Combine(&View{Model: m, BatchLoss: fakeLoss(0, 0, 0, 0)}, in)
	near(t, "ubar none", m.Params(), -0.5, 0, 0, 0)
	if w[1] != 0.5 || w[2] != 0 {
		t.Errorf("weights %v", w)
	}
	// ρ = 1 and a loss everyone beats: all five kept, (1−α)/5 each.
	_ = m.SetParams([]float32{0, 0, 0, 0})
	w, _ = (&UBAR{Rho: 1, Alpha: 0.5}).Combine(&View{Model: m, BatchLoss: func(p []float32) (float64, error) {
		if p[0] == 0 && p[1] == 0 {
			return 100, nil // own
		}
		return 1, nil
	}}, in)
	near(t, "ubar all", m.Params(), 1.4, 0.4, 0, 0)
	if w[5] != 0.1 {
		t.Errorf("weights %v", w)
	}
}

func TestUBARErrors(t *testing.T) {
	m := tinyModel(t, 0, 0, 0, 0)
	u := &UBAR{Rho: UBARRho, Alpha: UBARAlpha}
	in := []Incoming{{From: 1, Tag: TagModel, Vector: []float32{1, 0, 0, 0}}}
	if _, err := u.Combine(&View{Model: m}, in); err == nil {
		t.Error("nil BatchLoss accepted")
	}
	boom := errors.New("boom")
	_, err := u.Combine(&View{Model: m, BatchLoss: func([]float32) (float64, error) { return 0, boom }}, in)
	if !errors.Is(err, boom) {
		t.Errorf("loss error not passed on: %v", err)
	}
	if _, err := (&UBAR{}).Combine(&View{Model: m, BatchLoss: fakeLoss(0, 0, 0, 0)}, in); err == nil {
		t.Error("rho = 0 accepted")
	}
	if _, err := u.Combine(&View{Model: m, BatchLoss: fakeLoss(0, 0, 0, 0)}, []Incoming{{From: 1, Tag: TagModel, Vector: []float32{1}}}); err == nil {
		t.Error("wrong length accepted")
	}
}
