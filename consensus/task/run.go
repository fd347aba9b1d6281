package task

import (
	"fmt"
	"math"

	"github.com/trellis-fl/trellis/consensus"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/topology"
)

// Stream ids of the task (under seed.Init and seed.Strategy).
const (
	initStream  = 0xc0a1 // node i's initial values, under seed.Init
	coordStream = 0xc0a2 // coordinate c's problem seed, under seed.Strategy
	driftStream = 0xc0a3 // node i's signal drifts b_i, under seed.Init
)

// Init says how the initial values are drawn: "uniform" on [A, B) or
// "normal" with mean A and standard deviation B.
type Init struct {
	Dist string
	A, B float64
}

// InitialValues draws x_i(0) for n nodes of dim coordinates ([node][coord]).
func InitialValues(n, dim int, sd uint64, in Init) ([][]float64, error) {
	if in.Dist != "uniform" && in.Dist != "normal" {
		return nil, fmt.Errorf("consensus task: initial values %q, want uniform or normal", in.Dist)
	}
	x := make([][]float64, n)
	for i := range n {
		r := seed.Stream(sd, seed.Init, initStream, uint64(i))
		x[i] = make([]float64, dim)
		for c := range dim {
			if in.Dist == "uniform" {
				x[i][c] = in.A + (in.B-in.A)*r.Float64()
			} else {
				x[i][c] = in.A + in.B*r.NormFloat64()
			}
		}
	}
	return x, nil
}

// Signals returns the reference signals of coordinate c for the dynamic
// methods, with r_i(0) = x0[i][c] (the private value) and a drift
// b_i = spread·u_i, u_i uniform on [−1, 1) from node i's own stream
// (spread: hi − lo for uniform initial values, std for normal ones):
//
//	converging: r_i(k) = x_i(0) + b_i (ρ^k − 1)  (settles at x_i(0) − b_i)
//	ramp:       r_i(k) = x_i(0) + slope·b_i·k    (drifts apart forever)
func Signals(x0 [][]float64, c int, sd uint64, in Init, o Params) (consensus.Signal, error) {
	n := len(x0)
	spread := in.B - in.A
	if in.Dist == "normal" {
		spread = in.B
	}
	a, b := make([]float64, n), make([]float64, n)
	for i := range n {
		r := seed.Stream(sd, seed.Init, driftStream, uint64(i), uint64(c))
		b[i] = spread * (2*r.Float64() - 1)
	}
	switch o.Signal {
	case "", "converging":
		rho := o.SignalDecay
		if rho == 0 {
			rho = 0.9
		}
		if !(rho > 0 && rho < 1) {
			return nil, fmt.Errorf("consensus task: signal_decay %v, want ρ in (0, 1)", rho)
		}
		for i := range n {
			a[i] = x0[i][c]
		}
		// consensus.Converging's a_i + b_i ρ^k with a_i = x_i(0) − b_i,
		// written so that r_i(0) is x_i(0) exactly.
		return func(i, k int) float64 { return a[i] + b[i]*(math.Pow(rho, float64(k))-1) }, nil
	case "ramp":
		slope := o.SignalSlope
		if slope == 0 {
			slope = 0.01
		}
		for i := range n {
			a[i] = x0[i][c]
			b[i] *= slope
		}
		return consensus.Ramp(a, b), nil
	}
	return nil, fmt.Errorf("consensus task: signal %q, want converging or ramp", o.Signal)
}

// Spec is one run of the task.
type Spec struct {
	G      *topology.Graph
	Method string
	Params Params
	X0     [][]float64 // [node][coord]
	// Init is how X0 was drawn: the dynamic methods' drifts take its
	// spread (Signals).
	Init  Init
	Iters int
	Seed  uint64
	// Colluders > 0 asks for the reconstruction error of the first
	// Colluders neighbours of Target.
	Colluders, Target int
}

// Record is the error after one iteration, over nodes and coordinates:
// against x̄, or, for a dynamic method, against the references' average
// r̄(k) of that iteration (the tracking error).
type Record struct {
	MSE       float64 // mean of (x_i[c] − x̄[c])²
	MaxAbsErr float64 // largest |x_i[c] − x̄[c]|
}

