package experiment

import (
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// TestEveryStrategySurvivesSilentNeighbours: what a peer does not send
// cannot stop a node. Every strategy of the registry, with an f where it
// takes one (robust with multi-Krum, which needs 2f + 3 inputs), runs
// rounds on a complete graph of six nodes in which neighbours go silent:
// one, then two, then every neighbour of node 0, then half of each node's
// messages; every node closes every round (a rule left with too few
// inputs keeps the node's own model and says so).
func TestEveryStrategySurvivesSilentNeighbours(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a small experiment per strategy")
	}
	const nodes = 6
	lost := func(r, from, to int) bool {
		switch r {
		case 0:
			return from == 1
		case 1:
			return from == 1 || from == 2
		case 2:
			return to == 0 // node 0 hears nobody
		case 3:
			return (from+to+r)%2 == 0
		}
		return false
	}
	for _, row := range strategy.Registry() {
		t.Run(row.Name, func(t *testing.T) {
			c := config.Default()
			c.Nodes, c.Rounds, c.Data.Samples = nodes, 5, 600
			c.Model.Kind = "logreg"
			c.Strategy.Name = row.Name
			switch row.Name {
			case "dmtt", "murmura":
				c.Model.Head = "evidential"
			case "robust":
				c.Strategy.Rule = "multi_krum"
			case "rdpfl":
				c.Strategy.Rule = "trimmed_mean"
			}
			if row.F {
				c.Strategy.F = config.FCount(1)
			}
			s := validSetup(t, c)
			keys := wire.NewSeedKeys(c.Seed, c.Nodes)
			ns := make([]*node.Node, nodes)
			for i := range ns {
				n, err := s.BuildNode(i, keys)
				if err != nil {
					t.Fatal(err)
				}
				ns[i] = n
			}
			runRoundsLosing(t, ns, 0, c.Rounds, lost)
		})
	}
}
