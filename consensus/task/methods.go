package task

import (
	"slices"

	"github.com/trellis-fl/trellis/consensus"
)

// Params are a method's parameters as a config gives them; each method
// reads the ones its row names (Method.Takes), and a zero value is the
// package consensus default.
type Params struct {
	Epsilon     float64 // ε of the DP methods
	Sensitivity float64 // adjacency bound δ on x_i(0) of the DP methods (0: 1)
	Decay       float64 // q of the Laplace methods' noise scale c·q^k (0: 0.5)
	Randomized  bool    // dp_gossip: Alg. 2 (random edge activations) instead of Alg. 1
	Bits        int     // paillier: modulus bits (0: 512)
	// Signal is the dynamic methods' reference signals: "converging" (the
	// default) or "ramp"; SignalDecay is the converging signals' ρ (0:
	// 0.9), SignalSlope the ramps' slope scale (0: 0.01). Signals says how
	// they are drawn.
	Signal      string
	SignalDecay float64
	SignalSlope float64
}

// Run is one method on one scalar problem: its trace and the curious
// coalition's estimate of the target's x_i(0) (from that trace).
type Run func(p *consensus.Problem, o Params) (*consensus.Trace, func(consensus.Curious) float64, error)

// Method is a row of the table.
type Method struct {
	Name string
	// DP methods report their ε with every record.
	DP bool
	// Dynamic methods track the time-varying average of reference signals
	// (Problem.Ref, built by Signals) instead of the average of fixed
	// initial values.
	Dynamic bool
	// Takes are the [consensus] keys the method reads beyond the common
	// ones (method, dim, the initial values, colluders, target).
	Takes []string
	Run   Run
}

var (
	dpKeys     = []string{"epsilon", "sensitivity"}
	signalKeys = []string{"signal", "signal_decay", "signal_slope"}
)

// methods is the table: one row per method.
var methods = []Method{
	{"plain", false, false, nil, func(p *consensus.Problem, _ Params) (*consensus.Trace, func(consensus.Curious) float64, error) {
		t, err := consensus.Plain(p)
		return t, func(c consensus.Curious) float64 { return c.RecoverPlain(t) }, err
	}},
	{"state_decomposition", false, false, nil, func(p *consensus.Problem, _ Params) (*consensus.Trace, func(consensus.Curious) float64, error) {
		s := consensus.StateDecomposition{}
		t, err := s.Run(p)
		return t, func(c consensus.Curious) float64 { return c.RecoverDecomp(p, s, t) }, err
	}},
	{"offsets", false, false, nil, func(p *consensus.Problem, _ Params) (*consensus.Trace, func(consensus.Curious) float64, error) {
		t, err := consensus.Offsets{}.Run(p)
		return t, func(c consensus.Curious) float64 { return c.RecoverOffsets(p, t) }, err
	}},
	{"paillier", false, false, []string{"paillier_bits"}, func(p *consensus.Problem, o Params) (*consensus.Trace, func(consensus.Curious) float64, error) {
		e := consensus.Encrypted{Bits: o.Bits}
		t, err := e.Run(p)
		return t, func(c consensus.Curious) float64 { return c.RecoverEncrypted(p, e, t) }, err
	}},
	{"dp_laplace_huang", true, false, append(slices.Clone(dpKeys), "decay"), func(p *consensus.Problem, o Params) (*consensus.Trace, func(consensus.Curious) float64, error) {
		t, err := consensus.DPHuang(p, o.laplace())
		return t, func(c consensus.Curious) float64 { return c.RecoverDP(t) }, err
	}},
	{"dp_laplace_nozari", true, false, append(slices.Clone(dpKeys), "decay"), func(p *consensus.Problem, o Params) (*consensus.Trace, func(consensus.Curious) float64, error) {
		t, err := consensus.DPNozari(p, o.laplace())
		return t, func(c consensus.Curious) float64 { return c.RecoverDP(t) }, err
	}},
	{"dp_gossip", true, false, append(slices.Clone(dpKeys), "randomized"), func(p *consensus.Problem, o Params) (*consensus.Trace, func(consensus.Curious) float64, error) {
		t, err := consensus.GaussianGossip{Epsilon: o.Epsilon, Delta: o.Sensitivity, Randomized: o.Randomized}.Run(p)
		return t, func(c consensus.Curious) float64 { return c.RecoverDP(t) }, err
	}},
	// Push-sum runs on any strongly connected graph; a config's graphs are
	// undirected, which push-sum takes as a symmetric digraph.
	{"push_sum", false, false, nil, func(p *consensus.Problem, _ Params) (*consensus.Trace, func(consensus.Curious) float64, error) {
		t, err := consensus.PushSum(p)
		return t, func(c consensus.Curious) float64 { return c.RecoverPushSum(t) }, err
	}},
	{"push_sum_decomposition", false, false, nil, func(p *consensus.Problem, _ Params) (*consensus.Trace, func(consensus.Curious) float64, error) {
		t, err := consensus.PushSumDecomposition{}.Run(p)
		return t, func(c consensus.Curious) float64 { return c.RecoverPushSumDecomp(p, t) }, err
	}},
	// The dynamic methods' secret is r_i(0), the first reference (the
	// coalition's estimate of it, as for x_i(0) above).
	{"dynamic_plain", false, true, signalKeys, func(p *consensus.Problem, _ Params) (*consensus.Trace, func(consensus.Curious) float64, error) {
		t, err := consensus.PlainDynamic(p)
		return t, func(c consensus.Curious) float64 { return c.RecoverDynamicPlain(p, t, false) }, err
	}},
	{"dynamic_dp_laplace", true, true, append(slices.Clone(dpKeys), signalKeys...), func(p *consensus.Problem, o Params) (*consensus.Trace, func(consensus.Curious) float64, error) {
		t, err := consensus.DynamicDP{Epsilon: o.Epsilon, Delta: o.Sensitivity}.Run(p)
		return t, func(c consensus.Curious) float64 { return c.FirstMessage(t) }, err
	}},
	{"dynamic_state_decomposition", false, true, signalKeys, func(p *consensus.Problem, _ Params) (*consensus.Trace, func(consensus.Curious) float64, error) {
		s := consensus.DynamicDecomposition{}
		t, err := s.Run(p)
		return t, func(c consensus.Curious) float64 { return c.RecoverDecomp(p, s.StateDecomposition, t) }, err
	}},
}

func (o Params) laplace() consensus.LaplaceDP {
	return consensus.LaplaceDP{Epsilon: o.Epsilon, Delta: o.Sensitivity, Q: o.Decay}
}

// Names lists the methods, in table order.
func Names() []string {
	out := make([]string, len(methods))
	for i, m := range methods {
		out[i] = m.Name
	}
	return out
}

// Lookup returns the method of that name.
func Lookup(name string) (Method, bool) {
	i := slices.IndexFunc(methods, func(m Method) bool { return m.Name == name })
	if i < 0 {
		return Method{}, false
	}
	return methods[i], true
}

// MethodKeys are the method-specific keys of every row, each once.
func MethodKeys() []string {
	var out []string
	for _, m := range methods {
		out = append(out, m.Takes...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
