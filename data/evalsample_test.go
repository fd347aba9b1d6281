package data

import (
	"math"
	"slices"
	"testing"
)

// The evaluation batchers yield what a copying batcher without an rng
// yields, NewEvalBatcher without copying the list and NewPrefixBatcher
// without one.
func TestEvalBatchersMatchACopyingBatcher(t *testing.T) {
	d := labelled(50, 3, 1, 2)
	idx := []int32{7, 3, 49, 0, 12, 30, 31}
	drain := func(b interface {
		Reset()
		Next([]float32, []int) int
	}) []float32 {
		b.Reset()
		x, y := make([]float32, 3), make([]int, 3)
		var out []float32
		for n := b.Next(x, y); n > 0; n = b.Next(x, y) {
			out = append(out, x[:n]...)
		}
		return out
	}
	if a, b := drain(NewBatcher(d, idx, nil, nil)), drain(NewEvalBatcher(d, idx, nil)); !slices.Equal(a, b) {
		t.Errorf("NewEvalBatcher yields %v, NewBatcher %v", b, a)
	}
	if a, b := drain(NewBatcher(d, d.All()[:20], nil, nil)), drain(NewPrefixBatcher(d, 20, nil)); !slices.Equal(a, b) {
		t.Errorf("NewPrefixBatcher yields %v, NewBatcher of the first 20 %v", b, a)
	}
	if n := NewPrefixBatcher(d, 80, nil).Len(); n != 50 {
		t.Errorf("a prefix of 80 of 50 samples has %d", n)
	}
	e := NewEvalBatcher(d, idx, nil)
	if &e.order[0] != &idx[0] {
		t.Error("NewEvalBatcher copied the list")
	}
	if p := NewPrefixBatcher(d, 20, nil); p.order != nil {
		t.Error("NewPrefixBatcher holds a list")
	}
}

// A rotating sample is n distinct samples of the order, the same for a
// (node, round) however often evaluated, different across rounds and
// nodes, and its offsets are uniform.
func TestRotatingSample(t *testing.T) {
	d := labelled(1000, 10, 1, 4)
	order := EvalOrder(d.Len(), 7)
	if !slices.Equal(slices.Sorted(slices.Values(order)), d.All()) {
		t.Fatal("EvalOrder is not a permutation of the test set")
	}
	if slices.Equal(order, d.All()) {
		t.Fatal("EvalOrder is the identity")
	}
	orig := slices.Clone(order)
	r, err := NewRotating(d, order, 100, 7, 3)
	if err != nil {
		t.Fatal(err)
	}
	yielded := func() []int32 {
		r.Reset()
		x, y := make([]float32, 32), make([]int, 32)
		var out []int32
		for n := r.Next(x, y); n > 0; n = r.Next(x, y) {
			for j := range n {
				out = append(out, int32(x[j]))
			}
		}
		return out
	}
	r.Round(5)
	s5 := yielded()
	if len(s5) != 100 || len(slices.Compact(slices.Sorted(slices.Values(slices.Clone(s5))))) != 100 {
		t.Fatalf("round 5 yields %d samples, not 100 distinct", len(s5))
	}
	if !slices.Equal(s5, r.Samples()) || !slices.Equal(s5, yielded()) {
		t.Error("a round's window changes between evaluations")
	}
	r.Round(6)
	if s6 := r.Samples(); slices.Equal(s5, s6) {
		t.Error("rounds 5 and 6 evaluate the same samples")
	}
	again, _ := NewRotating(d, order, 100, 7, 3)
	again.Round(5)
	if !slices.Equal(again.Samples(), s5) {
		t.Error("a second source of (seed, node, round) draws another window")
	}
	other, _ := NewRotating(d, order, 100, 7, 4)
	other.Round(5)
	if slices.Equal(other.Samples(), s5) {
		t.Error("nodes 3 and 4 evaluate the same samples in round 5")
	}
	if !slices.Equal(order, orig) {
		t.Error("the shared order was modified")
	}
	// A window wraps around the end of the order.
	r.b.off = 950
	if w := r.Samples(); w[49] != order[999] || w[50] != order[0] {
		t.Errorf("the window at 950 does not wrap: %v … %v", w[49], w[50])
	}
	// Offsets uniform over [0, 1000): mean 499.5, sd of the mean of 4000
	// draws 288.7/√4000 = 4.6.
	sum := 0.0
	for node := range 40 {
		for round := range 100 {
			sum += float64(WindowOffset(7, node, round, 1000))
		}
	}
	if mean := sum / 4000; math.Abs(mean-499.5) > 20 {
		t.Errorf("mean offset %v, want about 499.5", mean)
	}
	if all, _ := NewRotating(d, order, 5000, 7, 0); all.Len() != 1000 {
		t.Errorf("a window larger than the set has %d samples", all.Len())
	}
	if _, err := NewRotating(d, order, 0, 7, 0); err == nil {
		t.Error("a window of 0 samples accepted")
	}
}
