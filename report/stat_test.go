package report

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	if s := Summarize(nil); !math.IsNaN(s.Mean) || s.Std != 0 || s.N != 0 {
		t.Errorf("Summarize(nil) = %+v, want NaN mean, 0 std, N 0", s)
	}
	if s := Summarize([]float64{2}); s != (Stat{Mean: 2, Std: 0, N: 1}) {
		t.Errorf("Summarize([2]) = %+v", s)
	}
	// By hand: mean 2.5; squared deviations 2.25+0.25+0.25+2.25 = 5; 5/3.
	s := Summarize([]float64{1, 2, 3, 4})
	if s.Mean != 2.5 || math.Abs(s.Std-math.Sqrt(5.0/3)) > 1e-15 || s.N != 4 {
		t.Errorf("Summarize([1 2 3 4]) = %+v, want mean 2.5, std %v", s, math.Sqrt(5.0/3))
	}
}

func TestMeanSeries(t *testing.T) {
	// The second run misses round 1 (an interrupted seed): round 1 is
	// summarized over the first run alone.
	b, err := MeanSeries([]Series{
		{Rounds: []int{0, 1, 2}, Values: []float64{1, 2, 3}},
		{Rounds: []int{0, 2}, Values: []float64{3, 5}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Band{
		Rounds: []int{0, 1, 2},
		Stats:  []Stat{{2, math.Sqrt2, 2}, {2, 0, 1}, {4, math.Sqrt2, 2}},
	}
	if len(b.Rounds) != 3 || len(b.Stats) != 3 {
		t.Fatalf("MeanSeries = %+v, want %+v", b, want)
	}
	for i := range want.Rounds {
		g, w := b.Stats[i], want.Stats[i]
		if b.Rounds[i] != want.Rounds[i] || g.Mean != w.Mean || g.N != w.N || math.Abs(g.Std-w.Std) > 1e-15 {
			t.Errorf("round %d: got %d %+v, want %d %+v", i, b.Rounds[i], g, want.Rounds[i], w)
		}
	}

	if _, err := MeanSeries([]Series{{Rounds: []int{0, 1}, Values: []float64{1}}}); err == nil {
		t.Error("MeanSeries accepted 2 rounds with 1 value")
	}
	if _, err := MeanSeries([]Series{{Rounds: []int{0, 2, 2}, Values: []float64{1, 2, 3}}}); err == nil {
		t.Error("MeanSeries accepted a repeated round")
	}
}
