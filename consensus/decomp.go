package consensus

import (
	"fmt"

	"github.com/trellis-fl/trellis/internal/seed"
)

// Stream ids of the state decomposition under seed.Strategy.
const (
	sdAlpha    = 0x5d01 // α_i(0)
	sdEdge     = 0x5d02 // a_ij(0), shared by the edge's two ends
	sdCoupling = 0x5d03 // a_{i,αβ}(k), private to i
)

// StateDecomposition is ref. [164]'s method (the survey, §3.4.2, Table 6:
// two shares, "state decomposition"): node i holds α_i and β_i with
// α_i(0) + β_i(0) = 2 x_i(0); only α_i is sent; β_i talks only to its own
// α_i, along the augmented graph, with coupling weight a_{i,αβ}(k):
//
//	α_i(k+1) = α_i(k) + ε [Σ_{j∈N_i} a_ij(k)(α_j(k) − α_i(k)) + a_{i,αβ}(k)(β_i(k) − α_i(k))]
//	β_i(k+1) = β_i(k) + ε a_{i,αβ}(k)(α_i(k) − β_i(k))
//
// With a_ij = a_ji the 2n-state iteration is doubly stochastic, so every α_i
// and β_i converges to the mean of all 2n initial sub-states, which is x̄.
// The zero value is usable: the defaults below are recorded choices.
type StateDecomposition struct {
	// Eps is the step ε; 0 means 1/(d_max + 1), the largest for which every
	// row stays non-negative with weights ≤ 1.
	Eps float64
	// R bounds α_i(0), drawn uniformly from [−R, R] independently of x_i(0)
	// (0 means 10), so α_i(0) alone says nothing about x_i(0).
	R float64
	// Lo is the lower end of the random weights, drawn from [Lo, 1]
	// (0 means 0.1).
	Lo float64
	// Alpha0, Edge and Coupling override α(0), a_ij(k) and a_{i,αβ}(k)
	// (nil: the seeded defaults of DefaultEdge and DefaultCoupling). The
	// privacy test uses them to build a second execution with the same
	// view.
	Alpha0   []float64
	Edge     func(i, j, k int) float64
	Coupling func(i, k int) float64
}

func (s StateDecomposition) r() float64 {
	if s.R == 0 {
		return 10
	}
	return s.R
}

func (s StateDecomposition) lo() float64 {
	if s.Lo == 0 {
		return 0.1
	}
	return s.Lo
}

// DefaultAlpha0 is the seeded α_i(0) of node i: uniform on [−R, R].
func (s StateDecomposition) DefaultAlpha0(sd uint64, i int) float64 {
	r := seed.Stream(sd, seed.Strategy, sdAlpha, uint64(i))
	return (2*r.Float64() - 1) * s.r()
}

// DefaultEdge is the seeded a_ij(k): drawn from [Lo, 1] at k = 0, from one
// stream per edge (both ends know it, nobody else does), and 1 after, as in
// ref. [164] where only the first step's weights need be private.
func (s StateDecomposition) DefaultEdge(sd uint64, i, j, k int) float64 {
	if k > 0 {
		return 1
	}
	r := seed.Stream(sd, seed.Strategy, sdEdge, edgeKey(i, j))
	return s.lo() + (1-s.lo())*r.Float64()
}

// DefaultCoupling is the seeded a_{i,αβ}(k): drawn from [Lo, 1] afresh at
// every iteration, known to node i only.
func (s StateDecomposition) DefaultCoupling(sd uint64, i, k int) float64 {
	r := seed.Stream(sd, seed.Strategy, sdCoupling, uint64(i), uint64(k))
	return s.lo() + (1-s.lo())*r.Float64()
}

// Step is ε for graph degree dmax.
func (s StateDecomposition) Step(dmax int) float64 {
	if s.Eps == 0 {
		return 1 / float64(dmax+1)
	}
	return s.Eps
}

