package config

import (
	"fmt"
	"slices"
)

// SecAgg is the [secagg] section: secure aggregation inside each
// node's group (secagg.Layer; the survey, §3.1.3 and §3.4,
// docs/methods/secure-aggregation.md).
//
//	mode = "none" | "neighbourhood" | "screened"
//
// "neighbourhood": a node's group is its in-neighbours of the round;
// "screened": its topology-screened neighbours (needs the trust layer:
// DMTT's screened collaborator candidates). threshold is t (≥ 2): a group
// of n members needs n ≥ t and 2t > n, and a node whose group cannot meet
// that in a static graph is refused before the run. scale_bits is the
// fixed-point resolution (1…24, default 16). across = true releases the
// group means and lets the strategy (a robust rule, DMTT) combine the
// neighbours' means; across = false makes the group mean the node's model,
// which is FedAvg's uniform average (strategy "fedavg").
//
// mode = "paillier" aggregates each neighbourhood through an untrusted
// relay instead (secagg.Paillier): members encrypt their packed models
// under a key holder's Paillier key (paillier_bits, ≥ 512; 2048 for real
// use), the node multiplies the ciphertexts it cannot read, the key holder
// decrypts only their product. Values must stay within ±bound.
//
// mode = "ckks": each neighbourhood under threshold CKKS (secagg.CKKS):
// a collective key per group and round, the sum computed on ciphertexts,
// decrypted only with every member's share. Not bit-reproducible (lattigo
// draws its noise from crypto/rand).
type SecAgg struct {
	Mode         string  `toml:"mode"`
	Threshold    int     `toml:"threshold"`
	ScaleBits    int     `toml:"scale_bits"`
	Across       bool    `toml:"across"`
	PaillierBits int     `toml:"paillier_bits"`
	Bound        float64 `toml:"bound"`
	// CKKSCiphertexts bounds the ciphertexts (4,096 values each) a model
	// may need under mode = "ckks"; a larger model is refused before the run.
	CKKSCiphertexts int `toml:"ckks_ciphertexts"`
}

func defaultSecAgg() SecAgg {
	return SecAgg{Mode: "none", ScaleBits: 16, PaillierBits: 2048, Bound: 16, CKKSCiphertexts: 64}
}

func (c Config) SecAggOn() bool {
	return c.SecAgg.Mode == "neighbourhood" || c.SecAgg.Mode == "screened"
}

// acrossStrategies send only their model (TagModel), which is what the
// group mean replaces.
var acrossStrategies = []string{"fedavg", "robust", "balance", "ubar", "scclip", "clipped_gossip", "afa", "murmura", "dmtt", "lightyear"}

// validateSecAgg checks the [secagg] keys.
func (c Config) validateSecAgg(bad func(key string, val any, allowed string)) {
	s := c.SecAgg
	switch s.Mode {
	case "none":
		return
	case "neighbourhood", "screened":
	case "paillier":
		if s.PaillierBits < 512 || s.PaillierBits > 8192 || s.PaillierBits%256 != 0 {
			// A multiple of 256 bits: the key goes in a key advertisement,
			// which holds whole 32-byte units (wire).
			bad("secagg.paillier_bits", s.PaillierBits, "allowed 512 to 8192, a multiple of 256 (2048 for real use)")
		}
		if !(s.Bound > 0 && s.Bound <= 1<<20) {
			bad("secagg.bound", s.Bound, "allowed range (0, 2^20]: the largest |parameter| the packing holds")
		}
		if s.ScaleBits < 1 || s.ScaleBits > 24 {
			bad("secagg.scale_bits", s.ScaleBits, "allowed range 1 to 24 (fixed-point fraction bits; default 16)")
		}
		c.encryptedMean(bad, "the Paillier relay")
		return
	case "ckks":
		if s.CKKSCiphertexts < 1 || s.CKKSCiphertexts > 4096 {
			bad("secagg.ckks_ciphertexts", s.CKKSCiphertexts, "allowed range 1 to 4096 (ciphertexts of 4,096 values a model may need)")
		}
		c.encryptedMean(bad, "CKKS")
		return
	default:
		bad("secagg.mode", fmt.Sprintf("%q", s.Mode), `want "none", "neighbourhood", "screened", "paillier" or "ckks"`)
		return
	}
	if s.Threshold < 2 {
		bad("secagg.threshold", s.Threshold, "need a whole number ≥ 2 (t of the (t, n) sharing; a group of n needs n ≥ t and 2t > n)")
	}
	if s.ScaleBits < 1 || s.ScaleBits > 24 {
		bad("secagg.scale_bits", s.ScaleBits, "allowed range 1 to 24 (fixed-point fraction bits; default 16)")
	}
	if s.Mode == "screened" && !c.TrustOn() {
		bad("secagg.mode", `"screened"`, "screened groups need the trust layer: strategy.name = \"dmtt\" or trust.enabled = true")
	}
	if s.Across {
		if !slices.Contains(acrossStrategies, c.Strategy.Name) || (c.Strategy.Name == "robust" && c.Strategy.Exchange == "update") {
			bad("secagg.across", true, "the strategy must send its model only (one of "+fmt.Sprint(acrossStrategies)+", robust with exchange = \"model\"): the group mean replaces it")
		}
		if c.Privacy.Mode == "node" || c.Privacy.Mode == "laplace_decaying" {
			bad("secagg.across", true, "privacy.mode = \""+c.Privacy.Mode+"\" covers the noisy model, not the group mean sent across; use across = false or privacy.mode = \"sample\"")
		}
	} else if c.Strategy.Name != "fedavg" {
		bad("strategy.name", fmt.Sprintf("%q", c.Strategy.Name), "secagg with across = false makes the group mean the model, which is fedavg's; set strategy.name = \"fedavg\", or across = true for a rule across the groups' means")
	} else if c.Strategy.Weighting != "uniform" {
		bad("strategy.weighting", fmt.Sprintf("%q", c.Strategy.Weighting), "secagg's group mean weighs members uniformly")
	}
}

