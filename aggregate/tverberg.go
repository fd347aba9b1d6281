package aggregate

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// TverbergPoint is the Tverberg-partition point of resilient vector
// consensus ("tverberg" in docs/methods/safe-area.md; the survey, §4.5.1,
// Figure 6 and Table 8, refs. [194], [197]): the inputs are split into
// F + 1 parts whose convex hulls share a point, and that point is the
// output. At most F inputs are faulty, so one of the F + 1 parts is all
// honest, and the point is in the hull of honest inputs.
//
// Tverberg's theorem says N = (d+1)F + 1 points in R^d always have such a
// partition, but finding one is NP-hard in general (the survey, ref.
// [195]). This is an exact search for small N: it takes the N inputs
// nearest to the coordinate-wise median (L∞, in the scaled coordinates of
// SafeArea's programs; ties by lexicographic order, so a function of the
// multiset of inputs), and goes through every partition of them into
// F + 1 non-empty parts — those whose parts have at most d + 1 inputs
// first (in general position no other partition of exactly N points can
// be a Tverberg partition), then the rest — until one passes: the parts'
// projections overlap on each axis and on the direction of every two of
// the N inputs (necessary, and cheap: it turns most partitions away
// before a linear program), and the linear program of SafeArea over the
// parts' hulls finds a point within SafeAreaTol of each; the point is
// then the one of that intersection nearest in L1 to the median. Any N of the inputs will do for validity (at most F of them
// are faulty); the rest of the inputs are not used. When a value repeats
// F + 1 times among the N, that value is the point (one copy per part).
//
// The condition is SafeArea's: n >= max(3F + 1, (d+1)F + 1) (the survey,
// Table 8, refs. [194, 222]), else ErrTooFewInputs. Limits: d <=
// SafeAreaMaxDim, and the number of partitions, the Stirling number
// S(N, F + 1), at most TverbergMaxPartitions (N = 9 inputs into 3 parts,
// d = 3 and F = 2, is 3,025; d = 5 and F = 2 is 261,625 and is refused),
// else ErrSafeAreaSize. No partition passing is ErrNoSafePoint (numerical
// failure: one exists). Approximate Tverberg partitions by iterated Radon
// points, which need more inputs but no search, are RadonPoint.
//
// Weights: the mean over the parts of the convex weights expressing the
// point in each part's hull (0 for inputs outside the N). float32
// rounding as for SafeArea. Use it through a pointer, from one goroutine
// at a time.
type TverbergPoint struct {
	// F is the number of faulty inputs tolerated: F + 1 parts.
	F int

	h hullRule
	// parts of the last point, as indices into the sorted inputs (for
	// tests: each part's hull holds the point).
	parts [][]int
}

// TverbergMaxPartitions bounds S((d+1)F + 1, F + 1), the partitions
// searched.
const TverbergMaxPartitions = 40000

// Name implements Rule.
func (*TverbergPoint) Name() string { return "tverberg" }

// Aggregate implements Rule.
func (t *TverbergPoint) Aggregate(dst []float32, xs [][]float32) error {
	return t.h.aggregate("tverberg", t, dst, xs)
}

// Point writes into dst a Tverberg point of pts (float64 vectors of length
// len(dst)), as SafeArea.Point does.
func (t *TverbergPoint) Point(dst []float64, pts [][]float64) error {
	return t.h.point("tverberg", t, dst, pts)
}

// Partition returns the parts of the last point's partition, as indices
// into the inputs of the last call (in the caller's order, non-finite
// inputs dropped by Aggregate not counted); nil after a failure.
func (t *TverbergPoint) Partition() [][]int {
	return t.h.partition(t.parts)
}

func (t *TverbergPoint) check(n, d int) error {
	if err := checkLowDim("tverberg", t.F, d); err != nil {
		return err
	}
	f := t.F
	if f >= n || n < 3*f+1 || n < (d+1)*f+1 {
		return t.h.s.tooFew("tverberg", n, f, fmt.Sprintf("n >= max(3f + 1, (d+1)f + 1) = %d for d = %d (the survey, Table 8, refs. [194, 222]: (d+1)f + 1 points are what Tverberg's theorem needs for f + 1 parts)", max(3*f+1, (d+1)*f+1), d))
	}
	N := (d+1)*f + 1
	if s := stirling2Capped(N, f+1, TverbergMaxPartitions); s > TverbergMaxPartitions {
		return fmt.Errorf("tverberg: %w: N = (d+1)f + 1 = %d inputs have S(%d, %d) > %d partitions into f + 1 = %d parts, above the limit %d (the exact search tries each)", ErrSafeAreaSize, N, N, f+1, TverbergMaxPartitions, f+1, TverbergMaxPartitions)
	}
	return nil
}

