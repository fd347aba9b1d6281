package strategy

import (
	"math"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/agreement"
	"github.com/trellis-fl/trellis/nn"
)

// evidentialValidate fakes an evidential model's outputs on 10 validation
// samples of label 0: params[0] is the accuracy (the first round(10·a)
// samples are predicted right) and params[1] the vacuity of every sample.
func evidentialValidate(params []float32, n int, dst *agreement.Outputs) error {
	const k = 3
	n = min(n, 10)
	dst.N, dst.Classes, dst.Dim = n, k, 1
	dst.Probs = make([]float32, n*k)
	dst.Vacuity = make([]float32, n)
	dst.Features = make([]float32, n)
	dst.Labels = make([]int, n)
	right := int(math.Round(float64(params[0]) * 10))
	for i := range n {
		c := 1
		if i < right {
			c = 0
		}
		dst.Probs[i*k+c] = 0.8
		dst.Probs[i*k+(c+1)%k] = 0.1
		dst.Probs[i*k+(c+2)%k] = 0.1
		dst.Vacuity[i] = params[1]
	}
	return nil
}

// fakeTrust is a topology-trust layer with fixed answers.
type fakeTrust struct {
	t, p     map[int]float64
	screened []int
}

func (f fakeTrust) Trust(j int) float64       { return f.t[j] }
func (f fakeTrust) Reliability(j int) float64 { return f.p[j] }
func (f fakeTrust) Screened() []int           { return f.screened }

func close6(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// TestModelScoreHandValues pins s_model (the DMTT paper, §IV-E).
func TestModelScoreHandValues(t *testing.T) {
	for _, c := range []struct{ a, u, want float64 }{
		{0.9, 0.2, 0.8 * (0.7*0.9 + 0.3)},                       // 0.744, below τ_u
		{0.9, 0.7, 0.3 * (0.7*0.9 + 0.3) * math.Exp(-(0.2))},    // penalized
		{0.5, 0.5, 0.5 * (0.35 + 0.3)},                          // at τ_u: no penalty
		{1, 0, 1},                                               // perfect
		{0.0, 1.0, 0},                                           // all vacuous
		{0.6, 0.9, 0.1 * (0.7*0.6 + 0.3) * math.Exp(-(0.4))},    //
		{0.2, 0.55, 0.45 * (0.7*0.2 + 0.3) * math.Exp(-(0.05))}, //
	} {
		if got := ModelScore(c.a, c.u, 0.7, 0.5, true); !close6(got, c.want) {
			t.Errorf("ModelScore(a=%v, ū=%v) = %v, want %v", c.a, c.u, got, c.want)
		}
	}
	if got := ModelScore(0.9, 0.2, 0.7, 0.5, true); !close6(got, 0.744) {
		t.Errorf("ModelScore(0.9, 0.2) = %v, want 0.744", got)
	}
	if got := ModelScore(0.9, 0.7, 0.7, 0.5, false); !close6(got, 0.3*0.93) {
		t.Errorf("unpenalized ModelScore(0.9, 0.7) = %v, want %v", got, 0.3*0.93)
	}
}

// TestDMTTScoreAndGates pins q and the three gates (items 4–5).
func TestDMTTScoreAndGates(t *testing.T) {
	l := [4]float64{0.4, 0.3, 0.2, 0.1}
	if got := DMTTScore(0.744, 0.8, 0.5, 0, l); !close6(got, 0.4*0.744+0.24+0.1) {
		t.Errorf("q = %v", got)
	}
	if got := DMTTScore(0.5, 0.5, 0.5, 1, l); !close6(got, 0.35) {
		t.Errorf("q with c_comm = 1: %v, want 0.35", got)
	}
	for _, c := range []struct {
		s, sii, tr, norm, own float64
		want                  bool
	}{
		{0.6, 1, 0.25, 5, 1, true},     // every gate at its bound
		{0.59, 1, 0.9, 1, 1, false},    // model compatibility
		{0.9, 1, 0.249, 1, 1, false},   // topology trust
		{0.9, 1, 0.9, 5.001, 1, false}, // norm sanity
	} {
		if got := DMTTGates(c.s, c.sii, c.tr, c.norm, c.own, 0.6, 0.25, 5); got != c.want {
			t.Errorf("gates %+v = %v", c, got)
		}
	}
}

// TestDMTTAggregationHandValues: own model scores s_ii = 0.8·(0.7·0.8 +
// 0.3) = 0.688; sender 1 (s = 0.744, T = 0.9, p = 0.5) and sender 4
// (s = 0.7·(0.49 + 0.3) = 0.553, T = 0.6, p = 0.9) pass every gate;
// sender 2 fails the trust gate, 3 model compatibility, 5 norm sanity.
func TestDMTTAggregationHandValues(t *testing.T) {
	m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{1}, Classes: 2}, 1, nn.Options{Batch: 1})
	if err != nil || m.NumParams() != 4 {
		t.Fatalf("model: %v, %d params", err, m.NumParams())
	}
	own := []float32{0.8, 0.2, 1, 0}
	in := []Incoming{
		{From: 1, Tag: TagModel, Vector: []float32{0.9, 0.2, 2, 0}},
		{From: 2, Tag: TagModel, Vector: []float32{0.9, 0.2, 0, 0}},
		{From: 3, Tag: TagModel, Vector: []float32{0.1, 0.9, 0, 0}},
		{From: 4, Tag: TagModel, Vector: []float32{0.7, 0.3, 0, 1}},
		{From: 5, Tag: TagModel, Vector: []float32{0.9, 0.2, 1000, 0}},
	}
	tr := fakeTrust{t: map[int]float64{1: 0.9, 2: 0.1, 3: 0.9, 4: 0.6, 5: 0.9}, p: map[int]float64{1: 0.5, 2: 1, 3: 1, 4: 0.9, 5: 1}}
	run := func(b int) ([]float32, map[int]float64) {
		_ = m.SetParams(own)
		d := NewDMTT()
		d.Budget = b
		w, err := d.Combine(&View{Model: m, Validate: evidentialValidate, Trust: tr}, in)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Clone(m.Params()), w
	}
	q1 := 0.4*0.744 + 0.3*0.9 + 0.2*0.5
	q4 := 0.4*0.7*(0.7*0.7+0.3) + 0.3*0.6 + 0.2*0.9
	got, w := run(5)
	w1, w4 := 0.5*q1/(q1+q4), 0.5*q4/(q1+q4)
	want := make([]float64, 4)
	for i := range want {
		want[i] = 0.5*float64(own[i]) + w1*float64(in[0].Vector[i]) + w4*float64(in[3].Vector[i])
	}
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > 1e-6 {
			t.Errorf("θ[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if !close6(w[1], w1) || !close6(w[4], w4) || w[2] != 0 || w[3] != 0 || w[5] != 0 {
		t.Errorf("weights %v, want 1: %v, 4: %v, others 0", w, w1, w4)
	}
	sum := 0.5
	for _, x := range w {
		sum += x
	}
	if !close6(sum, 1) {
		t.Errorf("self weight + weights = %v, want 1", sum)
	}
	// B = 1 keeps the best q only.
	got, w = run(1)
	for i := range got {
		if x := 0.5*float64(own[i]) + 0.5*float64(in[0].Vector[i]); math.Abs(float64(got[i])-x) > 1e-6 {
			t.Errorf("B = 1: θ[%d] = %v, want %v", i, got[i], x)
		}
	}
	if !close6(w[1], 0.5) || w[4] != 0 {
		t.Errorf("B = 1: weights %v", w)
	}
}

