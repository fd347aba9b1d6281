package strategy

import (
	"fmt"
	"math"
	"testing"

	"github.com/trellis-fl/trellis/agreement"
)

// outputsByFirstParam stands in for View.Validate with two validation
// samples of two classes, one per model chosen by its first parameter:
//
//	own (1): probs (0.9, 0.1), (0.2, 0.8); labels 0, 1; features 1, −1.
//	A   (2): probs (1, 0), (0, 1);         labels 0, 1; features 1, −1.
//	B   (3): probs (0.1, 0.9), (0.8, 0.2); labels 0, 1; features 1, −1.
//
// By hand, for a binary softmax M = q·[[1, −1], [−1, 1]] with q = p₀p₁, so
// K(a, b) = (φ_a φ_b + 1)·4 q_a q_b. B has own's features and own's q per
// sample (0.09, 0.16): the same kernel, CKA 1. A is certain (q = 0): its
// kernel is exactly zero, which agrees with nothing, CKA 0. Calibration (15
// bins of the max probability): own acc 1, ECE (0.1 + 0.2)/2 = 0.15,
// sharpness 0.85; A acc 1, ECE 0, sharpness 1, score (1 + 0.85 + 0.85)/3
// = 0.9; B acc 0, ECE (0.9 + 0.8)/2 = 0.85, sharpness
// 0.85, score (0 + 0.3 + 1)/3 = 13/30. So ntk and calibration disagree on
// both peers.
func outputsByFirstParam(params []float32, n int, dst *agreement.Outputs) error {
	var probs, feats []float32
	switch params[0] {
	case 1:
		probs, feats = []float32{0.9, 0.1, 0.2, 0.8}, []float32{1, -1}
	case 2:
		probs, feats = []float32{1, 0, 0, 1}, []float32{1, -1}
	case 3:
		probs, feats = []float32{0.1, 0.9, 0.8, 0.2}, []float32{1, -1}
	default:
		return fmt.Errorf("no outputs for model %v", params[0])
	}
	dst.N, dst.Classes, dst.Dim = min(n, 2), 2, 1
	dst.Probs, dst.Features, dst.Labels = probs, feats, []int{0, 1}
	return nil
}

// TestLightyearSelectsByItsOwnScore: with tau 0.6 ntk keeps only B and
// calibration only A, at the hand values above; selecting by the wrong
// score would swap them.
func TestLightyearSelectsByItsOwnScore(t *testing.T) {
	in := []Incoming{
		{From: 4, Tag: TagModel, Vector: []float32{2, 0, 0, 0}},
		{From: 7, Tag: TagModel, Vector: []float32{3, 0, 0, 0}},
	}
	hand := map[string]map[int]float64{
		ScoreNTK:         {4: 0, 7: 1},
		ScoreCalibration: {4: 0.9, 7: 13.0 / 30},
	}
	for _, c := range []struct {
		score string
		kept  int
	}{{ScoreNTK, 7}, {ScoreCalibration, 4}} {
		s, err := New("lightyear", Params{Score: c.score})
		if err != nil {
			t.Fatal(err)
		}
		m := tinyModel(t, 1, 0, 0, 0)
		w, err := s.Combine(&View{ID: 0, Round: 2, Model: m, Validate: outputsByFirstParam}, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range s.(ScoreReporter).Scores() {
			if want, ok := hand[p.Kind][p.From]; ok && math.Abs(p.Value-want) > 1e-6 {
				t.Errorf("%s score of sender %d = %v, want %v by hand", p.Kind, p.From, p.Value, want)
			}
		}
		g2 := 0.95 * 0.95 // Eq. 17 with |S| = 1: the kept sender gets g^t
		for _, from := range []int{4, 7} {
			want := 0.0
			if from == c.kept {
				want = g2
			}
			if math.Abs(w[from]-want) > 1e-12 {
				t.Errorf("selecting by %s: sender %d weight %v, want %v", c.score, from, w[from], want)
			}
		}
	}
}

// TestLightyearThresholdIsInclusive: spec step 4 keeps A ≥ tau, so a score
// exactly at tau is kept and one just below is not.
func TestLightyearThresholdIsInclusive(t *testing.T) {
	in := []Incoming{{From: 4, Tag: TagModel, Vector: []float32{2, 0, 0, 0}}}
	probe, err := New("lightyear", Params{Score: ScoreCalibration})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := probe.Combine(&View{Round: 0, Model: tinyModel(t, 1, 0, 0, 0), Validate: outputsByFirstParam}, in); err != nil {
		t.Fatal(err)
	}
	var score float64
	for _, p := range probe.(ScoreReporter).Scores() {
		if p.Kind == ScoreCalibration {
			score = p.Value
		}
	}
	for _, c := range []struct {
		tau  float64
		kept bool
	}{{score, true}, {math.Nextafter(score, 2), false}} {
		s, err := New("lightyear", Params{Score: ScoreCalibration, Options: map[string]float64{"tau": c.tau}})
		if err != nil {
			t.Fatal(err)
		}
		w, err := s.Combine(&View{Round: 0, Model: tinyModel(t, 1, 0, 0, 0), Validate: outputsByFirstParam}, in)
		if err != nil {
			t.Fatal(err)
		}
		if got := w[4] != 0; got != c.kept {
			t.Errorf("score %v at tau %v: kept %v, want %v", score, c.tau, got, c.kept)
		}
	}
}

// TestPaperDefaultsPinned pins the defaults to the specs' literal values
// (the LIGHTYEAR paper, §4.5–4.7; the R-DPFL paper, Algorithm 2 and Eq. 16), so a
// changed constant fails here and not only in a paper table.
func TestPaperDefaultsPinned(t *testing.T) {
	s, err := New("lightyear", Params{})
	if err != nil {
		t.Fatal(err)
	}
	l := s.(*Lightyear)
	if l.Tau != 0.6 || l.G != 0.95 || l.NVal != 128 || l.Score != "ntk" || l.IncludeSelf {
		t.Errorf("lightyear defaults %+v, want tau 0.6, g 0.95, n_val 128, score ntk, Eq. 17 (own model not averaged in)", *l)
	}
	s, err = New("rdpfl", Params{Rule: "median"})
	if err != nil {
		t.Fatal(err)
	}
	r := s.(*RDPFL)
	if r.Lambda != 0.01 || r.G != 1 || r.Gd != 10 || r.GdRelative != 0 || r.Warmup != 5 ||
		r.A != 0.9 || r.C != 1.5 || r.Tau0 != 1 || r.NoPrediction || r.NoClipping || r.Literal {
		t.Errorf("rdpfl defaults: λ %v g %v G_d %v rel %v W %v a %v c %v τ⁰ %v ablations %v/%v literal %v; want 0.01 1 10 0 5 0.9 1.5 1 false/false false",
			r.Lambda, r.G, r.Gd, r.GdRelative, r.Warmup, r.A, r.C, r.Tau0, r.NoPrediction, r.NoClipping, r.Literal)
	}
}
