package aggregate

import (
	"fmt"

	"github.com/trellis-fl/trellis/vec"
)

// Auto is a rule whose f follows the number of inputs: every aggregation of
// n finite inputs (the aggregating node's own vector counted among them,
// also when the rule runs around it) uses f = FFor(Fraction, n, MaxF(n),
// Rounding), so a node with more neighbours tolerates more faulty ones and
// f never exceeds what the rule accepts. It keeps one rule per f it has
// used. Non-finite inputs are not counted (the rules drop them).
//
// Auto is a Centered rule when its rule is; its Weights are the last rule's
// when that is a Selector, nil otherwise.
type Auto struct {
	spec     Spec
	p        Params
	fraction float64
	rounding FRounding
	fmax     map[int]int
	rules    map[int]Rule
	last     Rule
}

// NewAuto returns the rule of s with parameters p (whose F is ignored) and
// f resolved from fraction at every aggregation.
func NewAuto(s Spec, p Params, fraction float64, r FRounding) (*Auto, error) {
	if !(fraction >= 0 && fraction <= 1) {
		return nil, fmt.Errorf("aggregate %q: fraction of faulty inputs %v, allowed range [0, 1]", s, fraction)
	}
	p.F = 0
	if err := p.check(s); err != nil {
		return nil, err
	}
	return &Auto{spec: s, p: p, fraction: fraction, rounding: r, fmax: map[int]int{}, rules: map[int]Rule{}}, nil
}

// Name implements Rule: the rule string.
func (a *Auto) Name() string { return a.spec.String() }

// F is the f used with n inputs.
func (a *Auto) F(n int) int {
	fm, ok := a.fmax[n]
	if !ok {
		fm = a.spec.MaxF(a.p, n)
		a.fmax[n] = fm
	}
	return FFor(a.fraction, n, fm, a.rounding)
}

// rule is the rule with the f for n inputs.
func (a *Auto) rule(n int) (Rule, error) {
	f := a.F(max(n, 1))
	r := a.rules[f]
	if r == nil {
		p := a.p
		p.F = f
		var err error
		if r, err = a.spec.New(p); err != nil {
			return nil, err
		}
		a.rules[f] = r
	}
	a.last = r
	return r, nil
}

// Aggregate implements Rule.
func (a *Auto) Aggregate(dst []float32, xs [][]float32) error {
	r, err := a.rule(finite(xs))
	if err != nil {
		return err
	}
	return r.Aggregate(dst, xs)
}

// AggregateAround implements Centered when the rule is Centered: own counts
// as one of the n inputs.
func (a *Auto) AggregateAround(dst, own []float32, xs [][]float32) error {
	r, err := a.rule(finite(xs) + 1)
	if err != nil {
		return err
	}
	c, ok := r.(Centered)
	if !ok {
		return fmt.Errorf("%s has no own-vector form (centered rules: centered_clipping, msr, ios, rtc)", a.Name())
	}
	return c.AggregateAround(dst, own, xs)
}

// Weights implements Selector when the rule does (nil otherwise).
func (a *Auto) Weights() []float64 {
	if s, ok := a.last.(Selector); ok {
		return s.Weights()
	}
	return nil
}

// finite counts the vectors without NaN or Inf.
func finite(xs [][]float32) int {
	n := 0
	for _, x := range xs {
		if ok, _ := vec.AllFinite(x); ok {
			n++
		}
	}
	return n
}
