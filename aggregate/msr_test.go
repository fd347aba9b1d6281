package aggregate

import (
	"slices"
	"testing"
)

func TestMSRHandComputed(t *testing.T) {
	// Reference 1, f = 1, values {−5, 0, 2, 3, 1}: above 1 are 2 and 3 (drop
	// 3), below are −5 and 0 (drop −5), 1 itself stays: (0 + 2 + 1 + 1)/4.
	xs := [][]float32{{-5}, {0}, {2}, {3}, {1}}
	m := &MSR{F: 1}
	got := make([]float32, 1)
	if err := m.AggregateAround(got, []float32{1}, xs); err != nil {
		t.Fatal(err)
	}
	if got[0] != 1 {
		t.Errorf("around 1: %v, want 1", got[0])
	}
	if w, want := m.Weights(), []float64{0, 0.25, 0.25, 0, 0.25}; !slices.Equal(w, want) {
		t.Errorf("weights %v, want %v (the own vector keeps 1/4)", w, want)
	}
	// As a Rule the reference is the median, here also 1 (input 4), which
	// is credited with the reference's share too.
	if got := run(t, m, xs); got[0] != 1 {
		t.Errorf("rule: %v, want 1", got[0])
	}
	if w, want := m.Weights(), []float64{0, 0.25, 0.25, 0, 0.5}; !slices.Equal(w, want) {
		t.Errorf("rule weights %v, want %v", w, want)
	}

	// Fewer than f on a side: all of them go. Reference 0, f = 2, values
	// {1, 5, −1}: everything is removed and the reference remains.
	if err := (&MSR{F: 2}).AggregateAround(got, []float32{0}, [][]float32{{1}, {5}, {-1}}); err != nil || got[0] != 0 {
		t.Errorf("all removed: %v (%v), want 0", got[0], err)
	}
	// f = 0 keeps everything: the mean of the values and the reference.
	if err := (&MSR{}).AggregateAround(got, []float32{2}, [][]float32{{1}, {5}, {-1}, {1}}); err != nil || got[0] != 1.6 {
		t.Errorf("f = 0: %v (%v), want 8/5", got[0], err)
	}
	// Per coordinate: coordinate 0 as above, coordinate 1 around 10 with
	// values {0, 20, 30, 10, 10}: drop 30 and 0; (20 + 10 + 10 + 10)/4.
	two := [][]float32{{-5, 0}, {0, 20}, {2, 30}, {3, 10}, {1, 10}}
	got2 := make([]float32, 2)
	if err := (&MSR{F: 1}).AggregateAround(got2, []float32{1, 10}, two); err != nil || !slices.Equal(got2, []float32{1, 12.5}) {
		t.Errorf("two coordinates: %v (%v), want [1 12.5]", got2, err)
	}
}

// Asymmetric counts: more values on one side of the reference than the
// other, so exchanging the above and below trimming counts changes the
// result (a mutation no other case catches).
func TestMSRAsymmetricCounts(t *testing.T) {
	got := make([]float32, 1)
	cases := []struct {
		own  float32
		f    int
		xs   []float32
		want float32
	}{
		// Three above 0, none below, f = 1: drop 3 only; (1 + 2 + 0)/3.
		{0, 1, []float32{3, 1, 2}, 1},
		// Three below 10, one above, f = 2: drop 1 and 2 below, 11 above;
		// (3 + 10)/2.
		{10, 2, []float32{11, 2, 1, 3}, 6.5},
		// One below, three above 5, f = 2: drop 4 (all below) and 9, 8;
		// (6 + 5)/2.
		{5, 2, []float32{9, 4, 6, 8}, 5.5},
	}
	for _, c := range cases {
		xs := make([][]float32, len(c.xs))
		for i, v := range c.xs {
			xs[i] = []float32{v}
		}
		if err := (&MSR{F: c.f}).AggregateAround(got, []float32{c.own}, xs); err != nil || got[0] != c.want {
			t.Errorf("around %v, f = %d, %v: %v (%v), want %v", c.own, c.f, c.xs, got[0], err, c.want)
		}
	}
	// As a Rule the reference is the median, 1 of {0, 1, 1, 1, 5, 6, 7}:
	// one value below it, three above; f = 2 drops 0, 7 and 6, and keeps
	// 1, 1, 1, 5 with the reference: 9/5.
	xs := [][]float32{{6}, {1}, {0}, {7}, {1}, {5}, {1}}
	if got := run(t, &MSR{F: 2}, xs); got[0] != float32(1.8) {
		t.Errorf("rule: %v, want 1.8", got[0])
	}
}
