package attack

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/nn"
)

// TestDynamicPicksEachMalfunction: over many rounds every one of the three
// malfunctions is chosen, each output equals what the chosen attack
// crafts from the rest of the stream, and the same stream gives the same
// vector (what makes a node send one model to all neighbors).
func TestDynamicPicksEachMalfunction(t *testing.T) {
	spec := nn.Spec{Kind: "logreg", Input: []int{3}, Classes: 2}
	a, err := New("dynamic", Params{Percent: 120.5, Model: &spec})
	if err != nil {
		t.Fatal(err)
	}
	d := a.(Dynamic)
	honest := []float32{1, -2, 3, 0.5, 4, -1, 2, 0}
	seen := map[int]bool{}
	for r := range uint64(40) {
		got := make([]float32, len(honest))
		if err := a.Craft(got, nil, honest, 0, 1, rand.New(rand.NewPCG(r, 9))); err != nil {
			t.Fatal(err)
		}
		again := make([]float32, len(honest))
		_ = a.Craft(again, nil, honest, 0, 2, rand.New(rand.NewPCG(r, 9)))
		if !slices.Equal(got, again) {
			t.Fatalf("round %d: same stream, different vectors", r)
		}
		rng := rand.New(rand.NewPCG(r, 9))
		pick := rng.IntN(3)
		want := make([]float32, len(honest))
		_ = [3]Attack{d.Ana, d.SFA, d.Random}[pick].Craft(want, nil, honest, 0, 1, rng)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: dynamic %v, its pick %d crafts %v", r, got, pick, want)
		}
		seen[pick] = true
	}
	if len(seen) != 3 {
		t.Errorf("picked %v of the three malfunctions in 40 rounds", seen)
	}
	if _, err := New("dynamic", Params{Percent: 1}); err == nil {
		t.Error("dynamic without a model accepted")
	}
	if _, err := New("dynamic", Params{Model: &spec}); err == nil {
		t.Error("dynamic without sigma or percent accepted")
	}
	if s, err := New("sfa", Params{}); err != nil || s.Name() != "sign_flip" {
		t.Errorf("sfa = %v, %v; want sign_flip", s, err)
	}
}
