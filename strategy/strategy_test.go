package strategy

import (
	"math"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/nn"
)

// tinyModel is a logistic regression with 1 input and 2 classes: 4
// parameters, enough to hold hand-checkable vectors.
func tinyModel(t *testing.T, w ...float32) *nn.Model {
	t.Helper()
	m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{1}, Classes: 2}, 1, nn.Options{Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetParams(w); err != nil {
		t.Fatal(err)
	}
	return m
}

func near(t *testing.T, what string, got []float32, want ...float64) {
	t.Helper()
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > 1e-6 {
			t.Fatalf("%s = %v, want %v", what, got, want)
		}
	}
}

func TestFedAvgUniformAndMH(t *testing.T) {
	in := []Incoming{
		{From: 2, Tag: TagModel, Vector: []float32{4, 4, 4, 4}},
		{From: 5, Tag: TagModel, Vector: []float32{-2, 0, 2, 8}},
	}
	m := tinyModel(t, 1, 2, 3, 4)
	v := &View{ID: 0, Model: m, Neighbors: []int{2, 5, 7}, NeighborDegree: []int{1, 3, 4}, Degree: 3}
	f := &FedAvg{}
	w, err := f.Combine(v, in)
	if err != nil {
		t.Fatal(err)
	}
	// Uniform over own + 2 arrived (7 was dropped): thirds.
	near(t, "uniform", m.Params(), 1, 2, 3, 16.0/3)
	if w[2] != 1.0/3 || w[5] != 1.0/3 || len(w) != 2 {
		t.Errorf("uniform weights %v", w)
	}
	// MH: w_02 = 1/(1+max(3,1)) = 1/4, w_05 = 1/(1+3) = 1/4, self 1/2.
	_ = m.SetParams([]float32{1, 2, 3, 4})
	f = &FedAvg{Weighting: MetropolisHastings}
	w, _ = f.Combine(v, in)
	near(t, "mh", m.Params(), 0.5+1-0.5, 1+1+0, 1.5+1+0.5, 2+1+2)
	if w[2] != 0.25 || w[5] != 0.25 {
		t.Errorf("mh weights %v", w)
	}
	if _, err := f.Combine(v, []Incoming{{From: 1, Tag: TagModel, Vector: []float32{1}}}); err == nil {
		t.Error("a vector of the wrong length was accepted")
	}
}

func TestLocalKeepsModel(t *testing.T) {
	m := tinyModel(t, 1, 2, 3, 4)
	w, err := Local{}.Combine(&View{Model: m}, []Incoming{{From: 1, Vector: []float32{9, 9, 9, 9}}})
	if err != nil || len(w) != 0 {
		t.Fatalf("local: %v %v", w, err)
	}
	near(t, "local", m.Params(), 1, 2, 3, 4)
	if len(Local{}.Share(&View{Model: m})) != 0 {
		t.Error("local shares")
	}
}

// quadratic runs n nodes on a ring where node i's "local training" is one
// gradient step of f_i(w) = ½||w − c_i||² with step eta, for rounds rounds,
// and returns the nodes' final parameters.
func quadratic(t *testing.T, mk func() Strategy, c []float64, eta float64, rounds int) [][]float32 {
	n := len(c)
	models := make([]*nn.Model, n)
	strats := make([]Strategy, n)
	for i := range models {
		models[i] = tinyModel(t, 0, 0, 0, 0)
		strats[i] = mk()
	}
	for r := 0; r < rounds; r++ {
		views := make([]*View, n)
		out := make([][]Outgoing, n)
		for i, m := range models {
			start := append([]float32(nil), m.Params()...)
			for k, w := range m.Params() {
				m.Params()[k] = w - float32(eta*(float64(w)-c[i]))
			}
			prev, next := (i+n-1)%n, (i+1)%n
			nb := []int{min(prev, next), max(prev, next)}
			views[i] = &View{ID: i, Round: r, Model: m, Start: start, Neighbors: nb, NeighborDegree: []int{2, 2}, Degree: 2}
			for _, o := range strats[i].Share(views[i]) {
				o.Vector = append([]float32(nil), o.Vector...)
				out[i] = append(out[i], o)
			}
		}
		for i := range models {
			var in []Incoming
			for _, j := range views[i].Neighbors {
				for _, o := range out[j] {
					in = append(in, Incoming{From: j, Tag: o.Tag, Vector: o.Vector})
				}
			}
			if _, err := strats[i].Combine(views[i], in); err != nil {
				t.Fatal(err)
			}
		}
	}
	res := make([][]float32, n)
	for i, m := range models {
		res[i] = m.Params()
	}
	return res
}

