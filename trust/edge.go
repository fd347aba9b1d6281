package trust

import (
	"cmp"
	"math"
)

// Edge is an undirected link between two nodes, U < V.
type Edge struct {
	U, V uint32
}

// MakeEdge returns the edge between a and b in canonical order.
func MakeEdge(a, b uint32) Edge {
	if a > b {
		a, b = b, a
	}
	return Edge{a, b}
}

func compareEdges(a, b Edge) int {
	if c := cmp.Compare(a.U, b.U); c != 0 {
		return c
	}
	return cmp.Compare(a.V, b.V)
}

// WitnessWeight is ψ = T_topo(source) exp(-ξ hop) (Algorithm 2, Eq. 2): a
// claim counts more when its source is trusted and it travelled fewer hops.
// (The paper's indicators of a valid signature and a fresh version are
// applied before: a claim failing them never reaches a pool.)
func WitnessWeight(trust, xi float64, hop uint8) float64 {
	return trust * math.Exp(-xi*float64(hop))
}

// Pools are the witness evidence about one edge: the summed weights of the
// witnesses whose current claim lists it (support, W+) and of those, among
// its endpoints, whose current claim omits it (opposition, W-), with the
// number of distinct witnesses on each side.
type Pools struct {
	Support, Oppose      float64
	Supporters, Opposers int
	// Paths counts the internally node-disjoint known paths the support
	// arrived by (direct copies, and one per forwarder of one-hop copies);
	// VerifiedSupport and VerifiedOppose say whether a verified witness is
	// on that side (Rules).
	Paths                           int
	VerifiedSupport, VerifiedOppose bool
}

// Confidence is χ = S+ / (S+ + S- + ε) (Eq. 5); 0 without any witness.
func (p Pools) Confidence(eps float64) float64 {
	return p.Support / (p.Support + p.Oppose + eps)
}

// Decide applies the acceptance rule of Algorithm 2 to an edge that is
// (inView) or is not in the trusted view, and returns whether it is in the
// view afterwards:
//
//   - an edge enters when χ >= τ_add and at least m distinct first-hop
//     witnesses support it;
//   - it leaves when 1 - χ >= τ_add and at least m distinct witnesses oppose
//     it, or when no current witness supports it any more (its evidence
//     expired; package doc, "Trusted view").
func (p Pools) Decide(inView bool, c *Config) bool {
	chi := p.Confidence(c.Epsilon)
	if !inView {
		return chi >= c.TauAdd && p.Supporters >= c.MinWitnesses &&
			(c.Rules.DisjointPaths == 0 || p.Paths >= c.Rules.DisjointPaths+1)
	}
	if p.Supporters == 0 {
		return false
	}
	return !(1-chi >= c.TauAdd && p.Opposers >= c.MinWitnesses)
}

// severe reports whether the pools reject an edge outright: χ < 1 - τ_add,
// the threshold of a severe conflict (evidence z).
func (p Pools) severe(c *Config) bool {
	return p.Confidence(c.Epsilon) < 1-c.TauAdd
}
