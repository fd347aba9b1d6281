package strategy

import (
	"math"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/nn"
)

// TestStartFreeStrategiesIgnoreStart runs every strategy ReadsStart calls
// start-free twice on the same inputs, with a round-start vector, with
// View.Start absent, full of NaN and another vector: what it
// shares, the parameters it combines and the weights it gives must be the
// same bits. A strategy wrongly listed (it reads Start) fails here.
func TestStartFreeStrategiesIgnoreStart(t *testing.T) {
	m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{63}, Classes: 2}, 1, nn.Options{Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	d := len(m.Params())
	own, in := modelInputs(d)
	start := make([]float32, d)
	for i := range start {
		start[i] = float32(i%3) - 1
	}
	nan, other := make([]float32, d), make([]float32, d)
	for i := range nan {
		nan[i] = float32(math.NaN())
		other[i] = 3*start[i] + float32(i%4) - 1
	}
	type result struct {
		shared  [][]float32
		params  []float32
		weights map[int]float64
	}
	var runWith func(string, Params, []float32) result
	run := func(name string, st []float32) result {
		p := Params{}
		if name == "robust" || name == "rdpfl" {
			p.Rule = "mean"
		}
		return runWith(name, p, st)
	}
	runWith = func(name string, p Params, st []float32) result {
		s, err := New(name, p)
		if err != nil {
			t.Fatal(err)
		}
		_ = m.SetParams(own)
		v := &View{ID: 0, Round: 1, Rounds: 10, Model: m, Start: st, LR: 0.1, Steps: 2,
			BatchLoss: func([]float32) (float64, error) { return 1, nil },
			TrainCopy: func([]float32) (nn.TrainResult, error) { return nn.TrainResult{}, nil },
			Validate:  fakeValidate}
		if name == "murmura" || name == "dmtt" {
			v.Validate = evidentialValidate
			v.Trust = fakeTrust{t: map[int]float64{1: 0.9, 2: 0.9, 3: 0.9}, p: map[int]float64{1: 1, 2: 1, 3: 1}}
		}
		if lt, ok := s.(LocalTrainer); ok {
			lt.LocalTraining(v, nn.TrainConfig{Epochs: 1})
		}
		var r result
		for _, o := range s.Share(v) {
			r.shared = append(r.shared, slices.Clone(o.Vector))
		}
		inputs := in
		if p.Updates {
			inputs = nil
			for _, m := range in {
				inputs = append(inputs, Incoming{From: m.From, Tag: TagUpdate, Vector: m.Vector})
			}
		}
		w, err := s.Combine(v, inputs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r.params, r.weights = slices.Clone(m.Params()), w
		return r
	}
	bits := func(x []float32) []uint32 {
		b := make([]uint32, len(x))
		for i, v := range x {
			b[i] = math.Float32bits(v)
		}
		return b
	}
	free := 0
	for _, name := range Names() {
		p := Params{}
		if name == "robust" || name == "rdpfl" {
			p.Rule = "mean"
		}
		s, _ := New(name, p)
		if ReadsStart(s) {
			continue
		}
		free++
		want := run(name, start)
		for _, st := range [][]float32{nil, nan, other} {
			got := run(name, st)
			if !slices.Equal(bits(got.params), bits(want.params)) || len(got.shared) != len(want.shared) {
				t.Errorf("%s: combined parameters depend on View.Start", name)
				continue
			}
			for k := range got.shared {
				if !slices.Equal(bits(got.shared[k]), bits(want.shared[k])) {
					t.Errorf("%s: shared vector %d depends on View.Start", name, k)
				}
			}
			for j, w := range want.weights {
				if got.weights[j] != w {
					t.Errorf("%s: weight of %d depends on View.Start (%v, %v)", name, j, got.weights[j], w)
				}
			}
		}
	}
	if free < 5 {
		t.Errorf("only %d start-free strategies; fedavg, balance, ubar, lightyear, dmtt at least", free)
	}
	// The check can fail: a strategy that reads Start (a robust rule on
	// updates adds the aggregate to Start) does differ, and says so.
	p := Params{Rule: "mean", Updates: true}
	if s, _ := New("robust", p); !ReadsStart(s) {
		t.Error("robust on updates is listed start-free")
	}
	if a, b := runWith("robust", p, start), runWith("robust", p, other); slices.Equal(bits(a.params), bits(b.params)) {
		t.Error("robust on updates gave the same parameters with another Start: the check cannot see Start")
	}
}
