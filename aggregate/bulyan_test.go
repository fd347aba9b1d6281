package aggregate

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Bulyan with n = 8, f = 1 (θ = 6 picks, β = 4 averaged) on
// {−2, −1, 0, 1, 2, 3, 100, −100}, by hand. Iterated Krum, scoring with
// max(0, r − 3) nearest among the r remaining:
//
//	r=8 (5 nearest): 0 and 1 score 19 (tie: 0 by contents), −1 and 2 31, ...
//	r=7 (4): 1 scores 2→1 −1→4 3→4 −2→9 = 18, the lowest
//	r=6 (3): 2 and −1 tie at 26: −1
//	r=5 (2): 2 scores 1 + 16 = 17, 3 26, −2 41: 2
//	r=4 (1): −2 and 3 tie at 25: −2
//	r=3 (0): every score is 0: −100 (contents)
//
// Picked {0, 1, −1, 2, −2, −100}; sorted −100 −2 −1 0 1 2, median −0.5;
// drop the farther end twice: −100 (99.5 > 2.5), then 2 (2.5 > 1.5);
// average −2, −1, 0, 1 = −0.5.
func TestBulyanHandComputed(t *testing.T) {
	xs := [][]float32{{-2}, {-1}, {0}, {1}, {2}, {3}, {100}, {-100}}
	b := &Bulyan{F: 1}
	if got := run(t, b, xs); got[0] != -0.5 {
		t.Fatalf("bulyan = %v, want -0.5", got[0])
	}
	if got, want := b.picked, []int{2, 3, 1, 4, 0, 7}; !slices.Equal(got, want) {
		t.Errorf("picked %v, want %v", got, want)
	}
	if w, want := b.Weights(), []float64{0.25, 0.25, 0.25, 0.25, 0, 0, 0, 0}; !slices.Equal(w, want) {
		t.Errorf("weights %v, want %v", w, want)
	}
}

// bulyanReference is Bulyan written plainly from the definition, in
// float64 with direct distances and sorting, as the oracle.
func bulyanReference(xs [][]float32, f int) []float64 {
	n, d := len(xs), len(xs[0])
	d2 := func(a, b int) float64 {
		var s float64
		for k := range d {
			e := float64(xs[a][k]) - float64(xs[b][k])
			s += e * e
		}
		return s
	}
	rest := make([]int, n)
	for i := range rest {
		rest[i] = i
	}
	var picked []int
	for len(picked) < n-2*f {
		best, bestScore := -1, math.Inf(1)
		for _, a := range rest {
			var ds []float64
			for _, b := range rest {
				if a != b {
					ds = append(ds, d2(a, b))
				}
			}
			slices.Sort(ds)
			var s float64
			for _, v := range ds[:max(0, len(rest)-f-2)] {
				s += v
			}
			// Ties (every score is 0 in the last round when f = 1) go to
			// the lexicographically smaller vector, as in the rule.
			if s < bestScore || s == bestScore && slices.Compare(xs[a], xs[best]) < 0 {
				best, bestScore = a, s
			}
		}
		picked = append(picked, best)
		rest = slices.DeleteFunc(rest, func(i int) bool { return i == best })
	}
	beta := n - 4*f
	out := make([]float64, d)
	for k := range d {
		var vals []float64
		for _, i := range picked {
			vals = append(vals, float64(xs[i][k]))
		}
		slices.Sort(vals)
		t := len(vals)
		med := vals[t/2]
		if t%2 == 0 {
			med = (vals[t/2-1] + vals[t/2]) / 2
		}
		slices.SortStableFunc(vals, func(a, b float64) int {
			da, db := math.Abs(a-med), math.Abs(b-med)
			switch {
			case da < db:
				return -1
			case da > db:
				return 1
			}
			return 0
		})
		for _, v := range vals[:beta] {
			out[k] += v
		}
		out[k] /= float64(beta)
	}
	return out
}

func TestBulyanAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 30))
	for _, c := range []struct{ n, f int }{{8, 1}, {13, 2}, {21, 4}} {
		xs := make([][]float32, c.n)
		for i := range xs {
			xs[i] = make([]float32, 25)
			for j := range xs[i] {
				xs[i][j] = float32(r.NormFloat64())
				if i < c.f {
					xs[i][j] = float32(20 * r.NormFloat64())
				}
			}
		}
		want := bulyanReference(xs, c.f)
		got := run(t, &Bulyan{F: c.f}, xs)
		for j := range got {
			if math.Abs(float64(got[j])-want[j]) > 1e-6*(1+math.Abs(want[j])) {
				t.Fatalf("n=%d f=%d coordinate %d: %v, want %v", c.n, c.f, j, got[j], want[j])
			}
		}
	}
}
