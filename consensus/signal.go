package consensus

import (
	"fmt"
	"math"
)

// Signal is a dynamic problem's reference signals: Signal(i, k) is node
// i's private r_i(k), k = 0..Iters. It must be a pure function (the
// methods and the tests call it more than once per (i, k)).
type Signal func(i, k int) float64

// Converging returns r_i(k) = a_i + b_i ρ^k: every signal settles, so the
// average r̄(k) → ā, and a method that tracks exactly in the limit ends at
// ā. Increments b_i ρ^k (ρ − 1) vanish geometrically.
func Converging(a, b []float64, rho float64) Signal {
	return func(i, k int) float64 { return a[i] + b[i]*math.Pow(rho, float64(k)) }
}

// Ramp returns r_i(k) = a_i + s_i k: the signals drift apart forever, and
// first-order dynamic consensus lags them by a tracking error that stays
// (it is driven by the slopes' spread, s_i − s̄, at every step).
func Ramp(a, s []float64) Signal {
	return func(i, k int) float64 { return a[i] + s[i]*float64(k) }
}

// refs tabulates r(k) for k = 0..Iters, checking every value is finite.
func (p *Problem) refs() ([][]float64, error) {
	if p.G == nil || !p.G.Undirected() {
		return nil, fmt.Errorf("consensus: need an undirected graph")
	}
	if p.Ref == nil {
		return nil, fmt.Errorf("consensus: a dynamic method needs reference signals (Problem.Ref)")
	}
	if p.Iters < 0 {
		return nil, fmt.Errorf("consensus: %d iterations", p.Iters)
	}
	n := p.G.N()
	r := make([][]float64, p.Iters+1)
	for k := range r {
		r[k] = make([]float64, n)
		for i := range n {
			v := p.Ref(i, k)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("consensus: r_%d(%d) = %v", i, k, v)
			}
			r[k][i] = v
		}
	}
	return r, nil
}

// newDynTrace starts the trace of a dynamic run: Targets[k] = r̄(k) in
// float64, Avg the last of them.
func newDynTrace(r [][]float64) *Trace {
	t := &Trace{Targets: make([]float64, len(r))}
	for k, row := range r {
		s := 0.0
		for _, v := range row {
			s += v
		}
		t.Targets[k] = s / float64(len(row))
	}
	t.Avg = t.Targets[len(r)-1]
	return t
}

// observeAt appends the error of x against r̄(k).
func (t *Trace) observeAt(k int, x []float64) {
	t.Avg = t.Targets[k]
	t.observe(x)
	t.Avg = t.Targets[len(t.Targets)-1]
}
