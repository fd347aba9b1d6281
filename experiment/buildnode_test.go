package experiment

import (
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/wire"
)

// BuildNode(i) builds the same node i as the whole simulation from its
// shard alone (DMTT reads its validation samples too): same data, same
// initial model, same training.
func TestBuildNodeIsTheSimulationsNode(t *testing.T) {
	c := config.Default()
	c.Nodes, c.Rounds, c.FinalRounds, c.Data.Samples = 6, 2, 1, 600
	c.Model.Hidden = []int{16}
	c.Topology.Kind, c.Topology.K = "kregular", 3
	c.Strategy.Name = "dmtt"
	c.Model.Head = "evidential"
	s := validSetup(t, c)
	all, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	one, err := BuildNode(c, 4, wire.NewSeedKeys(c.Seed, c.Nodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	hood := node.Neighborhood{In: []int{1, 2}, InDegree: []int{3, 3}, Degree: 3}
	for _, n := range []*node.Node{all.Nodes[4], one} {
		if err := n.Begin(0, hood); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Train(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(all.Nodes[4].Model().Params(), one.Model().Params()) {
		t.Fatal("BuildNode's node 4 trains differently from the simulation's")
	}
	if _, err := BuildNode(c, 6, wire.NewSeedKeys(c.Seed, c.Nodes), nil); err == nil {
		t.Fatal("node 6 of 6 built")
	}
}