func (t *TverbergPoint) solve(dst []float64, sorted [][]float64) ([]float64, error) {
	n, d, f := len(sorted), len(dst), t.F
	N := (d+1)*f + 1
	c, s, w := scaleInputs(sorted, d)
	chosen := nearestMedian(w, N)
	wt := make([]float64, n)
	x := make([]float64, d)
	parts, err := t.search(x, w, chosen, f)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		l := p.lambda
		var sum float64
		for _, v := range l {
			sum += max(v, 0)
		}
		for i, j := range p.idx {
			if sum > 0 {
				wt[j] += max(l[i], 0) / sum / float64(len(parts))
			}
		}
	}
	t.parts = t.parts[:0]
	for _, p := range parts {
		t.parts = append(t.parts, p.idx)
	}
	for k := range d {
		dst[k] = c[k] + s[k]*x[k]
		if math.IsInf(dst[k], 0) || math.IsNaN(dst[k]) {
			return nil, fmt.Errorf("tverberg: %w: coordinate %d of the point is not finite", ErrNoSafePoint, k)
		}
	}
	return wt, nil
}

// nearestMedian is the indices of the N scaled inputs w nearest the
// median (the origin of the scaled coordinates, in L∞; ties by order), in
// increasing order: a function of the multiset of inputs when w is in
// lexicographic order.
func nearestMedian(w [][]float64, N int) []int {
	near := make([]int, len(w))
	norm := make([]float64, len(w))
	for j := range near {
		near[j] = j
		for _, v := range w[j] {
			norm[j] = max(norm[j], math.Abs(v))
		}
	}
	slices.SortStableFunc(near, func(a, b int) int { return cmp.Compare(norm[a], norm[b]) })
	chosen := slices.Clone(near[:N])
	slices.Sort(chosen)
	return chosen
}

type tverbergPart struct {
	idx    []int // into the sorted inputs
	lambda []float64
}

