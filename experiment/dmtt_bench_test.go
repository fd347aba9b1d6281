package experiment

import (
	"testing"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/sim"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/trust"
)

// BenchmarkClaimsRound100 is the protocol cost of DMTT's topology claims
// at the paper's scale: 100 local-only nodes (a tiny model, so claims
// dominate) on the DMTT paper's mobility graph (about 50 neighbors each), every
// node broadcasting its claim and forwarding, every claim message checked
// by the receiver's wire.Validator and ingested by its trust layer; 10 %
// omission liars. Reported per round, with the simulator's shared
// verification cache and without it (every receiver verifies every
// message and claim signature itself).
func BenchmarkClaimsRound100(b *testing.B) {
	for _, c := range []struct {
		name    string
		noCache bool
	}{{"cache", false}, {"no_cache", true}} {
		b.Run(c.name, func(b *testing.B) {
			s := dmttSetup(b, 100, 4, 0.1, adversary.ClaimAttack{Liar: adversary.LiarOmission}, func() strategy.Strategy { return strategy.Local{} })
			s.Pool, s.Model.Kind, s.Model.Hidden = 100*20, "logreg", nil
			tc := trust.DefaultConfig()
			s.Trust = &tc
			built, err := s.Build()
			if err != nil {
				b.Fatal(err)
			}
			cfg := built.Config
			cfg.NoMemos = c.noCache
			cfg.Rounds = 3 + b.N
			round := 0
			b.ResetTimer()
			b.StopTimer()
			err = sim.Run(b.Context(), cfg, built.Nodes, metrics.SinkFunc(func(*metrics.Round) error {
				round++
				if round == 3 {
					b.StartTimer() // after 3 warm-up rounds, forwards in flight
				}
				return nil
			}))
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}
