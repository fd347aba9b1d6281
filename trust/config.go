package trust

import (
	"fmt"
	"math"

	"github.com/trellis-fl/trellis/wire"
)

// Config holds every parameter of the topology-trust layer. DefaultConfig
// returns the values of the DMTT paper; the fields name the paper's symbols.
type Config struct {
	// Link reliability (the DMTT paper, §III-D): p <- (1-Rho) p + Rho ack,
	// starting at InitialReliability; a direct neighbor silent for Timeout
	// rounds leaves N_dir.
	Rho                float64 // ρ = 0.1
	InitialReliability float64 // 0.5
	Timeout            int     // 3 rounds

	// Claim processing (Algorithm 2).
	Xi           float64 // ξ = 0.5: witness weight ψ = T exp(-ξ hop)
	TauAdd       float64 // τ_add = 0.6
	MinWitnesses int     // m = 2 distinct first-hop witnesses
	Epsilon      float64 // ε = 1e-9 in χ = S+ / (S+ + S- + ε)
	// MaxAge is how many rounds old a claim may be and still be fresh: older
	// claims are refused as stale and stop counting as witnesses. The paper is
	// silent; the default H = 2 lets a claim forwarded H times, one round per
	// hop, still arrive fresh (package doc, "Freshness").
	MaxAge int
	// MaxNeighbors bounds the neighbor list of a claim, as wire.Limits does:
	// trust does work per listed edge. Default 4096, wire's default.
	MaxNeighbors int

	// Controlled forwarding (Algorithm 3) and the per-source rate limit.
	TauFwd   float64 // τ_fwd = 0.3
	Budget   int     // 2 claims per source per round
	HopLimit int     // H = 2

	// Source trust (Algorithm 4).
	Lambda float64 // λ = 0.9 forgetting factor
	Wd     float64 // 1: direct confirmations d
	Wc     float64 // 0.5: corroborated claims c
	Wf     float64 // 0.25: fresh, internally consistent claims f
	Wx     float64 // 1: contradictions with direct observation x
	Wq     float64 // 1: stale, replayed, invalid or over-budget claims q
	Ws     float64 // 1: severe conflicts with the committed view z
	Floor  float64 // 0.01: α and β never fall below it
	Eta    float64 // η = 5 uncertainty penalty
	TauU   float64 // τ_U = 0.3 uncertainty allowance

	// Screening of direct neighbors (§IV-E step 2): reachable means
	// p >= MinReliability and T_topo >= TauTrust.
	MinReliability float64 // 0.1
	TauTrust       float64 // τ_trust = 0.25

	// Rules are the evidence rules that keep a coalition from earning
	// evidence (package doc, "Evidence rules"). The zero value
	// is the DMTT paper's protocol; ScreenRules returns the full set.
	Rules Rules

	// Claims is the claim form (package doc, "Signed edge events"):
	// ClaimsLists ("lists"; "" means the same) is the paper's whole-list
	// claim every round; ClaimsEvents ("events") the paper's signed edge
	// events with bilateral attestation and a periodic digest (§III-D,
	// §IV-A). DigestEvery and OneSided apply to the events form only.
	Claims string
	// DigestEvery D: in the events form a node sends its whole-list claim
	// (the digest) at its first round and every D rounds after. Default 5.
	DigestEvery int
	// OneSided is the weight of a statement only one endpoint signed (a
	// one-sided event, a digest's entry) relative to a bilateral one
	// (§IV-A: "One-sided claims are allowed but start with lower
	// confidence"). Default 1/2: one of the two signatures an attested
	// statement carries (package doc, "Signed edge events").
	OneSided float64

	// Cache, if set, answers claim-signature verifications already made
	// (by this node or, in a simulator, by any node sharing it); results
	// are the same without it (wire.VerifyCache).
	Cache *wire.VerifyCache
}

// Rules switch the evidence rules that do not reward a coalition (each
// cites the paper in the package doc, "Evidence rules"). With all
// of them off the layer is the paper's protocol as written.
type Rules struct {
	// IndependentPaths: a witness counts in the pools of an edge only with
	// a copy of its current claim observed directly (delivered by its
	// source) or delivered by a forwarder that is not an endpoint of the
	// edge, one hop from the source, so the whole path is known (§IV-B,
	// "first-hop witnesses").
	IndependentPaths bool
	// Conflict: a source in conflict with the node's own observations
	// (more self-inclusion contradictions x than confirmations d, ever)
	// weighs nothing in the pools, corroborates nothing, and earns no f or
	// c (§IV-D: its claims are not "consistent over time").
	Conflict bool
	// Quorum: third-party evidence comes only from verified witnesses —
	// peers the node confirmed directly (d >= 1, d > x) with T_topo >=
	// TauTrust. c needs a verified corroborator; a claim that omits an
	// edge at its source which a verified witness attests and the pools
	// decide for (χ >= τ_add) is "contradicted by a trusted quorum" (z,
	// §IV-D); a severe conflict (z) is charged only when a verified
	// witness opposes the edge.
	Quorum bool
	// Unhopped: under Quorum, a dispute between the two endpoints of an
	// edge is decided by their trust without the hop discount (State's
	// decides; the trade-off is measured in docs/results/dmtt.md).
	Unhopped bool
	// DisjointPaths is the high-assurance mode (§IV-B): with k > 0 an edge
	// enters the view only when its support arrives through at least k+1
	// internally node-disjoint paths (known paths only: direct copies and
	// one-hop forwards, each forwarder one path). 0: off.
	DisjointPaths int
}

