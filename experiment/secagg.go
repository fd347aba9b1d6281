package experiment

import (
	"encoding/binary"
	"fmt"
	"github.com/trellis-fl/trellis/node/secagg"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/node"
)

// refused.
func checkSecAggGroups(c config.Config) error {
	if c.SecAgg.Mode == "paillier" || c.SecAgg.Mode == "ckks" {
		return checkPaillierGroups(c)
	}
	if !c.SecAggOn() {
		return nil
	}
	dyn, err := c.Graph()
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
func checkPaillierGroups(c config.Config) error {
	dyn, err := c.Graph()
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

func secAggSetup(c config.Config) *secagg.Config {
	if !c.SecAggOn() {
		return nil
	}
	s := c.SecAgg
	return &secagg.Config{Threshold: s.Threshold, ScaleBits: s.ScaleBits, Screened: s.Mode == "screened", Across: s.Across}
}

// paillierSetup is the Setup's Paillier (nil unless mode = "paillier");
// the headroom holds sums of up to every node's neighbours.
func paillierSetup(c config.Config) (*secagg.PaillierConfig, error) {
	s := c.SecAgg
	if s.Mode != "paillier" {
		return nil, nil
	}
	dyn, err := c.Graph()
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
	return &secagg.PaillierConfig{KeyBits: s.PaillierBits, ScaleBits: s.ScaleBits, Bound: s.Bound, Headroom: head}, nil
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
