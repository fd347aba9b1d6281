package strategy

import (
	"math"
	"testing"
)

func afaDefaults() *AFA {
	return &AFA{Xi0: AFAXi0, DeltaXi: AFADeltaXi, Alpha0: AFAPrior, Beta0: AFAPrior, BlockAt: AFABlockAt}
}

func afaRound(t *testing.T, a *AFA, start float32, four []float32) ([]float32, map[int]float64) {
	t.Helper()
	sh := func(x ...float32) []float32 {
		for i := range x {
			x[i] += start
		}
		return x
	}
	m := tinyModel(t, sh(1, 0, 0, 0)...)
	in := []Incoming{
		{From: 1, Tag: TagModel, Vector: sh(1, 0, 0, 0)},
		{From: 2, Tag: TagModel, Vector: sh(1, 0, 0, 0)},
		{From: 3, Tag: TagModel, Vector: sh(1, 0, 0, 0)},
		{From: 4, Tag: TagModel, Vector: sh(four...)},
	}
	v := &View{ID: 0, Model: m, Start: sh(0, 0, 0, 0)}
	w, err := a.Combine(v, in)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]float32(nil), m.Params()...)
	for i := range out {
		out[i] -= start
	}
	return out, w
}

func TestAFADropsFlippedAndBlocksAfterSixRounds(t *testing.T) {
	for _, start := range []float32{0, 3} { // cosines are of x − Start
		a := afaDefaults()
		// Round 1: p = 1/2 for all, weighted mean of updates (0.6,0,0,0);
		// s = (1,1,1,1,−1): μ = 0.6 < med = 1, σ = 0.8, drop s < 1 − 1.6:
		// sender 4. Second pass: s all 1, nothing dropped.
		x, w := afaRound(t, a, start, []float32{-1, 0, 0, 0})
		near(t, "round 1", x, 1, 0, 0, 0)
		if w[1] != 0.25 || w[2] != 0.25 || w[3] != 0.25 || w[4] != 0 {
			t.Errorf("round 1 weights %v", w)
		}
		if al, be := a.Reputation(4); al != 3 || be != 4 {
			t.Errorf("sender 4 reputation (%v, %v), want (3, 4)", al, be)
		}
		// Round 2: sender 4 honest but longer (2,0,0,0): all kept; p = 4/7
		// for own, 1, 2, 3 and 3/7 for 4: weights 4/19 and 3/19;
		// x = 12/19 + 6/19 = 22/19.
		x, w = afaRound(t, a, start, []float32{2, 0, 0, 0})
		near(t, "round 2", x, 22.0/19, 0, 0, 0)
		if math.Abs(w[1]-4.0/19) > 1e-12 || math.Abs(w[4]-3.0/19) > 1e-12 {
			t.Errorf("round 2 weights %v", w)
		}
		// Now (α, β) of sender 4 is (4, 4). Six more flipped rounds take
		// it to (4, 10): I_{1/2}(4, 9) = P(Bin(12,1/2) >= 4) = 3797/4096
		// ≈ 0.927 after five, I_{1/2}(4, 10) = 7814/8192 ≈ 0.954 after six.
		for r := 1; r <= 6; r++ {
			afaRound(t, a, start, []float32{-1, 0, 0, 0})
			if got := a.Blocked(4); got != (r == 6) {
				t.Fatalf("after %d bad rounds blocked = %v", r, got)
			}
		}
		// Blocked for good: an honest vector from 4 now counts 0.
		x, w = afaRound(t, a, start, []float32{5, 0, 0, 0})
		near(t, "blocked", x, 1, 0, 0, 0)
		if v, ok := w[4]; !ok || v != 0 {
			t.Errorf("blocked sender weights %v", w)
		}
		if a.Blocked(1) || a.Blocked(0) {
			t.Error("honest sender blocked")
		}
	}
}

func TestAFAAgreementAndErrors(t *testing.T) {
	// When all agree nothing is dropped (σ = 0 up to rounding), the result
	// is the plain mean; bad parameters and lengths are errors.
	a := afaDefaults()
	x, w := afaRound(t, a, 0, []float32{1, 0, 0, 0})
	near(t, "all agree", x, 1, 0, 0, 0)
	for _, id := range []int{1, 2, 3, 4} {
		if w[id] != 0.2 {
			t.Errorf("weights %v", w)
		}
	}
	m := tinyModel(t, 1, 0, 0, 0)
	if _, err := a.Combine(&View{Model: m}, []Incoming{{From: 1, Tag: TagModel, Vector: []float32{1, 2}}}); err == nil {
		t.Error("wrong length accepted")
	}
	if _, err := (&AFA{}).Combine(&View{Model: m}, nil); err == nil {
		t.Error("zero parameters accepted")
	}
	// Alone: keeps its own model.
	w, err := afaDefaults().Combine(&View{Model: m}, nil)
	if err != nil || len(w) != 0 {
		t.Fatalf("alone: %v %v", w, err)
	}
	near(t, "alone", m.Params(), 1, 0, 0, 0)
}
