package consensus

import (
	"math"
	"slices"
	"testing"
)

// TestDecompIndistinguishable is ref. [164]'s privacy claim, built rather
// than assumed: when the target i has a neighbour m outside the coalition,
// a second execution with x'_i(0) = x_i(0) + δ (and x'_m(0) = x_m(0) − δ,
// so the average is the same) gives every colluder the same view. The
// construction changes only what i and m keep private: β_i(0), β_m(0)
// (implied by the same α(0)), the coupling weights a_{i,αβ}(0),
// a_{m,αβ}(0) and the first-step weight a_im(0) of their shared edge,
// chosen so that after the first step every α and β is what it was:
//
//	b'_i  = (ε b_i (α_i − β_i) − 2δ) / (ε (α_i − β_i − 2δ))   (β'_i(1) = β_i(1))
//	b'_m  = (ε b_m (α_m − β_m) + 2δ) / (ε (α_m − β_m + 2δ))   (β'_m(1) = β_m(1))
//	a'_im = a_im − 2δ / (ε (α_m − α_i))                         (α_i(1), α_m(1) unchanged)
//
// Every modified weight must lie in the method's own range [Lo, 1], so
// both executions are ones the method can produce.
func TestDecompIndistinguishable(t *testing.T) {
	p := problem(t, 300, 6)
	pl, base, alt, coal := decompPlan(t, p, p.X0)
	q := *p
	q.X0 = slices.Clone(p.X0)
	q.X0[pl.i] += pl.d
	q.X0[pl.m] -= pl.d

	t1, err := base.Run(p)
	if err != nil {
		t.Fatal(err)
	}
	t2, err := alt.Run(&q)
	if err != nil {
		t.Fatal(err)
	}
	exact(t, "execution 1", p, t1)
	exact(t, "execution 2", &q, t2)
	c := Curious{Target: pl.i, Colluders: coal}
	v1 := c.View(t1)
	worst := sameView(t, v1, c.View(t2))
	// Same views, different secrets: x_i(0) cannot be told apart from
	// x_i(0) + δ by the coalition, and so neither can any estimator of it.
	if q.X0[pl.i] == p.X0[pl.i] {
		t.Fatal("the two executions have the same x_i(0)")
	}
	t.Logf("target %d, hidden neighbour %d, coalition %v, δ = %v: views of %d messages differ by %.3g",
		pl.i, pl.m, coal, pl.d, len(v1), worst)
	// The same coalition plus m recovers x_i(0): the condition is needed.
	all := Curious{Target: pl.i, Colluders: p.G.Out(pl.i)}
	for _, r := range []struct {
		p  *Problem
		s  StateDecomposition
		tr *Trace
	}{{p, base, t1}, {&q, alt, t2}} {
		if got := all.RecoverDecomp(r.p, r.s, r.tr); !(math.Abs(got-r.p.X0[pl.i]) <= 1e-6) {
			t.Errorf("all neighbours recover %v, x_i(0) = %v", got, r.p.X0[pl.i])
		}
	}
}

// decompPlan finds a target i, a neighbour m and a δ for which the
// modified first-step weights of TestDecompIndistinguishable lie in
// [Lo, 1], from the initial values x0 (x(0), or r(0) in a dynamic run),
// and returns the two parameter sets and the coalition N_i \ {m}.
func decompPlan(t *testing.T, p *Problem, x0 []float64) (pl *decompPlanT, base, alt StateDecomposition, coal []int) {
	t.Helper()
	s := StateDecomposition{}
	eps := s.Step(maxDegree(p.G))
	n := p.G.N()
	alpha := make([]float64, n)
	for j := range n {
		alpha[j] = s.DefaultAlpha0(p.Seed, j)
	}
	edge := func(a, b, k int) float64 { return s.DefaultEdge(p.Seed, a, b, k) }
	coup := func(a, k int) float64 { return s.DefaultCoupling(p.Seed, a, k) }
	in := func(w float64) bool { return w >= s.lo() && w <= 1 }
search:
	for i := range n {
		for _, m := range p.G.Out(i) {
			for _, d := range []float64{0.05, -0.05, 0.02, -0.02, 0.01, -0.01} {
				bi0 := 2*x0[i] - alpha[i]
				bm0 := 2*x0[m] - alpha[m]
				bi := (eps*coup(i, 0)*(alpha[i]-bi0) - 2*d) / (eps * (alpha[i] - bi0 - 2*d))
				bm := (eps*coup(m, 0)*(alpha[m]-bm0) + 2*d) / (eps * (alpha[m] - bm0 + 2*d))
				aim := edge(i, m, 0) - 2*d/(eps*(alpha[m]-alpha[i]))
				if in(bi) && in(bm) && in(aim) {
					pl = &decompPlanT{i, m, d, bi, bm, aim}
					break search
				}
			}
		}
	}
	if pl == nil {
		t.Fatal("no (i, m, δ) with all modified weights in range")
	}
	for _, j := range p.G.Out(pl.i) {
		if j != pl.m {
			coal = append(coal, j)
		}
	}
	base = StateDecomposition{Alpha0: alpha, Edge: edge, Coupling: coup}
	alt = StateDecomposition{Alpha0: alpha,
		Edge: func(a, b, k int) float64 {
			if k == 0 && ((a == pl.i && b == pl.m) || (a == pl.m && b == pl.i)) {
				return pl.aim
			}
			return edge(a, b, k)
		},
		Coupling: func(a, k int) float64 {
			switch {
			case k == 0 && a == pl.i:
				return pl.bi
			case k == 0 && a == pl.m:
				return pl.bm
			}
			return coup(a, k)
		}}
	return pl, base, alt, coal
}

type decompPlanT struct {
	i, m           int
	d, bi, bm, aim float64
}

// sameView fails unless the two views have the same messages, in order,
// with values within 1e-12; it returns the largest difference.
func sameView(t *testing.T, v1, v2 []Message) float64 {
	t.Helper()
	if len(v1) != len(v2) || len(v1) == 0 {
		t.Fatalf("views of %d and %d messages", len(v1), len(v2))
	}
	worst := 0.0
	for k := range v1 {
		a, b := v1[k], v2[k]
		if a.Iter != b.Iter || a.From != b.From || a.To != b.To || a.Kind != b.Kind {
			t.Fatalf("message %d: %+v against %+v", k, a, b)
		}
		worst = max(worst, math.Abs(a.Value-b.Value))
	}
	if !(worst <= 1e-12) {
		t.Fatalf("views differ by %g", worst)
	}
	return worst
}
