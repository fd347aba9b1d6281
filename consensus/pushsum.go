package consensus

import (
	"fmt"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/topology"
)

// Stream ids of the directed methods under seed.Strategy.
const (
	dgArcs     = 0xd160 // Digraph's extra arcs
	psAlpha    = 0xd161 // α_i(0) of PushSumDecomposition
	psOut      = 0xd162 // a_ji(0), private to the sender i
	psCoupling = 0xd163 // c_i(k), q_i(k), private to i
)

// Digraph returns a strongly connected directed graph on n ≥ 2 nodes: the
// ring i → i+1 (mod n), which makes it strongly connected, plus extra arcs
// from each node to uniformly drawn other nodes (duplicates merged, so a
// node may get fewer). Package topology has no random digraph; this one
// is built with topology.FromEdges and lives here because only the
// directed methods use it.
func Digraph(n, extra int, sd uint64) (*topology.Graph, error) {
	if n < 2 || extra < 0 {
		return nil, fmt.Errorf("consensus: digraph on %d nodes with %d extra arcs each", n, extra)
	}
	var es []topology.Edge
	for i := range n {
		es = append(es, topology.Edge{From: i, To: (i + 1) % n})
		r := seed.Stream(sd, seed.Strategy, dgArcs, uint64(i))
		for range extra {
			j := r.IntN(n - 1)
			if j >= i {
				j++
			}
			es = append(es, topology.Edge{From: i, To: j})
		}
	}
	return topology.FromEdges(n, es, true)
}

// checkDirected is the directed methods' check: a strongly connected
// graph (directed or not), n finite initial values, no references.
func (p *Problem) checkDirected() error {
	if p.G == nil || !topology.IsStronglyConnected(p.G) {
		return fmt.Errorf("consensus: need a strongly connected graph")
	}
	if p.Ref != nil {
		return fmt.Errorf("consensus: a static method got reference signals (use a dynamic one)")
	}
	return p.checkValues()
}

// sendMass records that node i pushed the masses (sx, sy) to j at k: a
// State message (its x-part) and a Mass message (its y-part).
func (t *Trace) sendMass(p *Problem, k, i, j int, sx, sy float64) {
	if p.Record {
		t.Msgs = append(t.Msgs,
			Message{Iter: k, From: i, To: j, Kind: State, Value: sx},
			Message{Iter: k, From: i, To: j, Kind: Mass, Value: sy})
	}
}

// PushSum is push-sum (ratio) consensus on a directed graph, the baseline
// of ref. [166]: node i holds a value mass x_i (x_i(0) = its value) and a
// weight mass y_i (y_i(0) = 1), keeps the share 1/(d⁺_i + 1) of both and
// pushes the same share to each out-neighbour (d⁺_i its out-degree): the
// weights are column-stochastic, so Σ x and Σ y are kept, and every
// estimate x_i(k)/y_i(k) converges to x̄ on a strongly connected graph
// (the matrix is primitive: every node keeps a share). Messages are the
// pushed masses; the first one's ratio is x_i(0) itself.
func PushSum(p *Problem) (*Trace, error) {
	if err := p.checkDirected(); err != nil {
		return nil, err
	}
	n := p.G.N()
	x := append([]float64(nil), p.X0...)
	y := make([]float64, n)
	for i := range y {
		y[i] = 1
	}
	nx, ny, z := make([]float64, n), make([]float64, n), make([]float64, n)
	t := newTrace(p)
	ratio := func() []float64 {
		for i := range z {
			z[i] = x[i] / y[i]
		}
		return z
	}
	t.observe(ratio())
	for k := range p.Iters {
		for i := range n {
			s := 1 / float64(p.G.OutDegree(i)+1)
			nx[i], ny[i] = s*x[i], s*y[i]
		}
		for i := range n {
			s := 1 / float64(p.G.OutDegree(i)+1)
			for _, j := range p.G.Out(i) {
				t.sendMass(p, k, i, j, s*x[i], s*y[i])
				nx[j] += s * x[i]
				ny[j] += s * y[i]
			}
		}
		x, nx = nx, x
		y, ny = ny, y
		t.observe(ratio())
	}
	t.finish(z)
	return t, nil
}

