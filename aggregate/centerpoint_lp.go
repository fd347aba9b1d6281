package aggregate

import "fmt"

// CenterpointLP is a centerpoint in any dimension d <= SafeAreaMaxDim
// ("centerpoint_lp" in docs/methods/safe-area.md; the survey, §4.5.1 and
// Table 8, ref. [198]): a point of Tukey depth at least k = ⌈n/(d+1)⌉
// among the n inputs, found by SafeArea's linear programs.
//
// The Tukey depth of p is the least number of inputs in a closed
// halfspace containing p. p has depth >= k exactly when p is in the convex
// hull of every n − k + 1 of the inputs (if p is outside the hull of such
// a subset, a closed halfspace through p misses the whole subset and holds
// at most k − 1 inputs; if a closed halfspace through p holds at most k − 1
// inputs, the other n − k + 1 or more lie in its open complement, and so
// does their hull, which then misses p). So the region of depth >= k is
// the safe area of n inputs with k − 1 left out of each subset, and the
// centerpoint theorem says it is non-empty for k = ⌈n/(d+1)⌉. The point is
// SafeArea's: the point of that region nearest in L1 to the
// coordinate-wise median, checked against every subset's hull to
// SafeAreaTol (a point of depth >= k up to that tolerance).
//
// Validity: at most k − 1 = ⌈n/(d+1)⌉ − 1 faulty inputs leave at least
// n − k + 1 honest ones, whose hull holds the point. With the node's own
// vector among n = |N_i^-| + 1 inputs that is Table 8's condition for
// [198], f <= ⌊|N_i^-|/(d+1)⌋. The rule takes F only to refuse (with
// ErrTooFewInputs) when F > ⌈n/(d+1)⌉ − 1, i.e. n < (d+1)F + 1: the point
// does not depend on F. The region of depth k is inside SafeArea's (depth
// F + 1), so the centerpoint is a safe point for every F it accepts.
//
// Limits: d <= SafeAreaMaxDim and C(n, k − 1) <= SafeAreaMaxSubsets,
// else ErrSafeAreaSize. Weights, ordering and float32 rounding as for
// SafeArea. Use it through a pointer, from one goroutine at a time.
type CenterpointLP struct {
	// F is the number of faulty inputs the caller wants tolerated; the
	// rule refuses inputs too few for it.
	F int

	h hullRule
}

// Name implements Rule.
func (*CenterpointLP) Name() string { return "centerpoint_lp" }

// Aggregate implements Rule.
func (c *CenterpointLP) Aggregate(dst []float32, xs [][]float32) error {
	return c.h.aggregate("centerpoint_lp", c, dst, xs)
}

// Point writes into dst a point of depth >= ⌈n/(d+1)⌉ among pts (float64
// vectors of length len(dst)), as SafeArea.Point does.
func (c *CenterpointLP) Point(dst []float64, pts [][]float64) error {
	return c.h.point("centerpoint_lp", c, dst, pts)
}

// CenterDepth is the depth ⌈n/(d+1)⌉ CenterpointLP promises for n inputs
// of d coordinates.
func CenterDepth(n, d int) int { return (n + d) / (d + 1) }

func (c *CenterpointLP) check(n, d int) error {
	if err := checkLowDim("centerpoint_lp", c.F, d); err != nil {
		return err
	}
	k := CenterDepth(n, d)
	if c.F > k-1 {
		return c.h.s.tooFew("centerpoint_lp", n, c.F, fmt.Sprintf("n >= (d+1)f + 1 = %d for d = %d (a centerpoint has depth ⌈n/(d+1)⌉ = %d and is in the honest hull when f <= %d; the survey, Table 8, ref. [198])", (d+1)*c.F+1, d, k, k-1))
	}
	if s := binomCapped(n, k-1, SafeAreaMaxSubsets); s > SafeAreaMaxSubsets {
		return fmt.Errorf("centerpoint_lp: %w: n = %d with d = %d gives C(n, ⌈n/(d+1)⌉ − 1) = C(%d, %d) > %d subsets of n − %d inputs, above the limit %d (each is a linear program)", ErrSafeAreaSize, n, d, n, k-1, SafeAreaMaxSubsets, k-1, SafeAreaMaxSubsets)
	}
	return nil
}

func (c *CenterpointLP) solve(dst []float64, sorted [][]float64) ([]float64, error) {
	return safePoint("centerpoint_lp", dst, sorted, CenterDepth(len(sorted), len(dst))-1)
}

// Weights implements Selector: the mean over the subsets of n − k + 1
// inputs of the convex weights expressing the point in each one's hull.
func (c *CenterpointLP) Weights() []float64 { return c.h.weights() }

// Dropped implements Dropper.
func (c *CenterpointLP) Dropped() int { return c.h.s.Dropped() }
