package aggregate

import (
	"fmt"
	"math"
	"slices"

	"github.com/trellis-fl/trellis/internal/memsize"
	"github.com/trellis-fl/trellis/vec"
)

// RTC is remove-then-clip (Yang and Ghaderi, AAAI 2024; survey Table 8,
// the LIGHTYEAR paper's SCClip reference): around a reference x_0, remove
// the F inputs farthest from it, then step from x_0 by the clipped
// differences of the rest. The step follows the paper's Eq. 9,
//
//	RTC_i = Σ_{j ∈ S_i} w_ij (x_i + CLIP(x_j − x_i, τ)) + Σ_{j ∈ R_i} w_ij x_i + w_ii x_i,
//
// with the uniform weights w_ij = 1/(n+1) over the node and its n
// neighbours: a removed neighbour (R_i) keeps its weight and puts it on the
// node's own vector, so only the kept ones (S_i, m = n − F of them) move
// it:
//
//	x_0 + (1/(n+1)) Σ_{j kept} (x_j − x_0)·min(1, τ/||x_j − x_0||).
//
// (Dividing by m + 1 instead, as if the removed neighbours had never been
// there, would give every kept neighbour, a Byzantine one that survived
// removal included, the weight 1/(m+1) > w_ij and make the step
// (n+1)/(m+1) times larger.) τ is Tau when positive; Tau = 0 takes the median
// of the kept inputs' distances to x_0 (the upper one of the middle two for
// even m), so the farther half of what survived removal is clipped — the
// project's choice: the paper's Eq. 10 sets τ from the Byzantine weight
// δ_max, which the deployment does not know. As a Centered rule x_0 is the
// node's own vector (the paper's decentralized use); as a Rule it is the
// coordinate-wise median of the inputs, which then stands for the own
// vector, and whose weights carry the reference's share.
//
// Distances are computed directly in float64, and the kept inputs are
// ranked by distance (ties by contents, then index: the later goes) and
// summed in float64 in that order, so the output is bit-identical under
// any permutation of the inputs. Weights gives kept input j
// min(1, τ/||x_j − x_0||)/(n + 1) and the reference the rest. It needs
// n > F as a Rule and n >= F around an own vector.
//
// An RTC holds scratch: use it through a pointer, from one goroutine at a
// time.
type RTC struct {
	// F is the number of inputs removed.
	F int
	// Tau is the clipping radius τ; 0 means the median kept distance.
	Tau float64

	s     screen
	med   Median
	ref   []float32
	rk    ranker
	order []int
	dist  []float64
	acc   []float64
	w     []float64
	medW  []float64
}

// Name implements Rule and Centered.
func (*RTC) Name() string { return "rtc" }

// Aggregate implements Rule: the reference is the coordinate-wise median.
func (c *RTC) Aggregate(dst []float32, xs [][]float32) error {
	if err := c.params(); err != nil {
		return err
	}
	xs, d, err := c.s.in("rtc", dst, xs, 1)
	if err != nil {
		return err
	}
	if c.F >= len(xs) {
		c.s.fail()
		return c.s.tooFew("rtc", len(xs), c.F, "n > f")
	}
	if cap(c.ref) < d {
		c.ref = make([]float32, d)
	}
	c.ref = c.ref[:d]
	c.med.run(c.ref, xs)
	c.medW = c.med.c.weightsInto(growFloats(c.medW, len(xs)))
	c.run(dst, c.ref, xs)
	c.s.done()
	return nil
}

// AggregateAround implements Centered: the reference is own.
func (c *RTC) AggregateAround(dst, own []float32, xs [][]float32) error {
	if err := c.params(); err != nil {
		return err
	}
	xs, d, err := c.s.in("rtc", dst, xs, 1)
	if err != nil {
		return err
	}
	if err := checkOwn("rtc", own, d); err != nil {
		c.s.fail()
		return err
	}
	c.medW = c.medW[:0]
	c.run(dst, own, xs)
	c.s.done()
	return nil
}

func (c *RTC) params() error {
	if c.F < 0 || !(c.Tau >= 0) || math.IsInf(c.Tau, 0) {
		c.s.fail()
		return fmt.Errorf("rtc: f = %d, tau = %v; need f >= 0 and finite tau >= 0 (0: the median kept distance)", c.F, c.Tau)
	}
	return nil
}

func (c *RTC) run(dst, ref []float32, xs [][]float32) {
	n := len(xs)
	c.order, c.dist = growInts(c.order, n), growFloats(c.dist, n)
	for i, x := range xs {
		c.order[i] = i
		c.dist[i] = math.Sqrt(vec.SqDist(x, ref))
	}
	c.rk.reset(n)
	c.rk.sort(c.order, xs, c.dist)
	kept := c.order[:max(0, n-c.F)]
	m := len(kept)
	tau := c.Tau
	if tau == 0 && m > 0 {
		tau = c.dist[kept[m/2]]
	}
	c.w = growFloats(c.w, n)
	clear(c.w)
	d := len(ref)
	if cap(c.acc) < d {
		c.acc = make([]float64, d)
	}
	c.acc = c.acc[:d]
	clear(c.acc)
	for _, j := range kept {
		s := 1.0
		if dj := c.dist[j]; dj > tau {
			s = tau / dj
		}
		c.w[j] = s / float64(n+1)
		for k, v := range xs[j] {
			c.acc[k] += (float64(v) - float64(ref[k])) * s
		}
	}
	for k, v := range c.acc {
		dst[k] = float32(float64(ref[k]) + v/float64(n+1))
	}
}

// Weights implements Selector (see the type's doc).
func (c *RTC) Weights() []float64 {
	if c.s.n == 0 {
		return nil
	}
	w := slices.Clone(c.w)
	if len(c.medW) == len(w) {
		var rest float64
		for _, v := range w {
			rest += v
		}
		for i, m := range c.medW {
			w[i] += (1 - rest) * m
		}
	}
	return c.s.expand(w)
}

// Dropped implements Dropper.
func (c *RTC) Dropped() int { return c.s.Dropped() }

// rtcScratch is, around the own vector (Spec.AroundOwn: no reference to
// compute), the float64 sum and the inputs' order, distances and weights.
func rtcScratch(n, dim int64) (int64, string) {
	return memsize.Add(memsize.Alloc(memsize.Mul(8, dim)), 3*memsize.Alloc(8*n)), "a float64 sum"
}
