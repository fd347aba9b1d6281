package strategy

import (
	"errors"
	"math"
	"testing"

	"github.com/trellis-fl/trellis/agreement"
)

// fakeValidate stands in for the node's View.Validate: 8 samples, 3
// classes, 2 features, all a smooth function of the first parameters.
func fakeValidate(params []float32, n int, dst *agreement.Outputs) error {
	const k, d = 3, 2
	n = min(n, 8)
	dst.N, dst.Classes, dst.Dim = n, k, d
	dst.Probs = make([]float32, n*k)
	dst.Features = make([]float32, n*d)
	dst.Labels = make([]int, n)
	for a := range n {
		var z [k]float64
		var s float64
		for j := range k {
			z[j] = math.Exp(float64(params[j%len(params)]) * float64(a+j) / 4)
			s += z[j]
		}
		for j := range k {
			dst.Probs[a*k+j] = float32(z[j] / s)
		}
		dst.Features[a*d] = params[0] * float32(a)
		dst.Features[a*d+1] = float32(a % 3)
		dst.Labels[a] = a % k
	}
	return nil
}

// TestLightyearAggregationHandValues: own θ = (1,0,0,0); sender 1 sends
// (2,0,0,0) (cosine score 1), sender 3 (−1,0,0,0) (score 0), sender 5
// (1,1,0,0) (score (1+1/√2)/2 ≈ 0.854). With tau 0.6 S = {1, 5}. The
// paper's Eq. 17 moves towards the mean of S, (3/2, 1/2, 0, 0): θ ←
// (1 + g^t/2, g^t/2, 0, 0), weight g^t/2 each. The authors' code averages
// θ in, avg = (4/3, 1/3, 0, 0): θ ← (1 + g^t/3, g^t/3, 0, 0), weight g^t/3.
func TestLightyearAggregationHandValues(t *testing.T) {
	in := []Incoming{
		{From: 1, Tag: TagModel, Vector: []float32{2, 0, 0, 0}},
		{From: 3, Tag: TagModel, Vector: []float32{-1, 0, 0, 0}},
		{From: 5, Tag: TagModel, Vector: []float32{1, 1, 0, 0}},
	}
	for _, c := range []struct {
		round       int
		gt          float64 // 0.95^round
		includeSelf float64
		share       float64 // |S| or |S| + 1
	}{{0, 1, 0, 2}, {1, 0.95, 0, 2}, {10, 0.5987369392383789, 0, 2},
		{0, 1, 1, 3}, {1, 0.95, 1, 3}, {10, 0.5987369392383789, 1, 3}} {
		s, err := New("lightyear", Params{Score: "cosine", Options: map[string]float64{"include_self": c.includeSelf}})
		if err != nil {
			t.Fatal(err)
		}
		m := tinyModel(t, 1, 0, 0, 0)
		w, err := s.Combine(&View{ID: 0, Round: c.round, Model: m, Validate: fakeValidate}, in)
		if err != nil {
			t.Fatal(err)
		}
		c1 := c.gt / c.share
		near(t, "round", m.Params(), 1+c1, c1, 0, 0)
		if math.Abs(w[1]-c1) > 1e-12 || w[3] != 0 || math.Abs(w[5]-c1) > 1e-12 {
			t.Errorf("round %d, include_self %v: weights %v, want %v for 1 and 5, 0 for 3", c.round, c.includeSelf, w, c1)
		}
		sc := s.(ScoreReporter).Scores()
		nk := len(ScoreKinds)
		if len(sc) != 3*nk {
			t.Fatalf("%d scores, want 3 senders × %d kinds", len(sc), nk)
		}
		if sc[2].Kind != "cosine" || sc[2].From != 1 || math.Abs(sc[2].Value-1) > 1e-12 ||
			sc[2*nk+2].From != 5 || math.Abs(sc[2*nk+2].Value-(1+1/math.Sqrt2)/2) > 1e-12 {
			t.Errorf("scores %+v", sc)
		}
		// The same model scores 1 in function space too (sender 1 differs
		// from own: 2 vs 1 in the first coordinate; check ranges only).
		for _, p := range sc {
			if !(p.Value >= 0 && p.Value <= 1) {
				t.Errorf("score %+v outside [0, 1]", p)
			}
		}
	}
}

func TestLightyearEmptySelectionKeepsModel(t *testing.T) {
	s, err := New("lightyear", Params{Score: "cosine", Options: map[string]float64{"tau": 0.99}})
	if err != nil {
		t.Fatal(err)
	}
	m := tinyModel(t, 1, 0, 0, 0)
	in := []Incoming{
		{From: 3, Tag: TagModel, Vector: []float32{-1, 0, 0, 0}},
		{From: 5, Tag: TagModel, Vector: []float32{1, 1, 0, 0}},
		{From: 6, Tag: TagModel, Vector: []float32{float32(math.NaN()), 1, 0, 0}},
	}
	w, err := s.Combine(&View{ID: 0, Round: 0, Model: m, Validate: fakeValidate}, in)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "kept", m.Params(), 1, 0, 0, 0)
	for j, x := range w {
		if x != 0 {
			t.Errorf("sender %d weight %v, want 0", j, x)
		}
	}
}