// TestGradientTrackingFindsExactOptimum checks the property that defines
// gradient tracking: with a constant step it converges to the minimizer of
// Σ f_i (the mean of the c_i), where D-PSGD stalls at a biased point.
func TestGradientTrackingFindsExactOptimum(t *testing.T) {
	c := []float64{0, 10, -4, 7, 2}
	mean := 3.0
	gt := quadratic(t, func() Strategy { return &GradientTracking{Weighting: MetropolisHastings} }, c, 0.3, 1000)
	for i, w := range gt {
		if math.Abs(float64(w[0])-mean) > 1e-3 {
			t.Errorf("gradient tracking node %d at %v, optimum %v", i, w[0], mean)
		}
	}
	dp := quadratic(t, func() Strategy { return &DPSGD{Weighting: MetropolisHastings} }, c, 0.3, 300)
	var avg, spread float64
	for _, w := range dp {
		avg += float64(w[0]) / 5
		spread = math.Max(spread, math.Abs(float64(w[0])-mean))
	}
	if math.Abs(avg-mean) > 1e-3 {
		t.Errorf("D-PSGD network average %v, want %v (MH weights are doubly stochastic)", avg, mean)
	}
	if spread < 0.1 {
		t.Errorf("D-PSGD with a constant step reached consensus at the optimum (spread %v); expected a bias", spread)
	}
	fa := quadratic(t, func() Strategy { return &FedAvg{Weighting: MetropolisHastings} }, c, 0.3, 300)
	if math.Abs(float64(fa[0][0])-float64(fa[1][0])) < 1e-3 {
		t.Log("fedavg nodes agree") // informational: FedAvg also keeps a heterogeneity bias
	}
}

func TestRobustRuleMedianPlacesOwnModelByID(t *testing.T) {
	rule, err := aggregate.New("median", 0)
	if err != nil {
		t.Fatal(err)
	}
	m := tinyModel(t, 1, 2, 3, 4)
	s := &RobustRule{Rule: rule}
	in := []Incoming{
		{From: 1, Tag: TagModel, Vector: []float32{0, 0, 0, 1e6}},
		{From: 5, Tag: TagModel, Vector: []float32{2, 2, 9, 5}},
	}
	w, err := s.Combine(&View{ID: 3, Model: m}, in)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "median of own and two", m.Params(), 1, 2, 3, 5)
	if w[1]+w[5] <= 0 || w[1]+w[5] >= 1 {
		t.Errorf("weights of senders %v should be a proper share", w)
	}
}

func TestFedProxAndDittoShapeLocalTraining(t *testing.T) {
	m := tinyModel(t, 1, 2, 3, 4)
	start := []float32{0, 0, 0, 0}
	fp, _ := New("fedprox", Params{Options: map[string]float64{"mu": 0.5}})
	cfg := fp.(LocalTrainer).LocalTraining(&View{Model: m, Start: start}, nn.TrainConfig{Epochs: 1})
	if cfg.ProxMu != 0.5 || &cfg.ProxRef[0] != &start[0] || cfg.Epochs != 1 {
		t.Errorf("fedprox training config %+v", cfg)
	}
	d, _ := New("ditto", Params{})
	dt := d.(*Ditto)
	cfg = dt.LocalTraining(&View{Model: m, Start: start}, nn.TrainConfig{Epochs: 1})
	if cfg.ProxMu != DittoLambda || cfg.ProxRef[0] != 0 {
		t.Errorf("ditto training config %+v", cfg)
	}
	// Share trains the global copy (here: adds 1 to it) and sends it;
	// Combine averages global copies and leaves the personal model alone.
	v := &View{ID: 0, Model: m, Start: start, TrainCopy: func(w []float32) (nn.TrainResult, error) {
		for i := range w {
			w[i]++
		}
		return nn.TrainResult{Steps: 1}, nil
	}}
	out := dt.Share(v)
	if len(out) != 1 || out[0].Vector[0] != 1 {
		t.Fatalf("ditto share %v", out)
	}
	w, err := dt.Combine(v, []Incoming{{From: 3, Tag: TagModel, Vector: []float32{3, 3, 3, 3}}})
	if err != nil || w[3] != 0.5 {
		t.Fatalf("ditto combine: %v %v", w, err)
	}
	if dt.w[0] != 2 {
		t.Errorf("global model %v, want the average 2", dt.w)
	}
	near(t, "personal model", m.Params(), 1, 2, 3, 4)
}

