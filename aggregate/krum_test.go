package aggregate

import (
	"math"
	"slices"
	"testing"
)

// Krum and Multi-Krum on 1-D values, scores by hand (n = 5, f = 1: the
// 5 − 1 − 2 = 2 nearest others):
//
//	x      0    1    2    10   11
//	score  1+4  1+1  1+4  64+1 81+1   = 5, 2, 5, 65, 82
func TestKrumHandComputed(t *testing.T) {
	xs := [][]float32{{10}, {0}, {11}, {2}, {1}}
	k := &Krum{F: 1}
	if got := run(t, k, xs); got[0] != 1 {
		t.Fatalf("krum = %v, want 1", got)
	}
	if w := k.Weights(); !slices.Equal(w, []float64{0, 0, 0, 0, 1}) {
		t.Errorf("krum weights %v", w)
	}
	for _, c := range []struct {
		m    int
		want float32
		w    []float64
	}{
		{0, 3.25, []float64{0.25, 0.25, 0, 0.25, 0.25}}, // m = n − f = 4: 1, 0, 2, 10
		{3, 1, []float64{0, 1.0 / 3, 0, 1.0 / 3, 1.0 / 3}},
		{2, 0.5, []float64{0, 0.5, 0, 0, 0.5}}, // 0 and 2 tie at 5: contents order takes 0
		{1, 1, []float64{0, 0, 0, 0, 1}},
		{5, 4.8, []float64{0.2, 0.2, 0.2, 0.2, 0.2}},
	} {
		mk := &MultiKrum{F: 1, M: c.m}
		if got := run(t, mk, xs); got[0] != c.want {
			t.Errorf("multi_krum m=%d = %v, want %v", c.m, got[0], c.want)
		}
		if w := mk.Weights(); !slices.Equal(w, c.w) {
			t.Errorf("multi_krum m=%d weights %v, want %v", c.m, w, c.w)
		}
	}

	// 2-D: A(0,0) B(1,0) C(0,1) D(5,5) E(−3,4); squared distances AB 1,
	// AC 1, AD 50, AE 25, BC 2, BD 41, BE 32, CD 41, CE 18, DE 65; scores
	// (2 nearest) A 2, B 3, C 3, D 82, E 43: Krum picks A.
	pts := [][]float32{{5, 5}, {1, 0}, {-3, 4}, {0, 0}, {0, 1}}
	if got := run(t, &Krum{F: 1}, pts); !slices.Equal(got, []float32{0, 0}) {
		t.Errorf("krum 2-D = %v, want [0 0]", got)
	}
	// m = 3: A, then B and C (tied at 3; both taken).
	if got := run(t, &MultiKrum{F: 1, M: 3}, pts); !slices.Equal(got, []float32{float32(1.0 / 3), float32(1.0 / 3)}) {
		t.Errorf("multi_krum 2-D = %v", got)
	}
}

// krumReference is Krum's score written plainly from the definition, in
// float64, as the oracle for the GEMM-based scores.
func krumReference(xs [][]float32, f int) []float64 {
	n := len(xs)
	scores := make([]float64, n)
	for i := range xs {
		var ds []float64
		for j := range xs {
			if i != j {
				var s float64
				for k := range xs[i] {
					e := float64(xs[i][k]) - float64(xs[j][k])
					s += e * e
				}
				ds = append(ds, s)
			}
		}
		slices.Sort(ds)
		for _, v := range ds[:n-f-2] {
			scores[i] += v
		}
	}
	return scores
}

func TestKrumScoresAgainstReference(t *testing.T) {
	xs := benchInputs(30, 3000)
	for i := range xs {
		for j := range xs[i] {
			xs[i][j] += float32(i % 3) // some structure
		}
	}
	want := krumReference(xs, 5)
	k := &Krum{F: 5}
	run(t, k, xs)
	for i, s := range k.ks.scores {
		if math.Abs(s-want[i]) > 1e-5*want[i] {
			t.Errorf("score %d = %v, want %v", i, s, want[i])
		}
	}
	best := 0
	for i, s := range want {
		if s < want[best] {
			best = i
		}
	}
	if k.ks.order[0] != best {
		t.Errorf("krum chose %d, the reference %d", k.ks.order[0], best)
	}
}

// Finite inputs as large as float32 allows (and as small) neither overflow
// nor underflow the float32 Gram product: Krum still finds the honest
// cluster.
func TestKrumExtremeMagnitudes(t *testing.T) {
	for _, scale := range []float32{1, 1e-30, 1e30} {
		xs := [][]float32{
			{1e38, -3e38, 1e38}, {3e38, 3e38, -3e38}, // Byzantine, near float32's limit
			{1 * scale, 2 * scale, 3 * scale}, {1.1 * scale, 2 * scale, 3 * scale}, {1 * scale, 2.1 * scale, 3 * scale},
			{1 * scale, 2 * scale, 3.1 * scale}, {0.9 * scale, 2 * scale, 3 * scale},
		}
		if scale == 1e30 {
			xs[0], xs[1] = []float32{1e-38, 0, 0}, []float32{-1e-38, 0, 0}
		}
		got := run(t, &Krum{F: 2}, xs)
		if !slices.Equal(got, xs[2]) {
			t.Errorf("scale %g: krum = %v, want the cluster's center %v", scale, got, xs[2])
		}
	}
}