func TestLightyearScoresItsOwnCopyOne(t *testing.T) {
	for _, kind := range ScoreKinds {
		s, err := New("lightyear", Params{Score: kind})
		if err != nil {
			t.Fatal(err)
		}
		m := tinyModel(t, 0.5, -1, 2, 0.25)
		in := []Incoming{{From: 1, Tag: TagModel, Vector: []float32{0.5, -1, 2, 0.25}}}
		w, err := s.Combine(&View{ID: 0, Round: 3, Model: m, Validate: fakeValidate}, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range s.(ScoreReporter).Scores() {
			if math.Abs(p.Value-1) > 1e-9 {
				t.Errorf("%s selection: %s score of an identical model = %v, want 1", kind, p.Kind, p.Value)
			}
		}
		if want := math.Pow(0.95, 3); math.Abs(w[1]-want) > 1e-12 { // Eq. 17, |S| = 1
			t.Errorf("weight %v, want %v", w[1], want)
		}
	}
}

func TestLightyearBadInput(t *testing.T) {
	if _, err := New("lightyear", Params{Score: "l2"}); err == nil {
		t.Error("unknown score accepted")
	}
	if _, err := New("fedavg", Params{Score: "ntk"}); err == nil {
		t.Error("score on fedavg accepted")
	}
	for _, o := range []map[string]float64{{"tau": 1.5}, {"g": 0}, {"n_val": 0}, {"n_val": 2.5}, {"tau": math.NaN()}} {
		if _, err := New("lightyear", Params{Options: o}); err == nil {
			t.Errorf("options %v accepted", o)
		}
	}
	s, _ := New("lightyear", Params{})
	m := tinyModel(t, 1, 0, 0, 0)
	in := []Incoming{{From: 1, Tag: TagModel, Vector: []float32{1, 0, 0, 0}}}
	if _, err := s.Combine(&View{Model: m}, in); err == nil {
		t.Error("no Validate: no error")
	}
	if _, err := s.Combine(&View{Model: m, Validate: fakeValidate}, []Incoming{{From: 1, Tag: TagModel, Vector: []float32{1}}}); err == nil {
		t.Error("short vector: no error")
	}
}

// TestLightyearPeerThatCannotBeEvaluated: a peer model whose validation
// outputs are not finite (Validate fails for it) scores 0 in function
// space and is not selected; the round goes on.
func TestLightyearPeerThatCannotBeEvaluated(t *testing.T) {
	s, err := New("lightyear", Params{})
	if err != nil {
		t.Fatal(err)
	}
	m := tinyModel(t, 1, 0, 0, 0)
	failing := func(params []float32, n int, dst *agreement.Outputs) error {
		if params[1] > 1e30 {
			return errors.New("evaluation: non-finite output")
		}
		return fakeValidate(params, n, dst)
	}
	in := []Incoming{{From: 4, Tag: TagModel, Vector: []float32{1, 3e38, 0, 0}}}
	w, err := s.Combine(&View{ID: 0, Round: 0, Model: m, Validate: failing}, in)
	if err != nil {
		t.Fatal(err)
	}
	if w[4] != 0 {
		t.Errorf("weight %v, want 0", w[4])
	}
	for _, p := range s.(ScoreReporter).Scores() {
		if p.Kind != ScoreCosine && p.Value != 0 {
			t.Errorf("%s score %v, want 0", p.Kind, p.Value)
		}
	}
	near(t, "kept", m.Params(), 1, 0, 0, 0)
}

// TestLightyearAsynchronousInputs: LIGHTYEAR is declared for asynchronous
// inputs because it scores each input against the node's own model only.
// So an input's scores do not depend on its staleness nor on which other
// inputs came with it, and the step counts as t in G^t: the same inputs
// with staleness 0 and 7, alone or together, score the same in every kind,
// and the weights follow the hand values of Eq. 17 at t = the step.
func TestLightyearAsynchronousInputs(t *testing.T) {
	if b, _ := New("lightyear", Params{}); !Asynchronous(b) {
		t.Fatal("lightyear's value is not Asynchronous")
	}
	a := Incoming{From: 1, Tag: TagModel, Vector: []float32{2, 0, 0, 0}}
	b := Incoming{From: 5, Tag: TagModel, Vector: []float32{1, 1, 0, 0}}
	scores := func(step int, in ...Incoming) (map[int]float64, map[int][]float64) {
		t.Helper()
		s, err := New("lightyear", Params{Score: "cosine"})
		if err != nil {
			t.Fatal(err)
		}
		w, err := s.Combine(&View{ID: 0, Round: step, Model: tinyModel(t, 1, 0, 0, 0), Validate: fakeValidate}, in)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int][]float64{}
		for _, p := range s.(ScoreReporter).Scores() {
			out[p.From] = append(out[p.From], p.Value)
		}
		return w, out
	}
	stale := func(m Incoming, tau int) Incoming { m.Staleness = tau; return m }
	_, fresh := scores(4, a, b)
	for _, in := range [][]Incoming{{stale(a, 7), stale(b, 7)}, {stale(a, 7), b}, {stale(a, 3)}, {b}} {
		_, got := scores(4, in...)
		for from, s := range got {
			for k := range s {
				if s[k] != fresh[from][k] {
					t.Errorf("inputs %v: sender %d's %s score %v, with both fresh %v", in, from, ScoreKinds[k], s[k], fresh[from][k])
				}
			}
		}
	}
	// Both kept (cosine 1 and 0.854 ≥ 0.6): each gets G^4 / 2.
	w, _ := scores(4, stale(a, 7), stale(b, 2))
	if want := math.Pow(LightyearG, 4) / 2; math.Abs(w[1]-want) > 1e-12 || math.Abs(w[5]-want) > 1e-12 {
		t.Errorf("weights at step 4: %v, want %v each", w, want)
	}
}