// TestRobustRuleOnUpdates: with Updates the node sends w~ − w_start and
// steps from w_start by the rule's aggregate of its own and the received
// updates: start (1, 1, 1, 1), own update (0, 1, 2, 3), median with
// (0, 0, 0, 1e6) and (2, 2, 9, 5) is (0, 1, 2, 5).
func TestRobustRuleOnUpdates(t *testing.T) {
	rule, err := aggregate.New("median", 0)
	if err != nil {
		t.Fatal(err)
	}
	m := tinyModel(t, 1, 2, 3, 4)
	v := &View{ID: 3, Model: m, Start: []float32{1, 1, 1, 1}}
	s := &RobustRule{Rule: rule, Updates: true}
	out := s.Share(v)
	if len(out) != 1 || out[0].Tag != TagUpdate || !slices.Equal(out[0].Vector, []float32{0, 1, 2, 3}) {
		t.Fatalf("shared %+v, want the update (0, 1, 2, 3)", out)
	}
	in := []Incoming{
		{From: 1, Tag: TagUpdate, Vector: []float32{0, 0, 0, 1e6}},
		{From: 5, Tag: TagUpdate, Vector: []float32{2, 2, 9, 5}},
		{From: 6, Tag: TagModel, Vector: []float32{9, 9, 9, 9}}, // another tag: ignored
	}
	if _, err := s.Combine(v, in); err != nil {
		t.Fatal(err)
	}
	near(t, "start + median of updates", m.Params(), 1, 2, 3, 6)
}

// W-MSR (survey §4.4): robust with msr runs around the node's own value,
// per coordinate. Own (0, 10), f = 1, neighbors (3, 11), (1, 2), (2, 3):
// coordinate 0 has three values above 0, drop 3: (1 + 2 + 0)/3 = 1;
// coordinate 1 has one above 10 and two below, drop 11 and 2: (3 + 10)/2;
// coordinates 2 and 3 are 0 everywhere.
// As a plain Rule (the median as reference) it would give other values.
func TestRobustMSRAroundOwnValue(t *testing.T) {
	one := 1
	s, err := New("robust", Params{Rule: "msr", F: &one})
	if err != nil {
		t.Fatal(err)
	}
	m := tinyModel(t, 0, 10, 0, 0)
	in := []Incoming{
		{From: 1, Tag: TagModel, Vector: []float32{3, 11, 0, 0}},
		{From: 2, Tag: TagModel, Vector: []float32{1, 2, 0, 0}},
		{From: 4, Tag: TagModel, Vector: []float32{2, 3, 0, 0}},
	}
	w, err := s.Combine(&View{ID: 3, Model: m}, in)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "W-MSR around own", m.Params(), 1, 6.5, 0, 0)
	// Weights: each input's share of the 13 values averaged (3, 2, 4 and 4
	// per coordinate, the reference included): input 1 is dropped in the
	// first two coordinates (3, then 11): 2/13; input 2 in coordinate 1:
	// 3/13; input 4 in none: 4/13.
	if math.Abs(w[1]-2.0/13) > 1e-12 || math.Abs(w[2]-3.0/13) > 1e-12 || math.Abs(w[4]-4.0/13) > 1e-12 {
		t.Errorf("weights %v, want 2/13, 3/13, 4/13", w)
	}
}

// With f left to the declared fraction (f = "auto"), msr still runs around
// the own value: a quarter of 3 neighbours rounds up to f = 1, which gives
// the values computed by hand above.
func TestRobustMSRAutoFAroundOwnValue(t *testing.T) {
	s, err := New("robust", Params{Rule: "msr", Declared: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	m := tinyModel(t, 0, 10, 0, 0)
	in := []Incoming{
		{From: 1, Tag: TagModel, Vector: []float32{3, 11, 0, 0}},
		{From: 2, Tag: TagModel, Vector: []float32{1, 2, 0, 0}},
		{From: 4, Tag: TagModel, Vector: []float32{2, 3, 0, 0}},
	}
	if _, err := s.Combine(&View{ID: 3, Model: m}, in); err != nil {
		t.Fatal(err)
	}
	near(t, "W-MSR around own, f = auto", m.Params(), 1, 6.5, 0, 0)
}

// f from the neighborhood: round(φ·k) for k neighbors, capped where
// Multi-Krum's n > 2f + 2 stops holding.
func TestRobustFFraction(t *testing.T) {
	for _, c := range []struct {
		phi  float64
		want int
	}{{0.2, 2}, {0.8, 3}} {
		s, err := New("robust", Params{Rule: "multi_krum", Options: map[string]float64{"f_fraction": c.phi}})
		if err != nil {
			t.Fatal(err)
		}
		m := tinyModel(t, 0, 0, 0, 0)
		var in []Incoming
		for j := range 9 { // k = 9 neighbors, n = 10 inputs: f <= 3
			in = append(in, Incoming{From: j + 1, Tag: TagModel, Vector: []float32{float32(j), 1, 2, 3}})
		}
		if _, err := s.Combine(&View{ID: 0, Model: m}, in); err != nil {
			t.Fatal(err)
		}
		if f := s.(*RobustRule).Rule.(*aggregate.Auto).F(10); f != c.want {
			t.Errorf("φ = %v: f = %d, want %d", c.phi, f, c.want)
		}
	}
	if _, err := New("robust", Params{Rule: "median", Options: map[string]float64{"f_fraction": 0.3}}); err == nil {
		t.Error("f_fraction with median: no error")
	}
}
