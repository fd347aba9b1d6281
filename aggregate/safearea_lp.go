package aggregate

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// The linear programs of SafeArea, in standard form for gonum's Simplex
// (minimize cᵀz subject to Az = b, z >= 0).
//
// Coordinates are scaled first: each coordinate k centred at the inputs'
// median c_k and divided by their median absolute deviation s_k, or by
// 10⁻⁶ of their largest deviation when that is more (1 when every input
// has the same value there). An affine map of each coordinate maps hulls
// to hulls, and a few far-away inputs (the faulty ones) do not squeeze the
// others into a tiny range of the program's tolerances.
//
// For a set K of subsets S (each n − f inputs w_j, scaled) the master
// program is, with x = p − q (p, q >= 0, so x is free and ‖x‖₁ = Σ p + q
// at a vertex) and per row r a pair of slacks e⁺_r, e⁻_r >= 0:
//
//	Σ_{j∈S} λ_{S,j}                 + e⁺ − e⁻ = 1    (one row per S)
//	Σ_{j∈S} λ_{S,j} w_{j,k} − p_k + q_k + e⁺ − e⁻ = 0 (d rows per S)
//	minimize Σ (e⁺ + e⁻) + ε Σ (p + q)
//
// The slacks make A full row rank whatever the inputs (gonum's Simplex
// needs that; duplicates and collinear inputs make the rows of [1; W_S]
// dependent) and give a feasible first basis (e⁺, the right-hand side
// being >= 0), so no phase I is needed. The slacks' total is 0 exactly
// when x is in every hull of K; the violation accepted or not is the
// residual recomputed from λ (residual). The ε term picks,
// among the points of the area, the one nearest in L1 to the median (x = 0
// scaled); ε is small, and when it makes the program trade violation for
// distance the program is solved again with ε = 0 (a pure feasibility
// program).
//
// Constraint generation: K starts empty and x at the median. Each round
// checks x against the hull of every subset not in K by the same program
// with K = {S} and x fixed (d + 1 rows), adds the d + 1 most violated
// subsets (ties by subset order) to K and solves the master again, until
// no subset is violated by more than SafeAreaTol. The master is small (the
// subsets that bound the point) instead of C(n, f)·(d + 1) rows; every
// subset's hull is checked on the final point.

// safeEps weighs the L1 distance to the median against violation.
const safeEps = 1e-3

// safeScaleFloor bounds the scaled coordinates at 1/safeScaleFloor.
const safeScaleFloor = 1e-6

// simplexTol is the reduced-cost tolerance passed to Simplex.
const simplexTol = 1e-10

