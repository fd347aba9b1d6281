package aggregate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// On random instances with n = (d+1)f + 1 inputs and a few more, f of them
// faulty and placed as in the safe_area tests: the partition has f + 1
// non-empty disjoint parts of N = (d+1)f + 1 inputs, one all honest, the
// point is in the hull of each part and of the honest inputs (hullDist,
// independent of the linear programs), and the weights express it.
func TestTverbergInHonestHull(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	for _, c := range []struct{ d, f, extra int }{
		{2, 1, 0}, {2, 2, 0}, {2, 2, 3}, {2, 3, 0},
		{3, 1, 0}, {3, 1, 2}, {3, 2, 0}, {3, 2, 4},
		{5, 1, 0}, {5, 1, 3},
	} {
		n := max((c.d+1)*c.f+1, 3*c.f+1) + c.extra
		N := (c.d+1)*c.f + 1
		for _, pl := range safePlacements {
			honest := gen(n-c.f, c.d, func(int, int) float64 { return rng.NormFloat64() })
			pts := withFaulty(rng, honest, pl.place(rng, honest, c.f))
			r := &TverbergPoint{F: c.f}
			x := make([]float64, c.d)
			if err := r.Point(x, pts); err != nil {
				t.Fatalf("d=%d f=%d n=%d %s: %v", c.d, c.f, n, pl.name, err)
			}
			if dh := hullDist(honest, x); dh > safeTol*spread(honest) {
				t.Errorf("d=%d f=%d n=%d %s: %v is %.3g from the honest hull", c.d, c.f, n, pl.name, x, dh)
			}
			checkPartition(t, fmt.Sprintf("d=%d f=%d n=%d %s", c.d, c.f, n, pl.name), pts, honest, x, r.Partition(), c.f+1, N)
			checkWeights(t, r.Weights(), pts, x)
		}
	}
}

// partDist is an upper bound on the distance from x to the hull of pts,
// exact (up to rounding) when x is in the hull of affinely independent
// pts: hullDist when there are more than d inputs; else the affine
// least-squares combination Σ λ_j p_j (Σ λ_j = 1, from the normal
// equations of [1; P] λ = [1; x]), clamped at 0 and renormalized, or the
// nearest input. A part of a Tverberg partition of exactly (d+1)f + 1
// inputs has at most d + 1 inputs, often fewer than d + 1, which
// hullDist's simplices of d + 1 inputs do not cover.
func partDist(pts [][]float64, x []float64) float64 {
	m, d := len(pts), len(x)
	if m > d || m < 2 {
		return hullDist(pts, x)
	}
	best := hullDist(pts, x) // the nearest input, at least
	// A = [1; P] ((d+1)×m), solve AᵀA λ = Aᵀ[1; x].
	col := func(j, r int) float64 {
		if r == 0 {
			return 1
		}
		return pts[j][r-1]
	}
	rhs := func(r int) float64 {
		if r == 0 {
			return 1
		}
		return x[r-1]
	}
	a := make([][]float64, m)
	for i := range m {
		a[i] = make([]float64, m+1)
		for j := range m {
			for r := range d + 1 {
				a[i][j] += col(i, r) * col(j, r)
			}
		}
		for r := range d + 1 {
			a[i][m] += col(i, r) * rhs(r)
		}
	}
	for c := range m {
		p := c
		for r := c + 1; r < m; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-12 {
			return best
		}
		a[c], a[p] = a[p], a[c]
		for r := range m {
			if r != c {
				q := a[r][c] / a[c][c]
				for k := c; k <= m; k++ {
					a[r][k] -= q * a[c][k]
				}
			}
		}
	}
	var sum float64
	lam := make([]float64, m)
	for c := range m {
		lam[c] = max(a[c][m]/a[c][c], 0)
		sum += lam[c]
	}
	if sum == 0 {
		return best
	}
	y := make([]float64, d)
	for j := range m {
		for k := range d {
			y[k] += lam[j] / sum * pts[j][k]
		}
	}
	return min(best, dist(y, x))
}