// search finds a Tverberg partition of the inputs chosen (indices into w,
// the scaled inputs) into f + 1 parts and writes the scaled point into x.
func (t *TverbergPoint) search(x []float64, w [][]float64, chosen []int, f int) ([]tverbergPart, error) {
	N, d := len(chosen), len(x)
	// A value repeated f + 1 times: one copy per part, the rest in the
	// first part.
	for a := 0; a < N; a++ {
		same := []int{chosen[a]}
		for b := a + 1; b < N && len(same) < f+1; b++ {
			if slices.Equal(w[chosen[a]], w[chosen[b]]) {
				same = append(same, chosen[b])
			}
		}
		if len(same) == f+1 {
			copy(x, w[chosen[a]])
			parts := make([]tverbergPart, f+1)
			for i, j := range same {
				parts[i] = tverbergPart{idx: []int{j}, lambda: []float64{1}}
			}
			for _, j := range chosen {
				if !slices.Contains(same, j) {
					parts[0].idx = append(parts[0].idx, j)
					parts[0].lambda = append(parts[0].lambda, 0)
				}
			}
			return parts, nil
		}
	}
	// Every partition as a restricted growth string: a[0] = 0, a[i] <= 1 +
	// max(a[:i]), exactly f + 1 values.
	var all [][]int8
	a := make([]int8, N)
	var rec func(i int, top int8)
	rec = func(i int, top int8) {
		if int(top)+1+(N-i) < f+1 { // too few inputs left to open every part
			return
		}
		if i == N {
			if int(top) == f {
				all = append(all, slices.Clone(a))
			}
			return
		}
		for v := int8(0); v <= top+1 && int(v) <= f; v++ {
			a[i] = v
			rec(i+1, max(top, v))
		}
	}
	if N > 0 {
		a[0] = 0
		rec(1, 0)
	}
	largest := func(a []int8) int {
		cnt := make([]int, f+1)
		for _, v := range a {
			cnt[v]++
		}
		return slices.Max(cnt)
	}
	// Parts of at most d + 1 inputs first (stable: enumeration order).
	slices.SortStableFunc(all, func(p, q []int8) int {
		return cmp.Compare(min(largest(p), d+2), min(largest(q), d+2))
	})
	// Projections of the inputs on the axes and on the difference of
	// every two chosen inputs: the parts' hulls meet only if on each of
	// these lines their intervals do (a cheap filter before each linear
	// program).
	var proj [][]float64
	for k := range d {
		p := make([]float64, len(w))
		for _, j := range chosen {
			p[j] = w[j][k]
		}
		proj = append(proj, p)
	}
	for a, i := range chosen {
		for _, j := range chosen[a+1:] {
			p := make([]float64, len(w))
			for _, l := range chosen {
				for k := range d {
					p[l] += (w[i][k] - w[j][k]) * w[l][k]
				}
			}
			proj = append(proj, p)
		}
	}
	subsets := make([][]int, f+1)
	K := make([]int, f+1)
	for i := range K {
		K[i] = i
	}
	var lastErr error
	for _, a := range all {
		for i := range subsets {
			subsets[i] = subsets[i][:0]
		}
		for i, v := range a {
			subsets[v] = append(subsets[v], chosen[i])
		}
		if !rangesMeet(proj, subsets) {
			continue
		}
		// Feasibility first (most partitions fail it), then the point
		// nearest the median, kept when it is as good.
		v, ls, err := master(x, w, subsets, K, 0)
		if err != nil {
			lastErr = err
			continue
		}
		if v > SafeAreaTol {
			continue
		}
		y := make([]float64, d)
		if v2, ls2, err := master(y, w, subsets, K, safeEps); err == nil && v2 <= SafeAreaTol {
			copy(x, y)
			ls = ls2
		}
		parts := make([]tverbergPart, f+1)
		for i := range parts {
			parts[i] = tverbergPart{idx: slices.Clone(subsets[i]), lambda: slices.Clone(ls[i])}
		}
		return parts, nil
	}
	err := fmt.Errorf("tverberg: %w: none of the %d partitions of N = %d inputs into %d parts has hulls meeting within %g", ErrNoSafePoint, len(all), N, f+1, SafeAreaTol)
	if lastErr != nil {
		err = errors.Join(err, lastErr)
	}
	return nil, err
}

// rangesMeet reports whether, on every line of proj (each the inputs'
// projections on one direction), the parts' intervals have a common
// point: necessary for their hulls to meet. Projections are rounded, so
// an interval is widened by 10⁻⁹ of the line's largest magnitude: the
// filter may let a partition through, never turn a meeting one away.
func rangesMeet(proj [][]float64, parts [][]int) bool {
	for _, p := range proj {
		lo, hi := math.Inf(-1), math.Inf(1)
		var mag float64
		for _, part := range parts {
			plo, phi := math.Inf(1), math.Inf(-1)
			for _, j := range part {
				plo, phi = min(plo, p[j]), max(phi, p[j])
				mag = max(mag, math.Abs(p[j]))
			}
			lo, hi = max(lo, plo), min(hi, phi)
		}
		if lo > hi+1e-9*mag {
			return false
		}
	}
	return true
}

// Weights implements Selector (see the type's doc).
func (t *TverbergPoint) Weights() []float64 { return t.h.weights() }

// Dropped implements Dropper.
func (t *TverbergPoint) Dropped() int { return t.h.s.Dropped() }

// stirling2Capped is S(n, k), the partitions of n things into k non-empty
// parts, or a value above limit once it exceeds limit.
func stirling2Capped(n, k, limit int) int {
	if k > n {
		return 0
	}
	// S(i, j) = j·S(i−1, j) + S(i−1, j−1), row by row, capped.
	row := make([]int, k+1)
	row[0] = 1
	for i := 1; i <= n; i++ {
		for j := min(i, k); j >= 1; j-- {
			row[j] = min(j*row[j]+row[j-1], limit+1)
		}
		row[0] = 0
	}
	return row[k]
}
