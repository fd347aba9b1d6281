package strategy

import (
	"math"
	"slices"
	"testing"
)

// With every input fresh the staleness-discounted mean is fedavg's
// uniform mean, bit for bit (a synchronous round's inputs all have
// staleness 0), whatever the decay.
func TestAsyncMeanFreshIsFedAvg(t *testing.T) {
	in := []Incoming{
		{From: 2, Tag: TagModel, Vector: []float32{4, 4, 4, 4}},
		{From: 5, Tag: TagModel, Vector: []float32{-2, 0.1, 2, 8}},
	}
	v := &View{Model: tinyModel(t, 1, 2, 3, 4.7)}
	wf, err := (&FedAvg{}).Combine(v, in)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(v.Model.Params())
	for _, decay := range []float64{0, 0.5, 3} {
		v := &View{Model: tinyModel(t, 1, 2, 3, 4.7)}
		wa, err := (&AsyncMean{Decay: decay}).Combine(v, in)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(v.Model.Params(), want) || wa[2] != wf[2] || wa[5] != wf[5] {
			t.Fatalf("decay %v: %v %v, fedavg %v %v", decay, v.Model.Params(), wa, want, wf)
		}
	}
}

// Two inputs of staleness 0 and 3 at decay 0.5: weights 1 (own), 1 and
// (1+3)^-0.5 = 1/2, normalized by 5/2: 2/5, 2/5, 1/5 — the closed form.
func TestAsyncMeanDiscountsStaleInputs(t *testing.T) {
	in := []Incoming{
		{From: 1, Tag: TagModel, Vector: []float32{5, 0, 0, 0}},
		{From: 3, Tag: TagModel, Vector: []float32{0, 10, 0, 0}, Staleness: 3},
	}
	v := &View{Model: tinyModel(t, 0, 0, 5, 1)}
	w, err := (&AsyncMean{Decay: 0.5}).Combine(v, in)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "mean", v.Model.Params(), 2, 2, 2, 0.4)
	if math.Abs(w[1]-0.4) > 1e-15 || math.Abs(w[3]-0.2) > 1e-15 || len(w) != 2 {
		t.Fatalf("weights %v, want 0.4 and 0.2", w)
	}
	if got := StalenessWeight(8, 1); got != 1.0/9 {
		t.Fatalf("s(8) at decay 1 = %v, want 1/9", got)
	}
}

// robust's staleness bound leaves the staler inputs out before the rule:
// the median over the own model and two fresh inputs, as if the stale one
// never arrived; without the bound the stale one counts.
func TestRobustStalenessBound(t *testing.T) {
	in := []Incoming{
		{From: 1, Tag: TagModel, Vector: []float32{1, 1, 1, 1}},
		{From: 2, Tag: TagModel, Vector: []float32{100, 100, 100, 100}, Staleness: 5},
		{From: 3, Tag: TagModel, Vector: []float32{3, 3, 3, 3}, Staleness: 2},
	}
	bound := 2.0
	s, err := New("robust", Params{Rule: "median", Options: map[string]float64{"staleness_bound": bound}})
	if err != nil {
		t.Fatal(err)
	}
	v := &View{ID: 0, Model: tinyModel(t, 2, 2, 2, 10)}
	w, err := s.Combine(v, in)
	if err != nil {
		t.Fatal(err)
	}
	// median of {2, 1, 3} and of {10, 1, 3}.
	near(t, "bounded median", v.Model.Params(), 2, 2, 2, 3)
	if _, ok := w[2]; ok {
		t.Fatalf("the stale sender got a weight: %v", w)
	}
	plain, _ := New("robust", Params{Rule: "median"})
	v = &View{ID: 0, Model: tinyModel(t, 2, 2, 2, 10)}
	if _, err := plain.Combine(v, in); err != nil {
		t.Fatal(err)
	}
	// median of {2, 1, 100, 3} and {10, 1, 100, 3}: the mean of the middle two.
	near(t, "unbounded median", v.Model.Params(), 2.5, 2.5, 2.5, 6.5)
}

// The rows say which strategies are defined for asynchronous inputs.
func TestAsyncRows(t *testing.T) {
	if got := AsyncNames(); got != "local, robust, balance, lightyear, async_mean" {
		t.Fatalf("asynchronous strategies %q", got)
	}
	if AsyncInputs("fedavg") || !AsyncInputs("async_mean") || !AsyncInputs("balance") || AsyncInputs("nope") {
		t.Fatal("AsyncInputs")
	}
	// The value agrees with its row: a node refuses neither.
	if b, _ := New("balance", Params{}); !Asynchronous(b) {
		t.Fatal("balance's value is not Asynchronous")
	}
}
