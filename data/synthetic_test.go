package data

import (
	"math"
	"slices"
	"testing"
)

func TestSynthetic(t *testing.T) {
	cfg := SyntheticConfig{Clients: 8, SamplesPerClient: 200, TestSamples: 500, Dim: 10, Classes: 4, Seed: 3}
	tt, p, err := NewSynthetic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*Dataset{tt.Train, tt.Test} {
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	if tt.Train.Len() != 1600 || tt.Test.Len() != 500 || p.NumClients() != 8 {
		t.Fatalf("sizes %d/%d, %d clients", tt.Train.Len(), tt.Test.Len(), p.NumClients())
	}
	checkPartition(t, p, tt.Train.All(), tt.Train.Len())
	// The partition is the natural one.
	nat, _ := NewPartition(tt.Train, PartitionConfig{Method: Natural})
	if !slices.EqualFunc(p.Clients, nat.Clients, slices.Equal) {
		t.Error("partition differs from the natural partition by group")
	}
	// Deterministic; and more clients leave the first ones unchanged.
	again, _, _ := NewSynthetic(cfg)
	if !slices.Equal(tt.Train.X, again.Train.X) || !slices.Equal(tt.Test.X, again.Test.X) {
		t.Error("same seed, different data")
	}
	cfg.Clients = 9
	more, _, _ := NewSynthetic(cfg)
	if !slices.Equal(more.Train.X[:len(tt.Train.X)], tt.Train.X) {
		t.Error("adding a client changed earlier clients")
	}
	// Classes are learnable: nearest class mean (estimated on train)
	// classifies the test set well.
	if acc := nearestMeanAccuracy(tt.Train, tt.Test); acc < 0.8 {
		t.Errorf("nearest-mean accuracy %.2f, want > 0.8", acc)
	}
}

func TestSyntheticShifts(t *testing.T) {
	base := SyntheticConfig{Clients: 10, SamplesPerClient: 300, Dim: 5, Classes: 5, Seed: 4}
	skewed := base
	skewed.LabelAlpha = 0.1
	tvOf := func(cfg SyntheticConfig) float64 {
		tt, p, err := NewSynthetic(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return meanTV(tt.Train, p)
	}
	if u, s := tvOf(base), tvOf(skewed); !(s > 3*u && s > 0.4) {
		t.Errorf("label shift: TV %.3f with alpha 0.1 vs %.3f uniform", s, u)
	}
	shifted := base
	shifted.FeatureShift = 5
	spread := func(cfg SyntheticConfig) float64 { // mean distance of client means from the global mean
		tt, p, _ := NewSynthetic(cfg)
		d := tt.Train
		global := make([]float64, d.RowLen())
		for i := range d.Len() {
			for j, v := range d.Row(i) {
				global[j] += float64(v) / float64(d.Len())
			}
		}
		var s float64
		for _, c := range p.Clients {
			m := make([]float64, d.RowLen())
			for _, i := range c {
				for j, v := range d.Row(int(i)) {
					m[j] += float64(v) / float64(len(c))
				}
			}
			var dist float64
			for j := range m {
				dist += (m[j] - global[j]) * (m[j] - global[j])
			}
			s += math.Sqrt(dist) / float64(len(p.Clients))
		}
		return s
	}
	if a, b := spread(base), spread(shifted); !(b > 5*a) {
		t.Errorf("feature shift: client-mean spread %.2f with shift 5 vs %.2f without", b, a)
	}
	for _, bad := range []SyntheticConfig{{}, {Clients: 1, SamplesPerClient: 1, Dim: 1, Classes: 1}, {Clients: 1, SamplesPerClient: 1, Dim: 1, Classes: 2, Noise: -1}} {
		if _, _, err := NewSynthetic(bad); err == nil {
			t.Errorf("%+v: want an error", bad)
		}
	}
}

func nearestMeanAccuracy(train, test *Dataset) float64 {
	k, w := train.NumClasses(), train.RowLen()
	means := make([]float64, k*w)
	counts := make([]float64, k)
	for i := range train.Len() {
		c := train.Y[i]
		counts[c]++
		for j, v := range train.Row(i) {
			means[c*w+j] += float64(v)
		}
	}
	for c := range k {
		for j := range w {
			means[c*w+j] /= counts[c]
		}
	}
	right := 0
	for i := range test.Len() {
		best, bestD := 0, math.Inf(1)
		for c := range k {
			var d float64
			for j, v := range test.Row(i) {
				d += (float64(v) - means[c*w+j]) * (float64(v) - means[c*w+j])
			}
			if d < bestD {
				best, bestD = c, d
			}
		}
		if best == test.Y[i] {
			right++
		}
	}
	return float64(right) / float64(test.Len())
}
