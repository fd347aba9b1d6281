package aggregate

import (
	"fmt"
	"github.com/trellis-fl/trellis/internal/memsize"
	"math"
)

// GeometricMedian approximates argmin_z Σ ||z − x_i|| by smoothed Weiszfeld
// iterations ("geometric median" in docs/methods/toolbox.md): start at the
// coordinate-wise median, β_i = max(||x_i − z||, ν), z ← Σ(x_i/β_i) /
// Σ(1/β_i), until ||z_new − z|| <= Tol·||z|| or Iterations updates. It
// needs no f: fewer than half of the inputs cannot carry it away (its
// breakdown point is 1/2).
//
// Each update is one pass over the inputs (see around: distances come from
// the inner products of the previous pass, in float64, measured from the
// starting median). The weighted sum runs over the inputs in the order of
// their distance to z (ties by contents, then index), so the output is
// bit-identical under any permutation of the inputs and for every thread
// count. Weights gives the normalized Weiszfeld weights (1/β_i)/Σ(1/β_j) of
// the last update.
//
// A GeometricMedian holds scratch: use it through a pointer, from one
// goroutine at a time.
type GeometricMedian struct {
	// Iterations bounds the updates; 0 means 100.
	Iterations int
	// Nu is the smoothing ν; 0 means 1e-6.
	Nu float64
	// Tol is the relative change that stops the iterations; 0 means 1e-6.
	Tol float64
	// Threads is the number of goroutines the work is split across (0 or 1:
	// the caller's only). The output does not depend on it.
	Threads int

	s     screen
	med   Median
	z0    []float32
	r     around
	rk    ranker
	order []int
	beta  []float64
	coef  []float64
	w     []float64 // coef of the last update, over the kept inputs
	iters int
}

// Name implements Rule.
func (*GeometricMedian) Name() string { return "geometric_median" }

// Aggregate implements Rule.
func (gm *GeometricMedian) Aggregate(dst []float32, xs [][]float32) error {
	its, nu, tol := gm.Iterations, gm.Nu, gm.Tol
	if its == 0 {
		its = 100
	}
	if nu == 0 {
		nu = 1e-6
	}
	if tol == 0 {
		tol = 1e-6
	}
	if its < 0 || !(nu > 0) || math.IsInf(nu, 0) || !(tol > 0) || math.IsInf(tol, 0) {
		gm.s.fail()
		return fmt.Errorf("geometric_median: iterations = %d, nu = %v, tol = %v; need iterations >= 0 and finite nu, tol > 0 (0 means the default)", gm.Iterations, gm.Nu, gm.Tol)
	}
	xs, d, err := gm.s.in("geometric_median", dst, xs, gm.Threads)
	if err != nil {
		return err
	}
	n := len(xs)
	if cap(gm.z0) < d {
		gm.z0 = make([]float32, d)
	}
	z0 := gm.z0[:d]
	gm.med.Threads = gm.Threads
	gm.med.run(z0, xs)
	gm.r.start(xs, z0, gm.Threads)
	gm.order, gm.beta, gm.coef = growInts(gm.order, n), growFloats(gm.beta, n), growFloats(gm.coef, n)
	norm := math.Sqrt(gm.r.zz) // ||z||, of the current point
	gm.iters = 0
	for gm.iters < its {
		for i := range n {
			gm.beta[i] = max(math.Sqrt(gm.r.dist2(i)), nu)
			gm.order[i] = i
		}
		gm.rk.reset(n)
		gm.rk.sort(gm.order, xs, gm.beta)
		var total float64
		for _, i := range gm.order {
			total += 1 / gm.beta[i]
		}
		for _, i := range gm.order {
			gm.coef[i] = 1 / gm.beta[i] / total
		}
		gm.r.step(0, gm.order, gm.coef, true, gm.Threads)
		gm.iters++
		change := math.Sqrt(gm.r.du)
		if change <= tol*norm {
			break
		}
		norm = math.Sqrt(gm.r.zz)
	}
	gm.r.finish(dst)
	gm.w = append(gm.w[:0], gm.coef...)
	if gm.iters == 0 {
		// No update: the output is the median, weighted as the median.
		gm.w = append(gm.w[:0], gm.med.c.weights()...)
	}
	gm.s.done()
	return nil
}

// Iters reports the updates the last call made.
func (gm *GeometricMedian) Iters() int { return gm.iters }

// Weights implements Selector.
func (gm *GeometricMedian) Weights() []float64 {
	if gm.s.n == 0 {
		return nil
	}
	return gm.s.expand(append([]float64(nil), gm.w...))
}

// Dropped implements Dropper.
func (gm *GeometricMedian) Dropped() int { return gm.s.Dropped() }

// geomedScratch is the start vector, the coordinate-wise median that
// gives it (its scratch and weights), the around's scratch (its float64
// point) and the update's order, weights and coefficients.
func geomedScratch(n, dim int64) (int64, string) {
	med, _ := columnsScratch(n, dim)
	return memsize.Add(memsize.Floats(dim), med, memsize.Alloc(8*n), aroundScratch(n, dim), 3*memsize.Alloc(8*n)),
		"a start vector and a float64 point"
}