// Run runs the method. Trace.Final and the errors are on the α_i (the
// nodes' estimates); Trace.Msgs holds every α_i(k) sent.
func (s StateDecomposition) Run(p *Problem) (*Trace, error) {
	t, _, err := s.run(p)
	return t, err
}

// run also returns the final β.
func (s StateDecomposition) run(p *Problem) (*Trace, []float64, error) {
	if err := p.check(); err != nil {
		return nil, nil, err
	}
	return s.iterate(p, p.X0, nil, newTrace(p))
}

// iterate is the iteration from α_i(0) + β_i(0) = 2 x0_i; with references
// r (a dynamic run, x0 = r(0)) each sub-state also gets r_i(k+1) − r_i(k)
// after step k, and the errors are measured against r̄(k).
func (s StateDecomposition) iterate(p *Problem, x0 []float64, r [][]float64, t *Trace) (*Trace, []float64, error) {
	n := p.G.N()
	eps := s.Step(maxDegree(p.G))
	edge := s.Edge
	if edge == nil {
		edge = func(i, j, k int) float64 { return s.DefaultEdge(p.Seed, i, j, k) }
	}
	coup := s.Coupling
	if coup == nil {
		coup = func(i, k int) float64 { return s.DefaultCoupling(p.Seed, i, k) }
	}
	a := make([]float64, n)
	b := make([]float64, n)
	for i := range n {
		if s.Alpha0 != nil {
			a[i] = s.Alpha0[i]
		} else {
			a[i] = s.DefaultAlpha0(p.Seed, i)
		}
		b[i] = 2*x0[i] - a[i]
	}
	observe := func(k int) {
		if r != nil {
			t.observeAt(k, a)
		} else {
			t.observe(a)
		}
	}
	observe(0)
	na, nb := make([]float64, n), make([]float64, n)
	for k := range p.Iters {
		t.broadcast(p, k, a)
		for i := range n {
			flow := 0.0
			for _, j := range p.G.Out(i) {
				w := edge(i, j, k)
				if w != edge(j, i, k) {
					return nil, nil, fmt.Errorf("consensus: a_%d%d(%d) ≠ a_%d%d(%d)", i, j, k, j, i, k)
				}
				flow += w * (a[j] - a[i])
			}
			c := coup(i, k)
			na[i] = a[i] + eps*(flow+c*(b[i]-a[i]))
			nb[i] = b[i] + eps*c*(a[i]-b[i])
			if r != nil {
				d := r[k+1][i] - r[k][i]
				na[i] += d
				nb[i] += d
			}
		}
		a, na = na, a
		b, nb = nb, b
		observe(k + 1)
	}
	t.finish(a)
	return t, b, nil
}

// DynamicDecomposition is ref. [165]'s state decomposition for dynamic
// average consensus (the survey, §3.4.2, Table 6: dynamic consensus, two
// shares, "state decomposition"): StateDecomposition's iteration started
// from α_i(0) + β_i(0) = 2 r_i(0), with node i adding its reference's
// increment to both of its sub-states after every step,
//
//	α_i(k+1) = [StateDecomposition's α update] + r_i(k+1) − r_i(k)
//	β_i(k+1) = [StateDecomposition's β update] + r_i(k+1) − r_i(k)
//
// (the split of the increment is our choice: half of 2Δr_i each). The
// 2n-state iteration is doubly stochastic and gains 2 Σ_i Δr_i(k), so the
// mean of the 2n sub-states is r̄(k) at every k; the disagreement is
// driven by the increments and vanishes with them: with Converging
// signals every α_i tracks r̄(k) exactly in the limit. The parameters and
// their defaults are StateDecomposition's.
type DynamicDecomposition struct {
	StateDecomposition
}

// Run runs the method on a dynamic problem. Trace.Final and the errors are
// on the α_i; Trace.Msgs holds every α_i(k) sent.
func (s DynamicDecomposition) Run(p *Problem) (*Trace, error) {
	r, err := p.refs()
	if err != nil {
		return nil, err
	}
	t, _, err := s.iterate(p, r[0], r, newDynTrace(r))
	return t, err
}