// ScreenRules returns every evidence rule on, without the high-assurance
// mode.
func ScreenRules() Rules { return Rules{IndependentPaths: true, Conflict: true, Quorum: true} }

// DefaultConfig returns the parameters of the DMTT paper, with its evidence
// rules as written (zero Rules). Experiment configs run ScreenRules unless
// they ask for the paper's (trust.rules = "spec" in package config): with
// the rules as written omission liars keep trust (package doc, "Evidence
// rules").
func DefaultConfig() Config {
	return Config{
		Rho: 0.1, InitialReliability: 0.5, Timeout: 3,
		Xi: 0.5, TauAdd: 0.6, MinWitnesses: 2, Epsilon: 1e-9, MaxAge: 2, MaxNeighbors: 4096,
		TauFwd: 0.3, Budget: 2, HopLimit: 2,
		Lambda: 0.9, Wd: 1, Wc: 0.5, Wf: 0.25, Wx: 1, Wq: 1, Ws: 1, Floor: 0.01,
		Eta: 5, TauU: 0.3,
		MinReliability: 0.1, TauTrust: 0.25,
		DigestEvery: 5, OneSided: 0.5,
	}
}

// maxWitnesses is the most first-hop witnesses an edge can have: a claim is
// its source's own neighbor list, so only the two endpoints speak of an edge
// first-hand (package doc, "Witnesses").
const maxWitnesses = 2

// maxHop is the largest hop a claim body can carry (one byte).
const maxHop = 255

// Validate reports the first parameter outside its range, naming it, its
// value and the allowed range.
func (c Config) Validate() error {
	type check struct {
		name   string
		v      float64
		lo, hi float64
		loOpen bool
	}
	checks := []check{
		{"Rho", c.Rho, 0, 1, true},
		{"InitialReliability", c.InitialReliability, 0, 1, false},
		{"Xi", c.Xi, 0, math.MaxFloat64, false},
		{"TauAdd", c.TauAdd, 0, 1, true},
		{"Epsilon", c.Epsilon, 0, 1, true},
		{"TauFwd", c.TauFwd, 0, 1, false},
		{"Lambda", c.Lambda, 0, 1, true},
		{"Wd", c.Wd, 0, math.MaxFloat64, false},
		{"Wc", c.Wc, 0, math.MaxFloat64, false},
		{"Wf", c.Wf, 0, math.MaxFloat64, false},
		{"Wx", c.Wx, 0, math.MaxFloat64, false},
		{"Wq", c.Wq, 0, math.MaxFloat64, false},
		{"Ws", c.Ws, 0, math.MaxFloat64, false},
		{"Floor", c.Floor, 0, math.MaxFloat64, true},
		{"Eta", c.Eta, 0, math.MaxFloat64, false},
		{"TauU", c.TauU, 0, 1, false},
		{"MinReliability", c.MinReliability, 0, 1, false},
		{"TauTrust", c.TauTrust, 0, 1, false},
	}
	switch c.Claims {
	case "", ClaimsLists:
	case ClaimsEvents:
		checks = append(checks, check{"OneSided", c.OneSided, 0, 1, true})
	default:
		return fmt.Errorf("trust: Claims = %q, want %q or %q", c.Claims, ClaimsLists, ClaimsEvents)
	}
	for _, k := range checks {
		bad := math.IsNaN(k.v) || k.v > k.hi || k.v < k.lo || (k.loOpen && k.v == k.lo)
		if bad {
			open := "["
			if k.loOpen {
				open = "("
			}
			return fmt.Errorf("trust: %s = %v, want a value in %s%v, %v]", k.name, k.v, open, k.lo, k.hi)
		}
	}
	ints := []struct {
		name   string
		v      int
		lo, hi int
	}{
		{"Timeout", c.Timeout, 1, math.MaxInt32},
		{"MinWitnesses", c.MinWitnesses, 1, maxWitnesses},
		{"MaxAge", c.MaxAge, 0, math.MaxInt32},
		{"MaxNeighbors", c.MaxNeighbors, 0, 1 << 24},
		{"Budget", c.Budget, 1, math.MaxInt32},
		{"HopLimit", c.HopLimit, 0, maxHop},
		{"Rules.DisjointPaths", c.Rules.DisjointPaths, 0, 1 << 16},
	}
	if c.events() {
		ints = append(ints, struct {
			name   string
			v      int
			lo, hi int
		}{"DigestEvery", c.DigestEvery, 1, 1 << 16})
	}
	for _, k := range ints {
		if k.v < k.lo || k.v > k.hi {
			why := ""
			if k.name == "MinWitnesses" {
				why = " (a claim is its source's neighbor list, so an edge has at most 2 first-hand witnesses: its endpoints)"
			}
			return fmt.Errorf("trust: %s = %d, want %d..%d%s", k.name, k.v, k.lo, k.hi, why)
		}
	}
	return nil
}
