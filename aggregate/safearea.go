package aggregate

import (
	"errors"
	"fmt"
)

// SafeArea is resilient vector consensus's safe-area rule ("safe_area" in
// docs/methods/safe-area.md): a point in the intersection of the convex
// hulls of every n − F of the n inputs (the survey, §4.2.2 "Safe
// point-based aggregation" and §4.5.1, Table 8, refs. [194], [222]). When
// at most F inputs are faulty, the n − F honest inputs (or a subset of
// them) are one of those subsets, so the point is in the convex hull of
// honest inputs whichever inputs are faulty — which the coordinate-wise
// rules (MSR, trimmed mean) do not ensure for d >= 2 (the survey's
// Example 5).
//
// The area is non-empty when n >= (d+1)F + 1 (Tverberg's theorem); the
// survey's synchronous condition for [194, 222] is n > max{3F, (d+1)F},
// and SafeArea refuses with ErrTooFewInputs when it fails. It also refuses
// (ErrSafeAreaSize) more than SafeAreaMaxSubsets subsets, C(n, F), and d
// above SafeAreaMaxDim: the linear program grows with both, and the rule is
// meant for low-dimensional consensus, not for models.
//
// The point is found by linear programming (gonum's Simplex) with
// constraint generation (safearea_lp.go): the point nearest, in the L1
// norm, to the coordinate-wise median among the points of the safe area.
// Every returned point is checked against every subset's hull by its own
// linear program, so an answer is in each hull up to the stated tolerance
// (SafeAreaTol) or the rule returns an error. The inputs are put in
// lexicographic order first, so the point is a function of the multiset of
// inputs: bit-identical under any permutation of them, and identical at
// two nodes that received the same values.
//
// Point works in float64; Aggregate rounds the point to float32, which
// moves it by up to 2^-24 of each coordinate's magnitude (off a safe area
// that is a segment or a single point).
//
// Weights: the mean, over the subsets (equal inputs merged, the first of
// them in lexicographic order taking their weight), of the convex weights
// λ_S that express the point in each subset's hull.
//
// A SafeArea holds scratch: use it through a pointer, from one goroutine at
// a time. Its calls allocate (the linear programs).
type SafeArea struct {
	// F is the number of faulty inputs tolerated.
	F int

	h hullRule
}

// Limits of SafeArea.
const (
	// SafeAreaMaxSubsets bounds C(n, F), the number of (n − F)-subsets
	// whose hulls are intersected: each is a linear program checked every
	// round of constraint generation.
	SafeAreaMaxSubsets = 2000
	// SafeAreaMaxDim bounds d: each subset in the working set adds d + 1
	// equality rows to a dense linear program, and more subsets bound the
	// point. Measured (docs/methods/safe-area.md): up to 0.2 s at d = 8,
	// 1.4 s at d = 10, 5 s at d = 14.
	SafeAreaMaxDim = 8
	// SafeAreaTol is the largest violation accepted for every subset S:
	// the L1 norm of the residual of Σ_j λ_j = 1 and Σ_j λ_j v_j = x (λ >=
	// 0, j in S) in the scaled coordinates of the linear programs (each
	// coordinate centred at the inputs' median and divided by their
	// median absolute deviation, or by 10⁻⁶ of their largest deviation
	// when that is more), divided by max(1, the largest scaled magnitude
	// of S's inputs). For the honest subset that is the honest inputs'
	// own extent from the median: x is within about 10⁻⁹ of it of their
	// hull.
	SafeAreaTol = 1e-9
)

// ErrSafeAreaSize is wrapped by SafeArea when the problem is beyond its
// limits (SafeAreaMaxSubsets, SafeAreaMaxDim).
var ErrSafeAreaSize = errors.New("safe area problem too large")

// ErrNoSafePoint is wrapped by SafeArea when the linear programs found no
// point within SafeAreaTol of every subset's hull (numerical failure; the
// area is non-empty whenever the condition holds).
var ErrNoSafePoint = errors.New("no safe point found")

// Name implements Rule.
func (*SafeArea) Name() string { return "safe_area" }

// Aggregate implements Rule.
func (a *SafeArea) Aggregate(dst []float32, xs [][]float32) error {
	return a.h.aggregate("safe_area", a, dst, xs)
}

// Point writes into dst a point of the safe area of pts (float64 vectors of
// one length d = len(dst), in sender-id order), or returns an error saying
// why it cannot. Non-finite inputs are an error (ErrNonFinite) here: Point
// is the float64 entry for consensus on small vectors, where a dropped
// input would change n.
func (a *SafeArea) Point(dst []float64, pts [][]float64) error {
	return a.h.point("safe_area", a, dst, pts)
}

// check refuses n, d and F outside the rule's condition and limits.
func (a *SafeArea) check(n, d int) error {
	f := a.F
	switch {
	case f < 0:
		return fmt.Errorf("safe_area: f = %d, allowed range [0, ∞)", f)
	case d > SafeAreaMaxDim:
		return fmt.Errorf("safe_area: %w: inputs have d = %d coordinates, the safe area is computed for d <= %d (a linear program with d + 1 rows per subset: a rule for low-dimensional vector consensus, not for models)", ErrSafeAreaSize, d, SafeAreaMaxDim)
	case f >= n || n < 3*f+1 || n < (d+1)*f+1:
		return a.h.s.tooFew("safe_area", n, f, fmt.Sprintf("n >= max(3f + 1, (d+1)f + 1) = %d for d = %d (the survey, Table 8, refs. [194, 222]: the safe area can be empty below (d+1)f + 1)", max(3*f+1, (d+1)*f+1), d))
	}
	if c := binomCapped(n, f, SafeAreaMaxSubsets); c > SafeAreaMaxSubsets {
		return fmt.Errorf("safe_area: %w: n = %d with f = %d gives C(n, f) > %d subsets of n − f inputs, above the limit %d (each is a linear program)", ErrSafeAreaSize, n, f, SafeAreaMaxSubsets, SafeAreaMaxSubsets)
	}
	return nil
}

// solve is the linear programs of safearea_lp.go on the inputs in
// lexicographic order (hullRule.sorted puts them so).
func (a *SafeArea) solve(dst []float64, sorted [][]float64) ([]float64, error) {
	return safePoint("safe_area", dst, sorted, a.F)
}

// Weights implements Selector (see the type's doc).
func (a *SafeArea) Weights() []float64 { return a.h.weights() }

// Dropped implements Dropper.
func (a *SafeArea) Dropped() int { return a.h.s.Dropped() }

// binomCapped is C(n, k), or a value above limit once it exceeds limit.
func binomCapped(n, k, limit int) int {
	k = min(k, n-k)
	c := 1
	for i := range k {
		c = c * (n - i) / (i + 1) // exact: c·(n−i) is C(n, i+1)·(i+1)
		if c > limit {
			return limit + 1
		}
	}
	return c
}

func growBools(b []bool, n int) []bool {
	if cap(b) < n {
		return make([]bool, n)
	}
	return b[:n]
}