// PushSumDecomposition is ref. [166]'s state decomposition for push-sum
// (the survey, §3.4.2, Table 6: directed consensus, two shares, "state
// decomposition"), our rendering: node i splits its value into sub-states
// α_i and β_i, α_i^x(0) + β_i^x(0) = 2 x_i(0), each with weight mass
// α_i^y(0) = β_i^y(0) = 1, and runs push-sum on the augmented graph of 2n
// sub-states where β_i is linked only to its own α_i:
//
//   - α_i pushes the share a_ji(k)/(d⁺_i + 2) of both its masses to each
//     out-neighbour j, c_i(k)/(d⁺_i + 2) to β_i, and keeps the rest
//     (at least 1/(d⁺_i + 2));
//   - β_i pushes q_i(k)/2 of both its masses to α_i and keeps the rest.
//
// Columns sum to one, so Σ(α^x + β^x) = 2 Σ x_i(0) and Σ(α^y + β^y) = 2n
// are kept and every ratio α_i^x/α_i^y converges to x̄. Only α_i's pushes
// leave the node. a_ji(0) is drawn from [Lo, 1] by the sender i (private
// to it) and a_ji(k) = 1 after, as in StateDecomposition; c_i(k), q_i(k)
// from [Lo, 1] afresh at every k, known to i only; α_i^x(0) uniform on
// [−R, R]. The zero value is usable.
type PushSumDecomposition struct {
	R  float64 // α_i^x(0) range (0 means 10)
	Lo float64 // lower end of the random weights (0 means 0.1)
	// Alpha0, Out and Coupling override α^x(0), a_ji(k) (the arc i → j)
	// and (c_i(k), q_i(k)) (nil: the seeded defaults); the privacy test
	// uses them to build a second execution with the same view.
	Alpha0   []float64
	Out      func(i, j, k int) float64
	Coupling func(i, k int) (c, q float64)
}

func (s PushSumDecomposition) lo() float64 {
	if s.Lo == 0 {
		return 0.1
	}
	return s.Lo
}

// DefaultAlpha0 is the seeded α_i^x(0): uniform on [−R, R].
func (s PushSumDecomposition) DefaultAlpha0(sd uint64, i int) float64 {
	rr := s.R
	if rr == 0 {
		rr = 10
	}
	return (2*seed.Stream(sd, seed.Strategy, psAlpha, uint64(i)).Float64() - 1) * rr
}

// DefaultOut is the seeded a_ji(k) of the arc i → j: from [Lo, 1] at
// k = 0, 1 after.
func (s PushSumDecomposition) DefaultOut(sd uint64, i, j, k int) float64 {
	if k > 0 {
		return 1
	}
	r := seed.Stream(sd, seed.Strategy, psOut, uint64(i), uint64(j))
	return s.lo() + (1-s.lo())*r.Float64()
}

// DefaultCoupling is the seeded (c_i(k), q_i(k)), each from [Lo, 1].
func (s PushSumDecomposition) DefaultCoupling(sd uint64, i, k int) (c, q float64) {
	r := seed.Stream(sd, seed.Strategy, psCoupling, uint64(i), uint64(k))
	c = s.lo() + (1-s.lo())*r.Float64()
	q = s.lo() + (1-s.lo())*r.Float64()
	return c, q
}

// Run runs the method. Trace.Final and the errors are on the ratios
// α_i^x/α_i^y; Trace.Msgs holds every push of α_i (State: the x-part,
// Mass: the y-part).
func (s PushSumDecomposition) Run(p *Problem) (*Trace, error) {
	if err := p.checkDirected(); err != nil {
		return nil, err
	}
	n := p.G.N()
	out := s.Out
	if out == nil {
		out = func(i, j, k int) float64 { return s.DefaultOut(p.Seed, i, j, k) }
	}
	coup := s.Coupling
	if coup == nil {
		coup = func(i, k int) (float64, float64) { return s.DefaultCoupling(p.Seed, i, k) }
	}
	ax, ay, bx, by := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		if s.Alpha0 != nil {
			ax[i] = s.Alpha0[i]
		} else {
			ax[i] = s.DefaultAlpha0(p.Seed, i)
		}
		bx[i] = 2*p.X0[i] - ax[i]
		ay[i], by[i] = 1, 1
	}
	nax, nay := make([]float64, n), make([]float64, n)
	z := make([]float64, n)
	ratio := func() []float64 {
		for i := range z {
			z[i] = ax[i] / ay[i]
		}
		return z
	}
	t := newTrace(p)
	t.observe(ratio())
	for k := range p.Iters {
		clear(nax)
		clear(nay)
		for i := range n {
			d := float64(p.G.OutDegree(i) + 2)
			c, q := coup(i, k)
			if !(c >= 0 && c <= 1 && q >= 0 && q <= 1) {
				return nil, fmt.Errorf("consensus: c_%d(%d) = %v, q = %v outside [0, 1]", i, k, c, q)
			}
			keep := 1 - c/d
			for _, j := range p.G.Out(i) {
				a := out(i, j, k)
				if !(a >= 0 && a <= 1) {
					return nil, fmt.Errorf("consensus: a_%d%d(%d) = %v outside [0, 1]", j, i, k, a)
				}
				keep -= a / d
				t.sendMass(p, k, i, j, a/d*ax[i], a/d*ay[i])
				nax[j] += a / d * ax[i]
				nay[j] += a / d * ay[i]
			}
			// α_i's own share and β_i's push to it; β_i keeps 1 − q/2.
			nax[i] += keep*ax[i] + q/2*bx[i]
			nay[i] += keep*ay[i] + q/2*by[i]
			bx[i] = (1-q/2)*bx[i] + c/d*ax[i]
			by[i] = (1-q/2)*by[i] + c/d*ay[i]
		}
		ax, nax = nax, ax
		ay, nay = nay, ay
		t.observe(ratio())
	}
	t.finish(z)
	return t, nil
}
