package experiment

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/sim"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// shardSetup is a small experiment on a synthetic dataset with groups (so
// that the natural partition applies), a feature shift and a label-flip
// attacker: what a node reads beyond its values (labels, groups, shape)
// all matter.
func shardSetup(t *testing.T, method data.Method) Setup {
	tt, _, err := data.NewSynthetic(data.SyntheticConfig{Clients: 6, SamplesPerClient: 40, TestSamples: 50, Dim: 8, Classes: 3, LabelAlpha: 0.5, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	return Setup{
		Data: tt, Nodes: 6, Rounds: 2, GlobalTest: -1, Seed: 9,
		Partition:    data.PartitionConfig{Method: method, Alpha: 0.3, ClassesPerClient: 2},
		Shift:        data.ShiftConfig{Kind: data.Permute, Seed: 9},
		Model:        nn.Spec{Kind: "mlp", Input: []int{8}, Hidden: []int{5}, Classes: 3},
		Optimizer:    nn.OptimizerSpec{Name: "sgd", LR: 0.1},
		Strategy:     func() strategy.Strategy { return &strategy.FedAvg{} },
		ByzantineIDs: []int{4}, Attack: attack.LabelFlip{},
	}
}

// runWith runs b's simulation with the given nodes and returns its rounds.
func runWith(t *testing.T, b *Built, nodes []*node.Node) []*metrics.Round {
	t.Helper()
	var rs []*metrics.Round
	if err := sim.Run(t.Context(), b.Config, nodes, metrics.SinkFunc(func(r *metrics.Round) error { rs = append(rs, r); return nil })); err != nil {
		t.Fatal(err)
	}
	return rs
}

// Every node built on its shard alone (the labels of every sample, the
// values of its own: a read of any other sample panics) runs as it runs
// on the whole dataset: the simulation of the shard-built nodes has the
// records of the simulation, for each partition method.
func TestNodesOnTheirShardsRunAsOnTheDataset(t *testing.T) {
	for _, m := range []data.Method{data.Dirichlet, data.IID, data.Shards, data.Natural} {
		t.Run(string(m), func(t *testing.T) {
			s := shardSetup(t, m)
			b, err := s.Build()
			if err != nil {
				t.Fatal(err)
			}
			want := runWith(t, b, b.Nodes)
			b, err = s.Build() // fresh nodes for the sim's configuration
			if err != nil {
				t.Fatal(err)
			}
			keys := wire.NewSeedKeys(s.Seed, s.Nodes)
			nodes := make([]*node.Node, s.Nodes)
			for i := range nodes {
				own, err := s.NodeSamples(i)
				if err != nil {
					t.Fatal(err)
				}
				split := b.Splits[i]
				if all := slices.Sorted(slices.Values(slices.Concat(split.Train, split.Val, split.Test))); !slices.Equal(own, all) {
					t.Fatalf("node %d: samples %v, its splits hold %v", i, own, all)
				}
				shard, err := shardOf(s.Data, func(l *data.Dataset) ([]int32, error) {
					ls := s
					ls.Data = data.TrainTest{Train: l}
					return ls.NodeSamples(i)
				})
				if err != nil {
					t.Fatal(err)
				}
				if held := shard.Train.Stored(); held != len(own) || held >= shard.Train.Len() {
					t.Fatalf("node %d's shard holds %d samples of %d, its own are %d", i, held, shard.Train.Len(), len(own))
				}
				si := s
				si.Data = shard
				if nodes[i], err = si.BuildNode(i, keys); err != nil {
					t.Fatal(err)
				}
			}
			if got := runWith(t, b, nodes); len(got) != s.Rounds || !reflect.DeepEqual(got, want) {
				t.Errorf("the nodes on their shards ran otherwise:\n%+v\n%+v", got, want)
			}
		})
	}
}

// The plan on the labels alone is the plan on the dataset: node i's
// samples are the same; a node id outside the run is refused.
func TestNodeSamplesFromTheLabels(t *testing.T) {
	s := shardSetup(t, data.Dirichlet)
	labels := s
	labels.Data = data.TrainTest{Train: s.Data.Train.Only(nil)}
	for i := range s.Nodes {
		a, err := s.NodeSamples(i)
		if err != nil {
			t.Fatal(err)
		}
		b, err := labels.NodeSamples(i)
		if err != nil || !slices.Equal(a, b) {
			t.Errorf("node %d: %v on the dataset, %v (%v) on the labels", i, a, b, err)
		}
	}
	if _, err := s.NodeSamples(6); err == nil || !strings.Contains(err.Error(), "node 6 outside [0, 6)") {
		t.Errorf("node 6 of 6: %v", err)
	}
	c := config.Default()
	c.Nodes = 3
	if _, err := LoadNodeData(c, 3); err == nil || !strings.Contains(err.Error(), "node 3 outside [0, 3)") {
		t.Errorf("LoadNodeData node 3 of 3: %v", err)
	}
}
