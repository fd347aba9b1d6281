package strategy

import (
	"runtime"
	"testing"

	"github.com/trellis-fl/trellis/nn"
)

// TestNoModelSizedAllocationAfterFirstRound checks that a second Combine
// allocates less than one model's worth of bytes (scratch is reused).
func TestNoModelSizedAllocationAfterFirstRound(t *testing.T) {
	m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{2047}, Classes: 2}, 1, nn.Options{Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	d := len(m.Params())
	own, in := modelInputs(d)
	start := make([]float32, d)
	for _, name := range Names() {
		p := Params{}
		if name == "robust" {
			p.Rule = "mean"
		}
		s, err := New(name, p)
		if err != nil {
			t.Fatal(err)
		}
		if name == "dpsgd" || name == "gradient_tracking" || name == "gradient_tracking_sd" || name == "function_sharing" {
			continue // other tags; covered elsewhere
		}
		var ms runtime.MemStats
		var before uint64
		for round := range 2 {
			_ = m.SetParams(own)
			v := &View{ID: 0, Round: round, Rounds: 10, Model: m, Start: start,
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
			if round == 1 {
				runtime.ReadMemStats(&ms)
				before = ms.TotalAlloc
			}
			if _, err := s.Combine(v, in); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		runtime.ReadMemStats(&ms)
		if got := ms.TotalAlloc - before; got >= uint64(4*d) {
			t.Errorf("%s allocated %d bytes in round 2 (model is %d bytes)", name, got, 4*d)
		}
	}
}

// modelInputs are an own model of d parameters and six neighbours' models
// (senders 1 … 6), all different.
func modelInputs(d int) (own []float32, in []Incoming) {
	own = make([]float32, d)
	for i := range own {
		own[i] = float32(i%5) - 2
	}
	for j := 1; j <= 6; j++ {
		x := make([]float32, d)
		for i := range x {
			x[i] = float32((i*j)%7) - 3
		}
		in = append(in, Incoming{From: j, Tag: TagModel, Vector: x})
	}
	return own, in
}
