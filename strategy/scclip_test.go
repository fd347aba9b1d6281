package strategy

import "testing"

// clipInputs: distances 5, 2 and 10 from x_0 = 0 (shifted by `by`).
func clipInputs(by float32) []Incoming {
	in := []Incoming{
		{From: 1, Tag: TagModel, Vector: []float32{3, 4, 0, 0}},
		{From: 2, Tag: TagModel, Vector: []float32{0, 0, 2, 0}},
		{From: 3, Tag: TagModel, Vector: []float32{0, 0, 0, 10}},
	}
	for _, m := range in {
		for i := range m.Vector {
			m.Vector[i] += by
		}
	}
	return in
}

func TestSCClipHandValues(t *testing.T) {
	cases := []struct {
		f    int
		want []float64
		ws   [3]float64
	}{
		// τ = 5: only sender 3 is clipped, to (0,0,0,5); mean over 4 entries.
		{1, []float64{0.75, 1, 0.5, 1.25}, [3]float64{0.25, 0.25, 0.125}},
		// τ = 2: factors 2/5, 1, 1/5.
		{2, []float64{0.3, 0.4, 0.5, 0.5}, [3]float64{0.1, 0.25, 0.05}},
		// f = 3 >= k: τ = 0, x_0 kept.
		{3, []float64{0, 0, 0, 0}, [3]float64{0, 0, 0}},
		// f = 0: τ = 10, nothing clipped: plain mean.
		{0, []float64{0.75, 1, 0.5, 2.5}, [3]float64{0.25, 0.25, 0.25}},
	}
	for _, c := range cases {
		for _, by := range []float32{0, 1} { // translation equivariance
			m := tinyModel(t, by, by, by, by)
			s := &SCClip{F: c.f}
			w, err := s.Combine(&View{ID: 0, Model: m}, clipInputs(by))
			if err != nil {
				t.Fatal(err)
			}
			want := append([]float64(nil), c.want...)
			for i := range want {
				want[i] += float64(by)
			}
			near(t, "scclip", m.Params(), want...)
			for k, id := range []int{1, 2, 3} {
				if d := w[id] - c.ws[k]; d > 1e-12 || d < -1e-12 {
					t.Errorf("f=%d weights %v, want %v", c.f, w, c.ws)
				}
			}
		}
	}
	if _, err := (&SCClip{F: -1}).Combine(&View{Model: tinyModel(t, 0, 0, 0, 0)}, nil); err == nil {
		t.Error("f = -1 accepted")
	}
}

func TestClippedGossipWeightings(t *testing.T) {
	// Uniform weights: identical to SCClip.
	m := tinyModel(t, 0, 0, 0, 0)
	if _, err := (&ClippedGossip{F: 1}).Combine(&View{Model: m}, clipInputs(0)); err != nil {
		t.Fatal(err)
	}
	near(t, "uniform", m.Params(), 0.75, 1, 0.5, 1.25)
	// MH with deg_i = 3 and neighbor degrees 1, 5, 3: w = 1/4, 1/6, 1/4;
	// τ = 5 halves sender 3's difference.
	_ = m.SetParams([]float32{0, 0, 0, 0})
	v := &View{Model: m, Neighbors: []int{1, 2, 3}, NeighborDegree: []int{1, 5, 3}, Degree: 3}
	w, err := (&ClippedGossip{F: 1, Weighting: MetropolisHastings}).Combine(v, clipInputs(0))
	if err != nil {
		t.Fatal(err)
	}
	near(t, "mh", m.Params(), 0.75, 1, 1.0/3, 1.25)
	if w[1] != 0.25 || w[2] != 1.0/6 || w[3] != 0.125 {
		t.Errorf("weights %v", w)
	}
}
