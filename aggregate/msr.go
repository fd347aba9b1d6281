package aggregate

import (
	"fmt"
)

// MSR is the mean-subsequence-reduced update of LeBlanc et al. (W-MSR with
// equal weights; "MSR / W-MSR" in docs/methods/toolbox.md), applied per
// coordinate: around a reference value x_0, remove the F largest values
// above x_0 (all of them if fewer than F are above) and the F smallest
// below it (likewise), and average what remains together with x_0. Values
// equal to x_0 are kept. For d = 1 it is the scalar rule; for d > 1 it is
// the per-coordinate vector version, which (as the survey notes) loses the
// scalar rule's safety guarantee.
//
// As a Centered rule the reference is the aggregating node's own vector
// (the decentralized use, own not among the inputs). As a Rule the
// reference is the coordinate-wise median of the inputs (documented
// choice: a Rule has no own vector; the median is the reference a node
// would trust among its inputs).
//
// Kept values are selected by rank and summed as the trimmed mean sums
// (exactly, or in ascending order), the reference added last, so the
// output is bit-identical under any permutation of the inputs and for
// every thread count. Weights gives each input its share of all averaged
// values (kept values count 1, as does the reference per coordinate). The
// reference's share goes, for the Rule, to the inputs holding the median
// (so weights sum to 1); for AggregateAround it belongs to the own vector
// and the weights sum to 1 minus it.
//
// An MSR holds scratch: use it through a pointer, from one goroutine at a
// time.
type MSR struct {
	// F is the number of values removed on each side of the reference.
	F int
	// Threads is the number of goroutines the coordinates are split across
	// (0 or 1: the caller's only). The output does not depend on it.
	Threads int

	s screen
	c columns
	k msrKernel
}

// Name implements Rule and Centered.
func (*MSR) Name() string { return "msr" }

// Aggregate implements Rule: the reference is the coordinate-wise median.
func (m *MSR) Aggregate(dst []float32, xs [][]float32) error {
	if m.F < 0 {
		m.s.fail()
		return fmt.Errorf("msr: f = %d, allowed range [0, ∞)", m.F)
	}
	xs, _, err := m.s.in("msr", dst, xs, m.Threads)
	if err != nil {
		return err
	}
	m.k = msrKernel{f: m.F}
	m.c.run(dst, xs, m.Threads, &m.k)
	m.s.done()
	return nil
}

// AggregateAround implements Centered: the reference is own.
func (m *MSR) AggregateAround(dst, own []float32, xs [][]float32) error {
	if m.F < 0 {
		m.s.fail()
		return fmt.Errorf("msr: f = %d, allowed range [0, ∞)", m.F)
	}
	xs, d, err := m.s.in("msr", dst, xs, m.Threads)
	if err != nil {
		return err
	}
	if err := checkOwn("msr", own, d); err != nil {
		m.s.fail()
		return err
	}
	m.k = msrKernel{f: m.F, ref: own}
	m.c.run(dst, xs, m.Threads, &m.k)
	m.k.ref = nil
	m.s.done()
	return nil
}

// Weights implements Selector.
func (m *MSR) Weights() []float64 { return m.s.expand(m.c.weights()) }

// Dropped implements Dropper.
func (m *MSR) Dropped() int { return m.s.Dropped() }

// msrKernel is MSR on one coordinate; ref nil means the median. Counts are
// in units of 2 so that the median of an even number of values can credit
// each of its two inputs 1.
type msrKernel struct {
	f   int
	ref []float32
}

func (k *msrKernel) coord(c *coords, keys []uint64, j int) float32 {
	n := len(keys)
	var r float64
	if k.ref != nil {
		r = float64(k.ref[j])
		c.own += 2
	} else {
		lo, hi, _ := selectRank(keys, c.a, c.b, (n-1)/2)
		if n%2 == 1 {
			r = float64(keyValue(lo))
			c.counts[keyInput(lo)] += 2
		} else {
			r = (float64(keyValue(lo)) + float64(keyValue(hi))) / 2
			c.counts[keyInput(lo)]++
			c.counts[keyInput(hi)]++
		}
	}
	above, below := 0, 0
	for _, key := range keys {
		v := float64(keyValue(key))
		above += b2i(v > r)
		below += b2i(v < r)
	}
	lo, hi := min(k.f, below), n-1-min(k.f, above)
	if lo > hi {
		return float32(r)
	}
	s, m := keptRange(c, keys, lo, hi, 2)
	return float32((s + r) / float64(m+1))
}

// msrScratch is the coordinate-wise scratch (its columns).
func msrScratch(n, dim int64) (int64, string) { return columnsScratch(n, dim) }
