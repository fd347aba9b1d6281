package experiment

import (
	"encoding/binary"
	"fmt"
	"github.com/trellis-fl/trellis/node/secagg"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/node"
)

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
	if !c.StaticTopology() {
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
