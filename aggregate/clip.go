package aggregate

import (
	"fmt"
	"math"
	"slices"

	"github.com/trellis-fl/trellis/internal/memsize"
	"github.com/trellis-fl/trellis/vec"
)

// Clip is static clipping ("clipping (c)" in docs/methods/toolbox.md): every
// input of norm above C is scaled to norm C; the others pass unchanged.
// Credit leaves weights with the input they belong to (a clipped input
// still counts as that input).
type Clip struct {
	// C is the largest norm let through (> 0).
	C float64
	// Threads is the number of goroutines the inputs are split across.
	Threads int

	cl clipper
}

// Name implements Pre.
func (*Clip) Name() string { return "clip" }

// Apply implements Pre.
func (c *Clip) Apply(xs [][]float32) ([][]float32, error) {
	c.cl.n = 0
	if !(c.C > 0) || math.IsInf(c.C, 0) {
		return nil, fmt.Errorf("clip: c = %v, allowed range (0, ∞)", c.C)
	}
	if _, err := sameLength("clip", xs); err != nil {
		return nil, err
	}
	c.cl.norms(xs, c.Threads)
	return c.cl.clip(xs, c.C, c.Threads), nil
}

// Credit implements Pre.
func (c *Clip) Credit(w []float64) []float64 { return c.cl.credit(w) }

// AdaptiveClip is Adaptive Robust Clipping, ARC (Allouah et al., "Adaptive
// Gradient Clipping for Robust Federated Learning", ICLR 2025, Algorithm
// 2, as ByzFL's ARC computes it): with k = ⌊2·(F/n)·(n − F)⌋, the k inputs
// of largest norm are clipped to the (k+1)-th largest norm, that is the
// radius is the (n − k)-th smallest norm (fewer are clipped when norms
// tie). k is not F: it grows with the fraction F/n and is at most n/2 —
// F = 1 of 10 clips 1, F = 2 of 10 clips 3, F = 4 of 20 clips 6. It needs
// n > F. Credit is as for Clip.
type AdaptiveClip struct {
	// F is the number of faulty inputs to tolerate.
	F int
	// Threads is the number of goroutines the inputs are split across.
	Threads int

	cl     clipper
	sorted []float64
	tau    float64
}

// Name implements Pre.
func (*AdaptiveClip) Name() string { return "arc" }

// Apply implements Pre.
func (a *AdaptiveClip) Apply(xs [][]float32) ([][]float32, error) {
	a.cl.n = 0
	if a.F < 0 {
		return nil, fmt.Errorf("arc: f = %d, allowed range [0, ∞)", a.F)
	}
	if _, err := sameLength("arc", xs); err != nil {
		return nil, err
	}
	n := len(xs)
	if n <= a.F {
		return nil, fmt.Errorf("arc: %w: n = %d inputs with f = %d, need n > f", ErrTooFewInputs, n, a.F)
	}
	a.cl.norms(xs, a.Threads)
	a.sorted = append(a.sorted[:0], a.cl.norm...)
	slices.Sort(a.sorted)
	a.tau = a.sorted[n-arcClipped(n, a.F)-1]
	return a.cl.clip(xs, a.tau, a.Threads), nil
}

// arcClipped is ARC's number of clipped inputs, ⌊2·(f/n)·(n − f)⌋, in
// exact integer arithmetic (0 <= f < n).
func arcClipped(n, f int) int { return 2 * f * (n - f) / n }

// Radius reports the clipping radius of the last Apply.
func (a *AdaptiveClip) Radius() float64 { return a.tau }

// Credit implements Pre.
func (a *AdaptiveClip) Credit(w []float64) []float64 { return a.cl.credit(w) }

// clipper is the shared part of the clipping pre-aggregators.
type clipper struct {
	norm []float64
	buf  []float32
	out  [][]float32
	n    int

	// The current pass, while it runs.
	xs  [][]float32
	tau float64
	sc  bool // scaling pass (else norms)
}

func (c *clipper) norms(xs [][]float32, threads int) {
	c.norm = growFloats(c.norm, len(xs))
	c.xs, c.sc = xs, false
	parallel(workers(threads), len(xs), c)
	c.xs = nil
}

// clip returns the inputs with those of norm above tau scaled to norm tau,
// the scaling factor tau/norm applied in float64.
func (c *clipper) clip(xs [][]float32, tau float64, threads int) [][]float32 {
	n, d := len(xs), len(xs[0])
	clipped := 0
	for _, v := range c.norm {
		if v > tau {
			clipped++
		}
	}
	if cap(c.buf) < clipped*d {
		c.buf = make([]float32, clipped*d)
	}
	c.out = c.out[:0]
	k := 0
	for i, x := range xs {
		if c.norm[i] > tau {
			c.out = append(c.out, c.buf[k*d:(k+1)*d:(k+1)*d])
			k++
		} else {
			c.out = append(c.out, x)
		}
	}
	c.xs, c.tau, c.sc = xs, tau, true
	parallel(workers(threads), n, c)
	c.xs = nil
	c.n = n
	return c.out
}

// do implements task: input i's norm, or its scaling.
func (c *clipper) do(_, i int) {
	if !c.sc {
		c.norm[i] = vec.Norm(c.xs[i])
		return
	}
	if c.norm[i] <= c.tau {
		return
	}
	s := c.tau / c.norm[i]
	dst := c.out[i]
	for j, v := range c.xs[i] {
		dst[j] = float32(float64(v) * s)
	}
}

func (c *clipper) credit(w []float64) []float64 {
	if c.n == 0 || len(w) != c.n {
		return nil
	}
	return slices.Clone(w)
}

// clipScratch is up to n clipped copies (clip, arc).
func clipScratch(n, dim int64) (int64, string) {
	return memsize.Alloc(memsize.Mul(4, n, dim)), fmt.Sprintf("up to %d clipped copies", n)
}