// safePoint writes into dst a point of the safe area of pts (in the order
// the programs see them) and returns each input's weight. f is the number
// of inputs each subset leaves out (the rule's f for safe_area, ⌈n/(d+1)⌉
// − 1 for centerpoint_lp); name prefixes the errors.
func safePoint(name string, dst []float64, pts [][]float64, f int) ([]float64, error) {
	n, d := len(pts), len(dst)
	c, s, w := scaleInputs(pts, d)
	subsets := distinctSubsets(pts, f)
	lambda := make([][]float64, len(subsets)) // the final λ of every subset
	inK := make([]bool, len(subsets))
	var K []int
	x := make([]float64, d) // scaled: the median
	type viol struct {
		s int
		v float64
	}
	for round := 0; ; round++ {
		var bad []viol
		for si, S := range subsets {
			if inK[si] {
				continue
			}
			v, l, err := hullViolation(w, S, x)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			lambda[si] = l
			if v > SafeAreaTol {
				bad = append(bad, viol{si, v})
			}
		}
		if len(bad) == 0 {
			break
		}
		if len(K) == len(subsets) {
			return nil, fmt.Errorf("%s: %w: every subset is in the program and some are still violated by %.3g", name, ErrNoSafePoint, bad[0].v)
		}
		slices.SortFunc(bad, func(a, b viol) int {
			if c := cmp.Compare(b.v, a.v); c != 0 {
				return c
			}
			return cmp.Compare(a.s, b.s)
		})
		for _, b := range bad[:min(len(bad), d+1)] {
			inK[b.s] = true
			K = append(K, b.s)
		}
		slices.Sort(K)
		var v float64
		var ls [][]float64
		var err error
		for _, eps := range []float64{safeEps, 0} {
			v, ls, err = master(x, w, subsets, K, eps)
			if err == nil && v <= SafeAreaTol {
				break
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w: the linear program over %d subsets failed (round %d): %w", name, ErrNoSafePoint, len(K), round, err)
		}
		if v > SafeAreaTol {
			return nil, fmt.Errorf("%s: %w: the hulls of %d subsets of n − %d = %d inputs meet only within a violation of %.3g (> %g) in the scaled coordinates", name, ErrNoSafePoint, len(K), f, n-f, v, SafeAreaTol)
		}
		for i, si := range K {
			lambda[si] = ls[i]
		}
	}
	for k := range d {
		dst[k] = c[k] + s[k]*x[k]
		if math.IsInf(dst[k], 0) || math.IsNaN(dst[k]) {
			return nil, fmt.Errorf("%s: %w: coordinate %d of the point is not finite", name, ErrNoSafePoint, k)
		}
	}
	// Weights: the mean over subsets of each subset's convex weights.
	wt := make([]float64, n)
	for si, S := range subsets {
		var sum float64
		for _, v := range lambda[si] {
			sum += max(v, 0)
		}
		if sum == 0 {
			continue
		}
		for t, j := range S {
			wt[j] += max(lambda[si][t], 0) / sum / float64(len(subsets))
		}
	}
	return wt, nil
}

// scaleInputs returns each coordinate's centre c_k (the inputs' median)
// and scale s_k (their median absolute deviation, at least safeScaleFloor
// of their largest deviation, 1 when that is 0), and the inputs scaled,
// (p_k − c_k)/s_k: the coordinates the linear programs see.
func scaleInputs(pts [][]float64, d int) (c, s []float64, w [][]float64) {
	n := len(pts)
	c, s = make([]float64, d), make([]float64, d)
	col := make([]float64, n)
	for k := range d {
		for j, p := range pts {
			col[j] = p[k]
		}
		c[k] = median64(col)
		for j, p := range pts {
			col[j] = math.Abs(p[k] - c[k])
		}
		// At least safeScaleFloor of the largest deviation: inputs that
		// nearly agree (honest nodes close to consensus, a few ulps apart)
		// must not put the far ones 10⁸ scaled units away.
		s[k] = max(median64(col), safeScaleFloor*slices.Max(col))
		if s[k] == 0 || math.IsInf(s[k], 0) {
			s[k] = 1
		}
	}
	w = make([][]float64, n)
	for j, p := range pts {
		w[j] = make([]float64, d)
		for k := range d {
			w[j][k] = (p[k] - c[k]) / s[k]
		}
	}
	return c, s, w
}

// distinctSubsets is keptSubsets(n, f) with equal inputs merged: each
// subset lists only the first of the equal inputs it holds (pts is in
// lexicographic order, so equal inputs are adjacent), and subsets that
// list the same inputs appear once. Neither changes a hull, and both take
// away the degeneracy of repeated columns and rows: inputs of nodes that
// have reached consensus are all equal.
func distinctSubsets(pts [][]float64, f int) [][]int {
	n := len(pts)
	rep := make([]int, n)
	for j := range pts {
		rep[j] = j
		if j > 0 && slices.Equal(pts[j], pts[j-1]) {
			rep[j] = rep[j-1]
		}
	}
	seen := map[string]bool{}
	var out [][]int
	for _, S := range keptSubsets(n, f) {
		var T []int
		for _, j := range S {
			if len(T) == 0 || T[len(T)-1] != rep[j] {
				T = append(T, rep[j])
			}
		}
		key := fmt.Sprint(T)
		if !seen[key] {
			seen[key] = true
			out = append(out, T)
		}
	}
	return out
}

// keptSubsets lists the subsets of n − f of the indices 0..n−1, as sorted
// index lists, in the lexicographic order of the f indices each leaves out.
func keptSubsets(n, f int) [][]int {
	out := [][]int{}
	drop := make([]int, f)
	for i := range drop {
		drop[i] = i
	}
	for {
		S := make([]int, 0, n-f)
		t := 0
		for j := range n {
			if t < f && drop[t] == j {
				t++
				continue
			}
			S = append(S, j)
		}
		out = append(out, S)
		// Next f-combination.
		i := f - 1
		for i >= 0 && drop[i] == n-f+i {
			i--
		}
		if i < 0 {
			return out
		}
		drop[i]++
		for j := i + 1; j < f; j++ {
			drop[j] = drop[j-1] + 1
		}
	}
}

// hullViolation is the least total slack of x in the hull of the scaled
// inputs w[S]: min Σ(e⁺ + e⁻) subject to Σ λ_j = 1 and Σ λ_j w_j = x up
// to the slacks (0 when x is in the hull), and the λ found.
func hullViolation(w [][]float64, S []int, x []float64) (float64, []float64, error) {
	d, m := len(x), len(S)
	for t, j := range S {
		// x is an input of S (the median often is one): no program.
		if slices.Equal(w[j], x) {
			l := make([]float64, m)
			l[t] = 1
			return 0, l, nil
		}
	}
	rows := d + 1
	cols := m + 2*rows
	A := mat.NewDense(rows, cols, nil)
	b := make([]float64, rows)
	cost := make([]float64, cols)
	for t, j := range S {
		A.Set(0, t, 1)
		for k := range d {
			A.Set(k+1, t, w[j][k])
		}
	}
	b[0] = 1
	copy(b[1:], x)
	slackPairs(A, cost, m, rows)
	z, err := simplex(cost, A, b, m)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: checking a subset's hull: %w", ErrNoSafePoint, err)
	}
	l := z[:m]
	return residual(w, S, l, x), l, nil
}