// TestDMTTLocalFallback: with every candidate gated out the model is kept
// and every weight is 0.
func TestDMTTLocalFallback(t *testing.T) {
	m, _ := nn.Build(nn.Spec{Kind: "logreg", Input: []int{1}, Classes: 2}, 1, nn.Options{Batch: 1})
	own := []float32{0.8, 0.2, 1, 0}
	_ = m.SetParams(own)
	d := NewDMTT()
	tr := fakeTrust{t: map[int]float64{1: 0.01}, p: map[int]float64{1: 1}}
	w, err := d.Combine(&View{Model: m, Validate: evidentialValidate, Trust: tr},
		[]Incoming{{From: 1, Tag: TagModel, Vector: []float32{1, 0, 0, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Params(), own) || w[1] != 0 {
		t.Errorf("fallback: θ %v, weights %v", m.Params(), w)
	}
	if _, err := d.Combine(&View{Model: m, Validate: evidentialValidate}, nil); err == nil {
		t.Error("no trust layer accepted")
	}
}

// TestDMTTShare sends one message per peer: last round's collaborators
// and the screened neighbors, never to itself.
func TestDMTTShare(t *testing.T) {
	m, _ := nn.Build(nn.Spec{Kind: "logreg", Input: []int{1}, Classes: 2}, 1, nn.Options{Batch: 1})
	_ = m.SetParams([]float32{0.8, 0.2, 1, 0})
	d := NewDMTT()
	d.collab = []int{2, 7}
	out := d.Share(&View{ID: 3, Model: m, Trust: fakeTrust{screened: []int{1, 2, 3, 9}}})
	var to []int
	for _, o := range out {
		to = append(to, o.To)
	}
	if !slices.Equal(to, []int{1, 2, 7, 9}) {
		t.Errorf("sent to %v, want [1 2 7 9]", to)
	}
}

// TestMurmuraThresholdAndEMA: τ(t) = 0.3(1 − 0.5 e^{−t/T}); trust is
// 0.7·new + 0.3·old.
func TestMurmuraThresholdAndEMA(t *testing.T) {
	m := NewMurmura()
	if got := m.threshold(0, 10); !close6(got, 0.15) {
		t.Errorf("τ(0) = %v, want 0.15", got)
	}
	if got := m.threshold(5, 10); !close6(got, 0.3*(1-0.5*math.Exp(-0.5))) {
		t.Errorf("τ(5) = %v", got)
	}
	mod, _ := nn.Build(nn.Spec{Kind: "logreg", Input: []int{1}, Classes: 2}, 1, nn.Options{Batch: 1})
	in := []Incoming{{From: 1, Tag: TagModel, Vector: []float32{0.9, 0.2, 0, 0}}}
	for round, want := range []float64{0.744, 0.744} {
		_ = mod.SetParams([]float32{0, 0, 0, 0})
		if _, err := m.Combine(&View{Round: round, Rounds: 10, Model: mod, Validate: evidentialValidate}, in); err != nil {
			t.Fatal(err)
		}
		if got := m.Scores()[0].Value; !close6(got, want) {
			t.Errorf("round %d: trust %v, want %v", round, got, want)
		}
	}
	in[0].Vector = []float32{0.9, 0.7, 0, 0}
	_ = mod.SetParams([]float32{0, 0, 0, 0})
	if _, err := m.Combine(&View{Round: 2, Rounds: 10, Model: mod, Validate: evidentialValidate}, in); err != nil {
		t.Fatal(err)
	}
	if got, want := m.Scores()[0].Value, 0.7*0.3*0.93*math.Exp(-0.2)+0.3*0.744; !close6(got, want) {
		t.Errorf("EMA trust %v, want %v", got, want)
	}
}
