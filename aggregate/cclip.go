package aggregate

import (
	"fmt"
	"math"
	"slices"

	"github.com/trellis-fl/trellis/internal/memsize"
	"github.com/trellis-fl/trellis/vec"
)

// CenteredClipping is centered clipping (Karimireddy, He and Jaggi, ICML
// 2021; "centered clipping" in docs/methods/toolbox.md): from a start v_0,
// Iterations times
//
//	v_m = v_{m−1} + (1/n) Σ_i (x_i − v_{m−1})·min(1, τ/||x_i − v_{m−1}||).
//
// As a Centered rule, v_0 is the aggregating node's own vector (the
// decentralized use). As a Rule, v_0 is the coordinate-wise median of the
// inputs, or, with FromPrevious, the rule's previous output when it has one
// of the right length (the original server-side use, where v_0 is the last
// aggregate; the first call still starts from the median).
//
// τ is Tau when positive. Tau = 0 chooses it at every iteration as the
// (F+1)-th largest distance ||x_i − v_{m−1}||, so that at most F inputs are
// clipped (the radius rule of self-centered clipping in the spec; F = 0
// clips nothing and the first iteration gives the mean).
//
// Each iteration is one pass over the inputs (see around); sums over inputs
// run in the order of their distance to v (ties by contents, then index),
// so the output is bit-identical under any permutation of the inputs and
// for every thread count.
//
// Weights. v_M is an affine combination a_0·v_0 + Σ a_i·x_i with a_0 + Σ a_i
// = 1 and every a >= 0 (a_i grows by c_i/n and everything shrinks by 1 −
// Σc_i/n per iteration, c_i = min(1, τ/||x_i − v||)). Weights returns a_i
// per input. Started from the median, a_0 is shared out as the median's
// weights, so they sum to 1; started from the own vector or the previous
// output, a_0 belongs to that vector and the weights sum to 1 − a_0.
//
// A CenteredClipping holds scratch: use it through a pointer, from one
// goroutine at a time.
type CenteredClipping struct {
	// Tau is the clipping radius τ; 0 means adaptive (see above).
	Tau float64
	// Iterations is M; 0 means 3.
	Iterations int
	// F is the number of inputs the adaptive radius may clip.
	F int
	// FromPrevious starts Aggregate from its previous output.
	FromPrevious bool
	// Threads is the number of goroutines the work is split across (0 or 1:
	// the caller's only). The output does not depend on it.
	Threads int

	s     screen
	med   Median
	v0    []float32
	prev  []float32
	r     around
	rk    ranker
	order []int
	dist  []float64
	coef  []float64
	a     []float64 // a_i over the kept inputs
	a0    float64
	medW  []float64 // the median's weights when the start was the median
}

// Name implements Rule and Centered.
func (*CenteredClipping) Name() string { return "centered_clipping" }

// Aggregate implements Rule: v_0 is the median, or the previous output.
func (cc *CenteredClipping) Aggregate(dst []float32, xs [][]float32) error {
	if err := cc.params(); err != nil {
		cc.s.fail()
		return err
	}
	xs, d, err := cc.s.in("centered_clipping", dst, xs, cc.Threads)
	if err != nil {
		return err
	}
	if cc.F >= len(xs) && cc.Tau == 0 {
		cc.s.fail()
		return cc.s.tooFew("centered_clipping", len(xs), cc.F, "n > f for the adaptive radius")
	}
	if cap(cc.v0) < d {
		cc.v0 = make([]float32, d)
	}
	v0 := cc.v0[:d]
	cc.medW = cc.medW[:0]
	if cc.FromPrevious && len(cc.prev) == d {
		copy(v0, cc.prev)
	} else {
		cc.med.Threads = cc.Threads
		cc.med.run(v0, xs)
		cc.medW = cc.med.c.weightsInto(growFloats(cc.medW, len(xs)))
	}
	cc.run(dst, v0, xs)
	if cc.FromPrevious {
		cc.prev = append(cc.prev[:0], dst...)
	}
	cc.s.done()
	return nil
}