// residual is (|1 − Σ λ_j| + Σ_k |Σ λ_j w_{j,k} − x_k|) / max(1,
// max_{j∈S} ‖w_j‖∞) over j in S, λ clamped at 0: the violation of x in the
// hull of w[S] that λ leaves, relative to the largest magnitude of the
// subset's scaled inputs (the precision a program over them can reach),
// computed from λ alone (not from the program's slacks, which the
// perturbation and the solver's rounding touch).
func residual(w [][]float64, S []int, l, x []float64) float64 {
	mag := 1.0
	for _, j := range S {
		for _, v := range w[j] {
			mag = max(mag, math.Abs(v))
		}
	}
	return absResidual(w, S, l, x) / mag
}

func absResidual(w [][]float64, S []int, l, x []float64) float64 {
	var sum float64
	for _, v := range l {
		sum += max(v, 0)
	}
	r := math.Abs(1 - sum)
	for k := range x {
		acc := -x[k]
		for t, j := range S {
			acc += max(l[t], 0) * w[j][k]
		}
		r += math.Abs(acc)
	}
	return r
}

// master solves the master program over the subsets K, writes the scaled
// point into x and returns the largest residual over K and each subset's
// λ.
func master(x []float64, w [][]float64, subsets [][]int, K []int, eps float64) (float64, [][]float64, error) {
	d := len(x)
	rows := len(K) * (d + 1)
	off := make([]int, len(K)+1) // first λ column of each subset
	for i, si := range K {
		off[i+1] = off[i] + len(subsets[si])
	}
	nl := off[len(K)]
	cols := nl + 2*d + 2*rows
	A := mat.NewDense(rows, cols, nil)
	b := make([]float64, rows)
	cost := make([]float64, cols)
	for i, si := range K {
		r0 := i * (d + 1)
		b[r0] = 1
		for t, j := range subsets[si] {
			c := off[i] + t
			A.Set(r0, c, 1)
			for k := range d {
				A.Set(r0+1+k, c, w[j][k])
			}
		}
		for k := range d {
			A.Set(r0+1+k, nl+k, -1)  // p_k
			A.Set(r0+1+k, nl+d+k, 1) // q_k
		}
	}
	for k := range 2 * d {
		cost[nl+k] = eps
	}
	e := nl + 2*d
	slackPairs(A, cost, e, rows)
	z, err := simplex(cost, A, b, e)
	if err != nil {
		return 0, nil, err
	}
	for k := range d {
		x[k] = z[nl+k] - z[nl+d+k]
	}
	var v float64
	ls := make([][]float64, len(K))
	for i, si := range K {
		ls[i] = z[off[i]:off[i+1]]
		v = max(v, residual(w, subsets[si], ls[i], x))
	}
	return v, ls, nil
}

// median64 is the median of v (the mean of the middle two for even
// length); it reorders v.
func median64(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return v[n/2-1]/2 + v[n/2]/2
}

// slackPairs puts, from column at on, each row r's pair of slacks e⁺_r
// (column at + r, +1) and e⁻_r (column at + rows + r, −1), each of cost 1.
func slackPairs(A *mat.Dense, cost []float64, at, rows int) {
	for r := range rows {
		A.Set(r, at+r, 1)
		A.Set(r, at+rows+r, -1)
		cost[at+r], cost[at+rows+r] = 1, 1
	}
}
