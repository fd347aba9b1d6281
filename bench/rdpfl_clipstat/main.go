// Command rdpfl_clipstat runs the rdpfl variant of the R-DPFL Table II quick
// preset at λ = 1, seed 1, for every attack (or the one named) and counts,
// over the honest nodes' rounds, how often the adaptive deviation clip and
// the G_d bound changed d, and how often the Barzilai–Borwein prediction
// was in use — what the ablation table cannot show when the variants tie:
//
//	go run ./bench/rdpfl_clipstat [ATTACK]
package main

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/configs"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/strategy"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	b, _ := configs.Read("rdpfl/table2-attacks-quick")
	c, err := config.Parse(b, "rdpfl/table2-attacks-quick")
	if err != nil {
		return err
	}
	runs, _, err := c.Expand()
	if err != nil {
		return err
	}
	for _, r := range runs {
		if r.Params["variant"] != "rdpfl" || r.Params["strategy.options.lambda"] != "1" || r.Config.Seed != 1 {
			continue
		}
		if len(os.Args) > 1 && r.Params["adversary.attack"] != os.Args[1] {
			continue
		}
		tt, err := experiment.LoadData(r.Config)
		if err != nil {
			return err
		}
		s, err := experiment.SetupOf(r.Config, tt)
		if err != nil {
			return err
		}
		var mu sync.Mutex
		var made []*strategy.RDPFL
		mk := s.Strategy
		// Setup makes one strategy per node, in node-id order.
		s.Strategy = func() strategy.Strategy {
			st := mk()
			mu.Lock()
			made = append(made, st.(*strategy.RDPFL))
			mu.Unlock()
			return st
		}
		var n, clipped, gd, bb int
		var cfSum float64
		err = s.Run(context.Background(), metrics.SinkFunc(func(rd *metrics.Round) error {
			for i, st := range made {
				if rd.Nodes[i].Byzantine {
					continue
				}
				l := st.Last()
				if l.Empty {
					continue
				}
				n++
				cfSum += l.ClipFactor
				if l.ClipFactor < 1 {
					clipped++
				}
				if l.GdFactor < 1 {
					gd++
				}
				if l.Predicted == "bb" {
					bb++
				}
			}
			return nil
		}))
		if err != nil {
			return err
		}
		fmt.Printf("%-10s honest node-rounds %d: adaptive clip acted %d (%.1f %%, mean factor %.3f), G_d acted %d, BB prediction %d\n",
			r.Params["adversary.attack"], n, clipped, 100*float64(clipped)/float64(max(n, 1)), cfSum/float64(max(n, 1)), gd, bb)
	}
	return nil
}
