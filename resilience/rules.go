package resilience

import (
	"fmt"

	"github.com/trellis-fl/trellis/aggregate"
)

// Chains are the pre-aggregator chains the standard table lists after the
// plain rules: NNM before Krum, bucketing before the median,
// adaptive clipping before the trimmed mean.
var Chains = []string{"nnm+krum", "bucketing+median", "arc+trimmed_mean"}

// StandardRules returns every rule of aggregate.Names() and then Chains,
// each tolerating cfg.F faulty inputs (the pre-aggregators nnm and arc
// too), the bucketing permutation seeded from cfg.Seed: the rows of
// `trellis bench rules`.
func StandardRules(cfg Config) ([]aggregate.Rule, error) {
	var rs []aggregate.Rule
	for _, name := range append(aggregate.Names(), Chains...) {
		s, err := aggregate.ParseSpec(name)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", name, err)
		}
		p := aggregate.Params{F: cfg.F}
		if s.Uses("bucketing") {
			p.Seed = cfg.Seed
		}
		r, err := s.New(p)
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", name, err)
		}
		rs = append(rs, r)
	}
	return rs, nil
}
