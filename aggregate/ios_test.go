package aggregate

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func scalars(vs ...float32) [][]float32 {
	xs := make([][]float32, len(vs))
	for i, v := range vs {
		xs[i] = []float32{v}
	}
	return xs
}

func TestIOSHandComputed(t *testing.T) {
	// {0, 1, 2, 10}, f = 1: the mean 3.25 is farthest from 10, which goes;
	// the mean of {0, 1, 2} is 1.
	xs := scalars(10, 0, 2, 1)
	o := &IOS{F: 1}
	if got := run(t, o, xs); got[0] != 1 {
		t.Errorf("f = 1: %v, want 1", got[0])
	}
	if w, want := o.Weights(), []float64{0, 1.0 / 3, 1.0 / 3, 1.0 / 3}; !slices.Equal(w, want) {
		t.Errorf("f = 1 weights %v, want %v", w, want)
	}
	// f = 2: then 0 and 2 are both 1 from the mean 1; the later in content
	// order (2) goes: the mean of {0, 1}.
	if got := run(t, &IOS{F: 2}, xs); got[0] != 0.5 {
		t.Errorf("f = 2: %v, want 0.5", got[0])
	}
	// Around own 1 with {0, 2, 10}: the mean of {1, 0, 2, 10} is 3.25, 10
	// goes, the own vector stays: (1 + 0 + 2)/3.
	got := make([]float32, 1)
	o = &IOS{F: 1}
	if err := o.AggregateAround(got, []float32{1}, scalars(0, 2, 10)); err != nil || got[0] != 1 {
		t.Errorf("around: %v (%v), want 1", got[0], err)
	}
	if w := o.Weights(); math.Abs(sum(w)-2.0/3) > 1e-15 || w[2] != 0 {
		t.Errorf("around weights %v, want 1/3, 1/3, 0 (own keeps 1/3)", w)
	}
	// The own vector is never discarded, even when it is the outlier:
	// own 100, {0, 1, 2}, f = 1: of the inputs, 0 is farthest from the
	// mean 25.75 and goes; (100 + 1 + 2)/3.
	if err := (&IOS{F: 1}).AggregateAround(got, []float32{100}, scalars(0, 1, 2)); err != nil || got[0] != float32(103.0/3) {
		t.Errorf("own outlier: %v (%v), want 103/3", got[0], err)
	}
	if err := (&IOS{F: 4}).Aggregate(got, scalars(1, 2, 3, 4)); err == nil {
		t.Error("f = n: no error")
	}
}

func TestRTCHandComputed(t *testing.T) {
	// Own 0, n = 4 neighbours {1, −2, 4, 100}, f = 1: 100 goes; τ is the
	// median kept distance 2, so 4 is clipped to 2. Eq. 9 with weights
	// 1/(n+1) = 1/5 each (the removed neighbour's fifth stays on the own
	// vector): 0 + (1 − 2 + 2)/5.
	got := make([]float32, 1)
	c := &RTC{F: 1}
	if err := c.AggregateAround(got, []float32{0}, scalars(1, -2, 4, 100)); err != nil || got[0] != float32(1.0/5) {
		t.Errorf("scalars: %v (%v), want 1/5", got[0], err)
	}
	if w, want := c.Weights(), []float64{1.0 / 5, 1.0 / 5, 0.5 / 5, 0}; !slices.Equal(w, want) {
		t.Errorf("weights %v, want %v", w, want)
	}
	// Vectors, τ = 2: own (0, 0), n = 3; (10, 0) at 10 goes; (0, 1) at 1
	// stays; (3, 4) at 5 is clipped to (1.2, 1.6): ((0, 1) + (1.2, 1.6))/4.
	got2 := make([]float32, 2)
	if err := (&RTC{F: 1, Tau: 2}).AggregateAround(got2, []float32{0, 0}, [][]float32{{3, 4}, {0, 1}, {10, 0}}); err != nil ||
		got2[0] != float32(1.2/4) || got2[1] != float32(2.6/4) {
		t.Errorf("vectors: %v (%v), want [0.3 0.65]", got2, err)
	}
	// As a Rule the reference is the median, 2 of {1, 2, 3, 50, −40}: −40
	// and 50 are the two farthest (f = 2); the kept distances 0, 1, 1 give
	// τ = 1 and nothing is clipped: 2 + (0 − 1 + 1)/6 = 2.
	if got := run(t, &RTC{F: 2}, scalars(1, 2, 3, 50, -40)); got[0] != 2 {
		t.Errorf("rule: %v, want 2", got[0])
	}
	// {0, 1, 2, 10, 11}, f = 1: the median 2; 11 (at 9) goes; the kept
	// distances 0, 1, 2, 8 give τ = 2 (the upper middle one), so 10 is
	// clipped to 4: 2 + (0 − 1 − 2 + 2)/6 = 11/6.
	if got := run(t, &RTC{F: 1}, scalars(0, 1, 2, 10, 11)); got[0] != float32(11.0/6) {
		t.Errorf("rule, one clipped: %v, want 11/6", got[0])
	}
}

// RTC against the remove-then-clip paper's Eq. 9 written out with the
// uniform weights w = 1/(n+1): Σ_{j kept} w·(x_0 + CLIP(x_j − x_0, τ)) +
// Σ_{j removed} w·x_0 + w·x_0, with CLIP(v, τ) = min(1, τ/||v||)·v, on
// random vectors and a fixed τ.
func TestRTCMatchesEq9(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for trial := range 200 {
		n, d := 1+trial%9, 1+trial%4
		f := trial % (n + 1)
		tau := 0.2 + 2*r.Float64()
		own := make([]float32, d)
		for k := range own {
			own[k] = float32(r.NormFloat64())
		}
		xs := make([][]float32, n)
		dist := make([]float64, n)
		for i := range xs {
			xs[i] = make([]float32, d)
			for k := range xs[i] {
				xs[i][k] = float32(3 * r.NormFloat64())
				dist[i] += (float64(xs[i][k]) - float64(own[k])) * (float64(xs[i][k]) - float64(own[k]))
			}
			dist[i] = math.Sqrt(dist[i])
		}
		// The f farthest are removed (distinct distances: random floats).
		byDist := make([]int, n)
		for i := range byDist {
			byDist[i] = i
		}
		slices.SortFunc(byDist, func(a, b int) int { return cmp.Compare(dist[a], dist[b]) })
		w := 1 / float64(n+1)
		want := make([]float64, d)
		for k := range want {
			want[k] = w * float64(own[k]) // w_ii x_i
		}
		for rank, j := range byDist {
			s := 0.0 // removed: w·x_0
			if rank < n-f {
				s = math.Min(1, tau/dist[j])
			}
			for k := range want {
				want[k] += w * (float64(own[k]) + s*(float64(xs[j][k])-float64(own[k])))
			}
		}
		got := make([]float32, d)
		if err := (&RTC{F: f, Tau: tau}).AggregateAround(got, own, xs); err != nil {
			t.Fatal(err)
		}
		for k := range got {
			if math.Abs(float64(got[k])-want[k]) > 1e-6*(1+math.Abs(want[k])) {
				t.Fatalf("trial %d, n = %d, f = %d: coordinate %d = %v, Eq. 9 gives %v", trial, n, f, k, got[k], want[k])
			}
		}
	}
}