// AggregateAround implements Centered: v_0 is own, the node's vector, which
// must be finite and of the inputs' length.
func (cc *CenteredClipping) AggregateAround(dst, own []float32, xs [][]float32) error {
	if err := cc.params(); err != nil {
		cc.s.fail()
		return err
	}
	xs, d, err := cc.s.in("centered_clipping", dst, xs, cc.Threads)
	if err != nil {
		return err
	}
	if err := checkOwn("centered_clipping", own, d); err != nil {
		cc.s.fail()
		return err
	}
	if cc.F >= len(xs) && cc.Tau == 0 {
		cc.s.fail()
		return cc.s.tooFew("centered_clipping", len(xs), cc.F, "n > f for the adaptive radius")
	}
	cc.medW = cc.medW[:0]
	cc.run(dst, own, xs)
	cc.s.done()
	return nil
}

func (cc *CenteredClipping) params() error {
	if !(cc.Tau >= 0) || math.IsInf(cc.Tau, 0) || cc.Iterations < 0 || cc.F < 0 {
		return fmt.Errorf("centered_clipping: tau = %v, iterations = %d, f = %d; need finite tau >= 0 (0: adaptive), iterations >= 0 (0: 3), f >= 0", cc.Tau, cc.Iterations, cc.F)
	}
	return nil
}

// run iterates from v0 over screened inputs.
func (cc *CenteredClipping) run(dst, v0 []float32, xs [][]float32) {
	n := len(xs)
	its := cc.Iterations
	if its == 0 {
		its = 3
	}
	cc.r.start(xs, v0, cc.Threads)
	cc.order, cc.dist, cc.coef = growInts(cc.order, n), growFloats(cc.dist, n), growFloats(cc.coef, n)
	cc.a = growFloats(cc.a, n)
	clear(cc.a)
	cc.a0 = 1
	for m := range its {
		for i := range n {
			cc.dist[i] = math.Sqrt(cc.r.dist2(i))
			cc.order[i] = i
		}
		cc.rk.reset(n)
		cc.rk.sort(cc.order, xs, cc.dist)
		tau := cc.Tau
		if tau == 0 {
			// The (F+1)-th largest distance: rank n − 1 − F ascending.
			tau = cc.dist[cc.order[n-1-cc.F]]
		}
		var csum float64
		for _, i := range cc.order {
			c := 1.0
			if dd := cc.dist[i]; dd > tau {
				c = tau / dd
			}
			cc.coef[i] = c / float64(n)
			csum += cc.coef[i]
		}
		keep := max(0, 1-csum)
		cc.r.step(keep, cc.order, cc.coef, m < its-1, cc.Threads)
		cc.a0 *= keep
		for i := range n {
			cc.a[i] = keep*cc.a[i] + cc.coef[i]
		}
	}
	cc.r.finish(dst)
}

// Weights implements Selector (see the type's doc).
func (cc *CenteredClipping) Weights() []float64 {
	if cc.s.n == 0 {
		return nil
	}
	w := slices.Clone(cc.a)
	for i, m := range cc.medW {
		w[i] += cc.a0 * m
	}
	return cc.s.expand(w)
}

// Dropped implements Dropper.
func (cc *CenteredClipping) Dropped() int { return cc.s.Dropped() }

// checkOwn validates the own vector of a Centered call.
func checkOwn(rule string, own []float32, d int) error {
	if len(own) != d {
		return fmt.Errorf("%s: %w: own vector has length %d, inputs have length %d", rule, ErrLength, len(own), d)
	}
	if ok, at := vec.AllFinite(own); !ok {
		return fmt.Errorf("%s: %w: own vector has %v at coordinate %d", rule, ErrNonFinite, own[at], at)
	}
	return nil
}

// cclipScratch is the start vector, the coordinate-wise median that gives
// it (its scratch and weights), the around's scratch (its float64 point)
// and the clipping's order, distances and coefficients. (With
// FromPrevious, a copy of the previous output too.)
func cclipScratch(n, dim int64) (int64, string) {
	med, _ := columnsScratch(n, dim)
	return memsize.Add(memsize.Floats(dim), med, memsize.Alloc(8*n), aroundScratch(n, dim), 4*memsize.Alloc(8*n)),
		"a start vector, a float64 point"
}