// encryptedMean checks what the encryption modes share: no threshold, no
// across, and FedAvg's uniform mean.
func (c Config) encryptedMean(bad func(key string, val any, allowed string), what string) {
	if c.SecAgg.Across || c.SecAgg.Threshold != 0 {
		bad("secagg.mode", fmt.Sprintf("%q", c.SecAgg.Mode), what+" takes no threshold and no across")
	}
	if c.Strategy.Name != "fedavg" || c.Strategy.Weighting != "uniform" {
		bad("strategy.name", fmt.Sprintf("%q", c.Strategy.Name), what+" makes the neighbourhood's mean the model, which is fedavg's (uniform); set strategy.name = \"fedavg\"")
	}
}

// CheckSecAggGroups refuses, before the run, secure-aggregation groups
// that cannot work. It is the one rule `validate`, `run` and `launch`
// apply (experiment.Check and experiment.SetupOf call it).
//
// Every mode refuses a directed graph: the aggregator relays both ways.
// In a static topology, "neighbourhood" and "screened" refuse a node whose
// in-neighbours are fewer than t or, for neighbourhood groups, at least 2t
// (every member of n ≥ 2t would fail the threshold rule); in a dynamic one
// a round's too small group falls back at run time, and only a t above
// every node's degree in every round is refused. "paillier" and "ckks"
// refuse, in a static topology, a node with fewer than 3 neighbours: a
// group of two gives its sum to someone who holds one of the two inputs,
// or who needs one member's help to learn the other.
func (c Config) CheckSecAggGroups() error {
	mode := c.SecAgg.Mode
	switch mode {
	case "paillier", "ckks":
		return c.checkEncryptedGroups()
	}
	if !c.SecAggOn() {
		return nil
	}
	dyn, err := c.Graph()
	if err != nil {
		return err
	}
	t := c.SecAgg.Threshold
	static := c.StaticTopology()
	rounds := c.Rounds
	if static {
		rounds = 1
	}
	maxDeg := 0
	for r := range rounds {
		g := dyn.At(r)
		if !g.Undirected() {
			return fmt.Errorf("secagg.mode = %q: topology.kind = %q gives a directed graph; secure aggregation relays through the aggregator and needs every link both ways", mode, c.Topology.Kind)
		}
		for i := range g.N() {
			n := g.InDegree(i)
			maxDeg = max(maxDeg, n)
			if !static {
				continue
			}
			if n < t {
				return fmt.Errorf("secagg.threshold = %d: node %d has %d neighbours, so its group can never reach t; allowed range 2 to %d for this topology", t, i, n, minDegree(g))
			}
			if mode == "neighbourhood" && 2*t <= n {
				return fmt.Errorf("secagg.threshold = %d: node %d's group of %d needs t > %d (2t > n, so no two unmasking requests can both reach t)", t, i, n, n/2)
			}
		}
	}
	if t > maxDeg {
		return fmt.Errorf("secagg.threshold = %d: no node has that many neighbours in any round (at most %d)", t, maxDeg)
	}
	return nil
}

// checkEncryptedGroups is CheckSecAggGroups for "paillier" and "ckks"; the
// refusal names the mode asked for and what its group of two would leak.
func (c Config) checkEncryptedGroups() error {
	mode := c.SecAgg.Mode
	dyn, err := c.Graph()
	if err != nil {
		return err
	}
	g := dyn.At(0)
	if !g.Undirected() {
		return fmt.Errorf("secagg.mode = %q: topology.kind = %q gives a directed graph; the relay needs every link both ways", mode, c.Topology.Kind)
	}
	if d := minDegree(g); d < 3 && c.StaticTopology() {
		leak := "the key holder, one of the two, would learn the other's input"
		if mode == "ckks" {
			leak = "the node decrypts the sum of two models, which with either member's help is the other's"
		}
		return fmt.Errorf("secagg.mode = %q: node %d has %d neighbours; a group needs at least 3 (%s); use a topology where every node has 3 or more neighbours", mode, minDegreeNode(g), d, leak)
	}
	return nil
}

// StaticTopology says whether the graph is the same every round (every
// kind but "mobility" and "trace").
func (c Config) StaticTopology() bool {
	return c.Topology.Kind != "mobility" && c.Topology.Kind != "trace"
}

type degrees interface {
	N() int
	InDegree(int) int
}

// minDegreeNode is the first node of the smallest in-degree.
func minDegreeNode(g degrees) int {
	at := 0
	for i := range g.N() {
		if g.InDegree(i) < g.InDegree(at) {
			at = i
		}
	}
	return at
}

func minDegree(g degrees) int {
	if g.N() == 0 {
		return 0
	}
	return g.InDegree(minDegreeNode(g))
}
