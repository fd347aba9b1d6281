package aggregate

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// gonum's Simplex as SafeArea's programs call it: perturbed right-hand
// sides and a budget of pivots.

// perturb returns b with a distinct δ_r in [δ/2, δ) added to each b_r.
// The programs are highly degenerate (x starts at the median, often an
// input; subsets share inputs), and gonum's Simplex, which mixes Dantzig's
// and Bland's rules, can cycle on them forever; the perturbation breaks
// the ties. Its effect on a subset's residual is at most (d + 1)δ, and
// every acceptance is decided on the residual recomputed from λ
// (residual), so a perturbation can cost a round, never a wrong answer.
// attempt varies the phase of the sequence.
func perturb(b []float64, delta float64, attempt int) []float64 {
	out := make([]float64, len(b))
	for r := range b {
		// The fractional parts of k·φ are spread over [0, 1).
		_, frac := math.Modf(float64(r+1+attempt*len(b)) * 0.6180339887498949)
		out[r] = b[r] + delta*(0.5+frac/2)
	}
	return out
}

// safePerturbs are the perturbations simplex tries, in order.
var safePerturbs = []float64{1e-11, 3e-11, 1e-10}

// errBudget is the panic of a budgetMatrix whose budget ran out.
var errBudget = errors.New("iteration budget exhausted")

// budgetMatrix is A for gonum's Simplex, counting the entries read: every
// pivot reads a column of A, so a budget of reads bounds the pivots, and
// a cycling Simplex (which has no iteration limit) panics with errBudget
// instead of running forever.
type budgetMatrix struct {
	a    *mat.Dense
	left int
}

func (m *budgetMatrix) Dims() (int, int) { return m.a.Dims() }
func (m *budgetMatrix) T() mat.Matrix    { return mat.Transpose{Matrix: m} }
func (m *budgetMatrix) At(i, j int) float64 {
	if m.left--; m.left < 0 {
		panic(errBudget)
	}
	return m.a.At(i, j)
}

// simplex solves min cᵀz, Az = b, z >= 0 with gonum's Simplex, from the
// basis of the slack columns starting at e (e⁺_r at e + r, e⁻_r at e +
// rows + r, whichever is >= 0 for the perturbed b_r), trying each of
// safePerturbs until one returns within its budget of pivots; a panic of
// gonum's (a singular basis it did not foresee) is an error too.
func simplex(c []float64, A *mat.Dense, b []float64, e int) ([]float64, error) {
	rows, cols := A.Dims()
	var errs []error
	for attempt, delta := range safePerturbs {
		pb := perturb(b, delta, attempt)
		basis := make([]int, rows)
		for r, v := range pb {
			basis[r] = e + r
			if v < 0 {
				basis[r] = e + rows + r
			}
		}
		// Reads: the input checks and first extraction (a few passes over
		// A), then a column per pivot and, on Bland's steps, a basis.
		bm := &budgetMatrix{a: A, left: 4*rows*cols + 10*(rows+cols)*rows}
		z, err := func() (z []float64, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("lp.Simplex panicked: %v", r)
				}
			}()
			_, z, err = lp.Simplex(c, bm, pb, simplexTol, basis)
			return z, err
		}()
		if err == nil {
			return z, nil
		}
		errs = append(errs, fmt.Errorf("perturbation %g: %w", delta, err))
	}
	return nil, errors.Join(errs...)
}
