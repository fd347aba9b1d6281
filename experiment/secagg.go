package experiment

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/secagg"
)

// SecAggConfig is the [secagg] section: secure aggregation inside each
// node's group (secagg.Layer; spec/privacy.md "Secure aggregation",
// docs/methods/secure-aggregation.md).
//
//	mode = "none" | "neighbourhood" | "screened"
//
// "neighbourhood": a node's group is its in-neighbours of the round;
// "screened": its topology-screened neighbours (needs the trust layer:
// DMTT's screened collaborator candidates). threshold is t (≥ 2): a group
// of n members needs n ≥ t and 2t > n, and a node whose group cannot meet
// that in a static graph is refused before the run. scale_bits is the
// fixed-point resolution (1…24, the spec's 16). across = true releases the
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
type SecAggConfig struct {
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

func defaultSecAgg() SecAggConfig {
	return SecAggConfig{Mode: "none", ScaleBits: 16, PaillierBits: 2048, Bound: 16, CKKSCiphertexts: 64}
}

func (c Config) secAggOn() bool {
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
			bad("secagg.scale_bits", s.ScaleBits, "allowed range 1 to 24 (fixed-point fraction bits; the spec's 16)")
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
		bad("secagg.scale_bits", s.ScaleBits, "allowed range 1 to 24 (fixed-point fraction bits; the spec's 16)")
	}
	if s.Mode == "screened" && !c.trustOn() {
		bad("secagg.mode", `"screened"`, "screened groups need the trust layer: strategy.name = \"dmtt\" or trust.enabled = true")
	}
	if s.Across {
		if !slices.Contains(acrossStrategies, c.Strategy.Name) || (c.Strategy.Name == "robust" && c.Strategy.Exchange == "update") {
			bad("secagg.across", true, "the strategy must send its model only (one of "+fmt.Sprint(acrossStrategies)+", robust with exchange = \"model\"): the group mean replaces it")
		}
		if c.Privacy.Mode == "node" {
			bad("secagg.across", true, "node-level DP covers the noisy model, not the group mean sent across; use across = false or privacy.mode = \"sample\"")
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

// checkSecAggGroups refuses, before the run, groups that cannot work: a
// directed graph (the aggregator relays both ways), and in a static
// topology a node whose in-neighbours are fewer than t or, for
// neighbourhood groups, at least 2t (every member of n ≥ 2t would fail the
// threshold rule). In a dynamic topology a round's too small group falls
// back at run time; only a t above every node's degree in every round is
// refused.
func (c Config) checkSecAggGroups() error {
	if c.SecAgg.Mode == "paillier" || c.SecAgg.Mode == "ckks" {
		return c.checkPaillierGroups()
	}
	if !c.secAggOn() {
		return nil
	}
	dyn, err := c.graph(c.Nodes, c.Seed)
	if err != nil {
		return err
	}
	t := c.SecAgg.Threshold
	static := c.Topology.Kind != "mobility" && c.Topology.Kind != "trace"
	rounds := c.Rounds
	if static {
		rounds = 1
	}
	maxDeg := 0
	for r := range rounds {
		g := dyn.At(r)
		if !g.Undirected() {
			return fmt.Errorf("secagg.mode = %q: topology.kind = %q gives a directed graph; secure aggregation relays through the aggregator and needs every link both ways", c.SecAgg.Mode, c.Topology.Kind)
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
			if c.SecAgg.Mode == "neighbourhood" && 2*t <= n {
				return fmt.Errorf("secagg.threshold = %d: node %d's group of %d needs t > %d (2t > n, so no two unmasking requests can both reach t)", t, i, n, n/2)
			}
		}
	}
	if t > maxDeg {
		return fmt.Errorf("secagg.threshold = %d: no node has that many neighbours in any round (at most %d)", t, maxDeg)
	}
	return nil
}

func minDegree(g interface {
	N() int
	InDegree(int) int
}) int {
	m := -1
	for i := range g.N() {
		if d := g.InDegree(i); m < 0 || d < m {
			m = d
		}
	}
	return m
}

// checkPaillierGroups refuses a directed graph and a group that could
// reveal one input to the key holder (fewer than 3 neighbours) in a static
// topology; the packing's headroom is the largest degree's.
func (c Config) checkPaillierGroups() error {
	dyn, err := c.graph(c.Nodes, c.Seed)
	if err != nil {
		return err
	}
	g := dyn.At(0)
	if !g.Undirected() {
		return fmt.Errorf("secagg.mode = \"paillier\": topology.kind = %q gives a directed graph; the relay needs every link both ways", c.Topology.Kind)
	}
	if d := minDegree(g); d < 3 && c.Topology.Kind != "mobility" && c.Topology.Kind != "trace" {
		return fmt.Errorf("secagg.mode = \"paillier\": a node has %d neighbours; a group needs 3 (the key holder would learn the other input)", d)
	}
	return nil
}

// SecAgg is the nodes' secure-aggregation setting in a Setup (nil: none).
type SecAgg = secagg.Config

// Paillier is the nodes' Paillier-relay setting in a Setup (nil: none).
type Paillier = secagg.PaillierConfig

func (c Config) secAggSetup() *SecAgg {
	if !c.secAggOn() {
		return nil
	}
	s := c.SecAgg
	return &SecAgg{Threshold: s.Threshold, ScaleBits: s.ScaleBits, Screened: s.Mode == "screened", Across: s.Across}
}

// paillierSetup is the Setup's Paillier (nil unless mode = "paillier");
// the headroom holds sums of up to every node's neighbours.
func (c Config) paillierSetup() (*Paillier, error) {
	s := c.SecAgg
	if s.Mode != "paillier" {
		return nil, nil
	}
	dyn, err := c.graph(c.Nodes, c.Seed)
	if err != nil {
		return nil, err
	}
	rounds := 1
	if c.Topology.Kind == "mobility" || c.Topology.Kind == "trace" {
		rounds = c.Rounds
	}
	maxDeg := 1
	for r := range rounds {
		g := dyn.At(r)
		for i := range g.N() {
			maxDeg = max(maxDeg, g.InDegree(i))
		}
	}
	head := 0
	for 1<<head < maxDeg {
		head++
	}
	return &Paillier{KeyBits: s.PaillierBits, ScaleBits: s.ScaleBits, Bound: s.Bound, Headroom: head}, nil
}

// addSecAgg gives node i its secure-aggregation layer, after the DP layer
// (its input is the noisy model).
func (p *plan) addSecAgg(i int, cfg *node.Config) error {
	random := cfg.Random
	if random == nil {
		random = seed.Seeded(cfg.Seed)
	}
	if max := p.s.CKKS; max > 0 {
		crs := binary.LittleEndian.AppendUint64([]byte("trellis/ckks/v1 crs"), p.s.Seed)
		l, err := secagg.NewCKKS(i, cfg.Model, crs, max)
		if err != nil {
			return fmt.Errorf("node %d: secagg.mode = \"ckks\": %w (raise secagg.ckks_ciphertexts or use a smaller model)", i, err)
		}
		cfg.Layers = append(cfg.Layers, l)
	}
	if pc := p.s.Paillier; pc != nil {
		l, err := secagg.NewPaillier(i, cfg.Model, cfg.Directory, random, *pc)
		if err != nil {
			return fmt.Errorf("node %d: paillier: %w", i, err)
		}
		cfg.Layers = append(cfg.Layers, l)
	}
	sa := p.s.SecAgg
	if sa == nil {
		return nil
	}
	l, err := secagg.New(i, cfg.Model, cfg.Directory, random, *sa)
	if err != nil {
		return fmt.Errorf("node %d: secagg: %w", i, err)
	}
	cfg.Layers = append(cfg.Layers, l)
	return nil
}