// Radon's theorem in the plane, by hand: four points in convex position
// split into the two diagonals, which cross at one point; with a fifth
// input far away the nearest four are used.
func TestTverbergRadon(t *testing.T) {
	p := [][]float64{{0, 0}, {4, 0}, {5, 3}, {1, 5}}
	want := []float64{5 * 20.0 / 34, 3 * 20.0 / 34}
	r := &TverbergPoint{F: 1}
	x := make([]float64, 2)
	if err := r.Point(x, p); err != nil {
		t.Fatal(err)
	}
	if dist(x, want) > 1e-9 {
		t.Errorf("point %v, want %v", x, want)
	}
	if got := r.Partition(); !slices.EqualFunc(got, [][]int{{0, 2}, {1, 3}}, slices.Equal) && !slices.EqualFunc(got, [][]int{{1, 3}, {0, 2}}, slices.Equal) {
		t.Errorf("partition %v, want the diagonals", got)
	}
	// A triangle and a point inside: the point is the Radon point.
	q := [][]float64{{0, 0}, {6, 0}, {0, 6}, {1, 2}}
	if err := r.Point(x, q); err != nil || dist(x, []float64{1, 2}) > 1e-9 {
		t.Errorf("triangle and inner point: %v, %v", x, err)
	}
	// A value repeated f + 1 times is the point.
	rep := [][]float64{{9, 9}, {0, 0}, {1, 0}, {9, 9}, {0, 1}, {9, 9}, {0.5, 0.5}}
	r2 := &TverbergPoint{F: 2}
	if err := r2.Point(x, rep); err != nil || !slices.Equal(x, []float64{9, 9}) {
		t.Errorf("repeated value: %v, %v", x, err)
	}
}

// Refusals, each naming its reason.
func TestTverbergRefuses(t *testing.T) {
	checkRefusals(t, func(f int, x []float64, p [][]float64) error { return (&TverbergPoint{F: f}).Point(x, p) }, []refusal{
		{8, 3, 2, ErrTooFewInputs, []string{"n = 8", "f = 2", "(d+1)f + 1) = 9", "Tverberg"}},
		{6, 1, 2, ErrTooFewInputs, []string{"= 7"}},
		{13, 5, 2, ErrSafeAreaSize, []string{"S(13, 3) > 40000", "N = (d+1)f + 1 = 13"}},
		{5, 9, 0, ErrSafeAreaSize, []string{"d = 9", "not for models"}},
	})
	checkNegativeF(t, &TverbergPoint{F: -1})
}

// Stirling numbers of the second kind against their closed forms.
func TestStirling2(t *testing.T) {
	for _, c := range []struct{ n, k, want int }{
		{7, 3, 301}, {9, 3, 3025}, {10, 4, 34105}, {5, 2, 15}, {4, 4, 1}, {3, 4, 0}, {10, 1, 1},
	} {
		if got := stirling2Capped(c.n, c.k, 1<<40); got != c.want {
			t.Errorf("S(%d, %d) = %d, want %d", c.n, c.k, got, c.want)
		}
		// 2^(n−1) − 1 for two parts.
	}
	if got := stirling2Capped(13, 3, 40000); got != 40001 {
		t.Errorf("capped S(13, 3) = %d", got)
	}
	for n := 2; n < 20; n++ {
		if got := stirling2Capped(n, 2, 1<<40); got != 1<<(n-1)-1 {
			t.Errorf("S(%d, 2) = %d", n, got)
		}
	}
}

// Both rules are functions of the multiset of inputs: bit-identical
// points under a permutation of them (two nodes that received the same
// values agree), and tverberg's f = 0 is an input (the one nearest the
// median).
func TestLowDimRulesPermutation(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 23))
	for _, d := range []int{2, 3} {
		n := 3*d + 1
		pts := gen(n, d, func(int, int) float64 { return rng.NormFloat64() })
		perm := rng.Perm(n)
		q := make([][]float64, n)
		for i, j := range perm {
			q[i] = pts[j]
		}
		for _, r := range []interface {
			Point(dst []float64, pts [][]float64) error
		}{&CenterpointLP{F: 2}, &TverbergPoint{F: 2}} {
			x, y := make([]float64, d), make([]float64, d)
			if err := r.Point(x, pts); err != nil {
				t.Fatal(err)
			}
			if err := r.Point(y, q); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(x, y) {
				t.Errorf("d=%d %T: %v, permuted %v", d, r, x, y)
			}
		}
	}
	pts := [][]float64{{5, 5}, {0, 0}, {1, 1}, {9, 0}}
	x := make([]float64, 2)
	if err := (&TverbergPoint{}).Point(x, pts); err != nil || !slices.ContainsFunc(pts, func(p []float64) bool { return slices.Equal(p, x) }) {
		t.Errorf("f = 0: %v, %v", x, err)
	}
}
