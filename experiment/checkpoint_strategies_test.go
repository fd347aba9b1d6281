package experiment

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/wire"
)

// runRounds drives nodes (a complete graph) through rounds [from, to):
// every node's messages go to every other, in sender order.
func runRounds(t *testing.T, nodes []*node.Node, from, to int) {
	t.Helper()
	runRoundsLosing(t, nodes, from, to, nil)
}

// runRoundsLosing is runRounds where lost(r, from, to) loses the messages
// of round r from node from to node to (nil: none).
func runRoundsLosing(t *testing.T, nodes []*node.Node, from, to int, lost func(r, from, to int) bool) {
	t.Helper()
	n := len(nodes)
	for r := from; r < to; r++ {
		for i, nd := range nodes {
			var in, deg []int
			for j := range n {
				if j != i {
					in, deg = append(in, j), append(deg, n-1)
				}
			}
			if err := nd.Begin(r, node.Neighborhood{In: in, InDegree: deg, Degree: n - 1}); err != nil {
				t.Fatal(err)
			}
			if _, err := nd.Train(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		for {
			more := false
			outs := make([][]*wire.Message, n)
			for i, nd := range nodes {
				out, m, err := nd.Outbox()
				if err != nil {
					t.Fatal(err)
				}
				more = more || m
				outs[i] = out
			}
			for i, nd := range nodes {
				for j := range n {
					for _, m := range outs[j] {
						if j != i && (m.To == wire.Broadcast || int(m.To) == i) && (lost == nil || !lost(r, j, i)) {
							_ = nd.Step(m)
						}
					}
				}
			}
			if !more {
				break
			}
		}
		for _, nd := range nodes {
			if _, err := nd.End(node.EndOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A checkpoint after round 2 restored into freshly built nodes goes on as
// the nodes that were never stopped, bit for bit, for every strategy that
// keeps state across rounds (and FedAvg, which keeps none), DMTT with its
// trust layer.
func TestCheckpointResumesEveryStrategy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs eight small five-round experiments")
	}
	for _, name := range []string{"fedavg", "dmtt", "murmura", "rdpfl", "ditto", "afa", "gradient_tracking", "admm"} {
		t.Run(name, func(t *testing.T) {
			c := config.Default()
			c.Nodes, c.Rounds, c.Data.Samples = 4, 5, 400
			c.Model.Hidden = []int{8}
			c.Training.Momentum = 0.9
			c.Strategy.Name = name
			switch name {
			case "dmtt":
				c.Model.Head = "evidential"
			case "murmura":
				c.Model.Head = "evidential"
			case "rdpfl":
				c.Strategy.Rule = "trimmed_mean"
			}
			s := validSetup(t, c)
			keys := wire.NewSeedKeys(c.Seed, c.Nodes)
			build := func() []*node.Node {
				out := make([]*node.Node, c.Nodes)
				for i := range out {
					n, err := s.BuildNode(i, keys)
					if err != nil {
						t.Fatal(err)
					}
					out[i] = n
				}
				return out
			}
			a := build()
			runRounds(t, a, 0, 3)
			dir := t.TempDir()
			for i, n := range a {
				snap, err := n.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				st := &Checkpoint{Snapshot: snap}
				if name != "fedavg" && len(st.Strategy) == 0 {
					t.Fatalf("%s saved no strategy state", name)
				}
				if err := Save(fmt.Sprintf("%s/%d", dir, i), st); err != nil {
					t.Fatal(err)
				}
			}
			b := build()
			for i, n := range b {
				st, err := Load(fmt.Sprintf("%s/%d", dir, i))
				if err != nil {
					t.Fatal(err)
				}
				if err := n.Restore(st.Snapshot); err != nil {
					t.Fatal(err)
				}
			}
			runRounds(t, a, 3, 5)
			runRounds(t, b, 3, 5)
			for i := range a {
				if !slices.Equal(a[i].Model().Params(), b[i].Model().Params()) {
					t.Fatalf("node %d: restored from round 2's checkpoint, its model after round 4 differs", i)
				}
				sa, _ := a[i].Snapshot()
				sb, _ := b[i].Snapshot()
				if !slices.Equal(sa.Strategy, sb.Strategy) || !reflect.DeepEqual(sa.Layers, sb.Layers) {
					t.Fatalf("node %d: strategy or layer state after round 4 differs", i)
				}
			}
		})
	}
}
