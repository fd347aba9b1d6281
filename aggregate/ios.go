package aggregate

import (
	"fmt"
	"github.com/trellis-fl/trellis/internal/memsize"
	"slices"
)

// IOS is the iterative outlier scissor (Wu, Chen, Ling and Wang, IEEE TSP
// 2023; survey Table 8, "iterative outlier scissor"): F times, average the
// vectors still kept and discard the input farthest from that average;
// the output is the average of what remains. In the decentralized form
// (AggregateAround) the node's own vector is among the averaged vectors
// and is never discarded, so up to F neighbors go; as a Rule every input
// may go and n > F is needed. The survey's form weights the averages with
// the mixing weights; here every vector counts 1 (the rule interface
// carries no weights).
//
// Averages are taken in float64, with the inputs in the order of their
// contents (then index), and distances to them directly in float64
// (Σ (x_k − m_k)², no Gram matrix: the average moves every pass), so the
// output is bit-identical under any permutation of the inputs. Among
// inputs equally far, the one later in that order goes. Weights gives each
// kept input 1/k for k averaged vectors (with the own vector one of them
// in AggregateAround: the weights then sum to 1 − 1/k). Costs F + 1
// passes over the inputs.
//
// An IOS holds scratch: use it through a pointer, from one goroutine at a
// time.
type IOS struct {
	// F is the number of inputs discarded.
	F int

	s     screen
	rk    ranker
	order []int // kept inputs, in content order
	kept  []bool
	m     []float64
	w     []float64
}

// Name implements Rule and Centered.
func (*IOS) Name() string { return "ios" }

// Aggregate implements Rule.
func (o *IOS) Aggregate(dst []float32, xs [][]float32) error {
	return o.run(dst, nil, xs)
}

// AggregateAround implements Centered: own is averaged, never discarded.
func (o *IOS) AggregateAround(dst, own []float32, xs [][]float32) error {
	if own == nil {
		o.s.fail()
		return fmt.Errorf("ios: %w: no own vector", ErrLength)
	}
	return o.run(dst, own, xs)
}

func (o *IOS) run(dst, own []float32, xs [][]float32) error {
	if o.F < 0 {
		o.s.fail()
		return fmt.Errorf("ios: f = %d, allowed range [0, ∞)", o.F)
	}
	xs, d, err := o.s.in("ios", dst, xs, 1)
	if err != nil {
		return err
	}
	n := len(xs)
	if own != nil {
		if err := checkOwn("ios", own, d); err != nil {
			o.s.fail()
			return err
		}
	} else if o.F >= n {
		o.s.fail()
		return o.s.tooFew("ios", n, o.F, "n > f")
	}
	o.order = growInts(o.order, n)
	for i := range o.order {
		o.order[i] = i
	}
	o.rk.reset(n)
	zero := growFloats(o.w, n)
	clear(zero)
	o.rk.sort(o.order, xs, zero)
	if cap(o.m) < d {
		o.m = make([]float64, d)
	}
	o.m = o.m[:d]
	rest := o.order
	for range min(o.F, n) {
		o.average(own, xs, rest)
		far, best := -1, -1.0
		for k, i := range rest {
			if e := sqDiff(xs[i], o.m); e >= best {
				far, best = k, e
			}
		}
		rest = slices.Delete(rest, far, far+1)
	}
	o.average(own, xs, rest)
	for k, v := range o.m {
		dst[k] = float32(v)
	}
	o.w = growFloats(o.w, n)
	clear(o.w)
	cnt := float64(len(rest))
	if own != nil {
		cnt++
	}
	for _, i := range rest {
		o.w[i] = 1 / cnt
	}
	o.s.done()
	return nil
}

// average sets o.m to the float64 mean of own (when not nil) and xs[set],
// own first, then set in order.
func (o *IOS) average(own []float32, xs [][]float32, set []int) {
	clear(o.m)
	cnt := float64(len(set))
	if own != nil {
		for k, v := range own {
			o.m[k] = float64(v)
		}
		cnt++
	}
	for _, i := range set {
		for k, v := range xs[i] {
			o.m[k] += float64(v)
		}
	}
	for k := range o.m {
		o.m[k] /= cnt
	}
}

// Weights implements Selector (see the type's doc).
func (o *IOS) Weights() []float64 {
	if o.s.n == 0 {
		return nil
	}
	return o.s.expand(slices.Clone(o.w))
}

// Dropped implements Dropper.
func (o *IOS) Dropped() int { return o.s.Dropped() }

// iosScratch is the float64 mean.
func iosScratch(_, dim int64) (int64, string) {
	return memsize.Alloc(memsize.Mul(8, dim)), "a float64 mean"
}
