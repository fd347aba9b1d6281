package aggregate

import (
	"errors"
	"fmt"
	"strings"
)

// Pre is a pre-aggregator ("Pre-aggregators" in docs/methods/toolbox.md): it
// turns the inputs of a rule into other vectors the rule then combines
// (bucket means, nearest-neighbor means, clipped inputs). Pre-aggregators
// compose in front of any rule through Chain.
//
// Apply expects finite inputs of one length (Chain screens them first). The
// vectors it returns belong to the pre-aggregator, or are its inputs
// unchanged, and stay valid until its next Apply. Credit maps weights over
// the last Apply's outputs to weights over its inputs, so that a chain can
// say how much each original input counted. A Pre holds scratch: use it
// through a pointer, from one goroutine at a time.
type Pre interface {
	Name() string
	Apply(xs [][]float32) ([][]float32, error)
	Credit(w []float64) []float64
}

// Chain is a Rule that runs its pre-aggregators in order and then Rule: for
// example NNM then Krum ("nnm+krum"). Non-finite inputs are dropped and
// counted once, before the first pre-aggregator. Weights are the rule's
// weights credited back through the pre-aggregators (see each one's
// Credit), 0 for dropped inputs; nil when the rule is not a Selector.
//
// AggregateAround runs the pre-aggregators on the inputs and then the
// rule's AggregateAround around the own vector (unchanged); it is an error
// when Rule is not Centered.
type Chain struct {
	Pre  []Pre
	Rule Rule
	// Threads is the number of goroutines the screening is split across
	// (the pre-aggregators and the rule have their own setting).
	Threads int

	s screen
}

// Name is the config name: the pre-aggregators' and the rule's names joined
// by "+", as NewWith parses them.
func (c *Chain) Name() string {
	var b strings.Builder
	for _, p := range c.Pre {
		b.WriteString(p.Name())
		b.WriteByte('+')
	}
	if c.Rule != nil {
		b.WriteString(c.Rule.Name())
	}
	return b.String()
}

// Aggregate implements Rule.
func (c *Chain) Aggregate(dst []float32, xs [][]float32) error {
	ys, err := c.pre(dst, xs)
	if err != nil {
		return err
	}
	if err := c.Rule.Aggregate(dst, ys); err != nil {
		c.s.fail()
		return fmt.Errorf("%s: %w", c.Name(), err)
	}
	c.s.done()
	return nil
}

// AggregateAround implements Centered when Rule does.
func (c *Chain) AggregateAround(dst, own []float32, xs [][]float32) error {
	cr, ok := c.Rule.(Centered)
	if !ok {
		c.s.fail()
		return fmt.Errorf("%s: %s has no own-vector form (centered rules: centered_clipping, msr, ios, rtc)", c.Name(), c.Rule.Name())
	}
	ys, err := c.pre(dst, xs)
	if err != nil {
		return err
	}
	if err := cr.AggregateAround(dst, own, ys); err != nil {
		c.s.fail()
		return fmt.Errorf("%s: %w", c.Name(), err)
	}
	c.s.done()
	return nil
}

// pre screens the inputs and runs the pre-aggregators.
func (c *Chain) pre(dst []float32, xs [][]float32) ([][]float32, error) {
	if c.Rule == nil {
		c.s.fail()
		return nil, errors.New("aggregate: chain without a rule")
	}
	name := c.Name()
	ys, _, err := c.s.in(name, dst, xs, c.Threads)
	if err != nil {
		return nil, err
	}
	for _, p := range c.Pre {
		if ys, err = p.Apply(ys); err != nil {
			c.s.fail()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return ys, nil
}

// Weights implements Selector.
func (c *Chain) Weights() []float64 {
	if c.s.n == 0 {
		return nil
	}
	sel, ok := c.Rule.(Selector)
	if !ok {
		return nil
	}
	w := sel.Weights()
	for k := len(c.Pre) - 1; k >= 0 && w != nil; k-- {
		w = c.Pre[k].Credit(w)
	}
	return c.s.expand(w)
}

// Dropped implements Dropper.
func (c *Chain) Dropped() int { return c.s.Dropped() }

// sameLength checks the inputs of a pre-aggregator: at least one, all of
// one length.
func sameLength(pre string, xs [][]float32) (int, error) {
	if len(xs) == 0 {
		return 0, fmt.Errorf("%s: %w", pre, ErrNoInputs)
	}
	d := len(xs[0])
	for i, x := range xs {
		if len(x) != d {
			return 0, fmt.Errorf("%s: %w: input %d has length %d, input 0 has length %d", pre, ErrLength, i, len(x), d)
		}
	}
	return d, nil
}

// vectors returns n vectors of length d carved from one buffer, reusing
// buf and out.
func vectors(buf *[]float32, out *[][]float32, n, d int) [][]float32 {
	if cap(*buf) < n*d {
		*buf = make([]float32, n*d)
	}
	b := (*buf)[:n*d]
	o := (*out)[:0]
	for i := range n {
		o = append(o, b[i*d:(i+1)*d:(i+1)*d])
	}
	*out = o
	return o
}