// Result is a finished run.
type Result struct {
	// Records[k] is the error after iteration k+1, k = 0..Iters−1.
	Records []Record
	// Avg is x̄ (a dynamic method's last r̄), per coordinate; Final the
	// nodes' last estimates.
	Avg   []float64
	Final [][]float64
	// ReconRMSE is the coalition's reconstruction error of x_target(0)
	// (nil without colluders).
	ReconRMSE *float64
}

// CheckGraph says why g cannot carry the task: consensus needs an
// undirected, connected graph of at least two nodes.
func CheckGraph(g *topology.Graph) error {
	switch {
	case !g.Undirected():
		return fmt.Errorf("consensus task: the graph is directed; the methods need an undirected graph (symmetric weights)")
	case g.N() < 2:
		return fmt.Errorf("consensus task: %d node(s); need at least 2", g.N())
	case !topology.IsConnected(g):
		return fmt.Errorf("consensus task: the graph is not connected (%d components), so the nodes cannot agree on the average of all; choose a connected topology", len(topology.Components(g)))
	}
	return nil
}

// Execute runs s.Method once per coordinate and reduces the traces.
func Execute(s Spec) (*Result, error) {
	m, ok := Lookup(s.Method)
	if !ok {
		return nil, fmt.Errorf("consensus task: method %q, want one of %v", s.Method, Names())
	}
	if err := CheckGraph(s.G); err != nil {
		return nil, err
	}
	n := s.G.N()
	if len(s.X0) != n || n == 0 {
		return nil, fmt.Errorf("consensus task: %d initial vectors for %d nodes", len(s.X0), n)
	}
	if s.Iters < 1 {
		return nil, fmt.Errorf("consensus task: %d iterations, want ≥ 1", s.Iters)
	}
	var cur consensus.Curious
	if s.Colluders > 0 {
		if s.Target < 0 || s.Target >= n {
			return nil, fmt.Errorf("consensus task: target node %d of %d", s.Target, n)
		}
		nb := s.G.Out(s.Target)
		if s.Colluders > len(nb) {
			return nil, fmt.Errorf("consensus task: %d colluders, but target node %d has %d neighbours", s.Colluders, s.Target, len(nb))
		}
		cur = consensus.Curious{Target: s.Target, Colluders: append([]int(nil), nb[:s.Colluders]...)}
	}
	dim := len(s.X0[0])
	res := &Result{Records: make([]Record, s.Iters), Avg: make([]float64, dim), Final: make([][]float64, n)}
	for i := range n {
		res.Final[i] = make([]float64, dim)
	}
	recon := 0.0
	x := make([]float64, n)
	for c := range dim {
		for i := range n {
			x[i] = s.X0[i][c]
		}
		p := &consensus.Problem{G: s.G, X0: x, Iters: s.Iters, Seed: seed.Derive(s.Seed, seed.Strategy, coordStream, uint64(c)), Record: s.Colluders > 0}
		if m.Dynamic {
			ref, err := Signals(s.X0, c, s.Seed, s.Init, s.Params)
			if err != nil {
				return nil, err
			}
			p.Ref = ref
		}
		t, rec, err := m.Run(p, s.Params)
		if err != nil {
			return nil, fmt.Errorf("consensus task: coordinate %d: %w", c, err)
		}
		for k := range s.Iters {
			r := &res.Records[k]
			r.MSE += t.MSE[k+1] / float64(dim)
			r.MaxAbsErr = max(r.MaxAbsErr, t.MaxErr[k+1])
		}
		res.Avg[c] = t.Avg
		for i := range n {
			res.Final[i][c] = t.Final[i]
		}
		if s.Colluders > 0 {
			d := rec(cur) - x[s.Target]
			recon += d * d / float64(dim)
		}
	}
	if s.Colluders > 0 {
		r := math.Sqrt(recon)
		res.ReconRMSE = &r
	}
	return res, nil
}
