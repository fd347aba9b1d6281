package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/sim"
	"github.com/trellis-fl/trellis/wire"
)

// fiveNodeRing is a small MNIST run: 5 nodes on a ring, 2 rounds, 1,500
// training samples, 300 global test samples.
const fiveNodeRing = `
name = "shared"
nodes = 5
rounds = 2
[data]
samples = 1500
[model]
hidden = [16]
[topology]
kind = "ring"
[strategy]
name = "fedavg"
[evaluation]
global_test = 300
`

// A run on the launch's shared dataset file (each node's samples stored
// together, mapped) is the run on the dataset loaded: every round's
// metrics equal; and a node given a damaged file refuses to start with
// what is wrong.
func TestSharedDataFileRunsAsTheDataset(t *testing.T) {
	c, err := config.Parse([]byte(fiveNodeRing), "shared.toml")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	path, err := writeSharedData(c, out)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(out, "cluster", SharedDataFile) {
		t.Errorf("the file is %s", path)
	}
	run := func(tt data.TrainTest) []*metrics.Round {
		s, err := experiment.SetupOf(c, tt)
		if err != nil {
			t.Fatal(err)
		}
		var rs []*metrics.Round
		if err := s.Run(t.Context(), metrics.SinkFunc(func(r *metrics.Round) error { rs = append(rs, r); return nil })); err != nil {
			t.Fatal(err)
		}
		return rs
	}
	loaded, err := experiment.LoadData(c)
	if err != nil {
		t.Fatal(err)
	}
	mapped, err := nodeData(c, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if mapped.Train.Rows == nil {
		t.Fatal("the launch's file keeps the samples in index order, not each node's together")
	}
	want, got := run(loaded), run(mapped)
	if len(got) != 2 || !reflect.DeepEqual(got, want) {
		t.Errorf("the run on the mapped file differs from the run on the dataset:\n%+v\n%+v", got, want)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := nodeData(c, path, 0); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("a truncated file: %v", err)
	}
}

// A node process without --data-file loads its shard (every label, the
// values of its own samples, streamed out of the MNIST files): the
// simulation of the nodes each built on its own shard, as each node
// process builds it, has the records of the simulation on the dataset.
func TestNodeShardsRunAsTheDataset(t *testing.T) {
	c, err := config.Parse([]byte(fiveNodeRing), "shards.toml")
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := experiment.LoadData(c)
	if err != nil {
		t.Fatal(err)
	}
	s, err := experiment.SetupOf(c, loaded)
	if err != nil {
		t.Fatal(err)
	}
	run := func(nodes func(b *experiment.Built) []*node.Node) []*metrics.Round {
		b, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		var rs []*metrics.Round
		if err := sim.Run(t.Context(), b.Config, nodes(b), metrics.SinkFunc(func(r *metrics.Round) error { rs = append(rs, r); return nil })); err != nil {
			t.Fatal(err)
		}
		return rs
	}
	want := run(func(b *experiment.Built) []*node.Node { return b.Nodes })
	got := run(func(*experiment.Built) []*node.Node {
		nodes := make([]*node.Node, c.Nodes)
		for i := range nodes {
			tt, err := nodeData(c, "", i)
			if err != nil {
				t.Fatal(err)
			}
			own, err := s.NodeSamples(i)
			if err != nil {
				t.Fatal(err)
			}
			if held := tt.Train.Stored(); held != len(own) || tt.Train.Len() != loaded.Train.Len() || tt.Test.Len() != loaded.Test.Len() {
				t.Fatalf("node %d holds %d of %d training samples (its own: %d) and %d test samples", i, held, tt.Train.Len(), len(own), tt.Test.Len())
			}
			si, err := experiment.SetupOf(c, tt)
			if err != nil {
				t.Fatal(err)
			}
			nc, err := nodeProcess(c, si, i, wire.NewSeedKeys(c.Seed, c.Nodes))
			if err != nil {
				t.Fatal(err)
			}
			nodes[i] = nc.Node
		}
		return nodes
	})
	if len(got) != 2 || !reflect.DeepEqual(got, want) {
		t.Errorf("the run of the nodes on their shards differs from the run on the dataset:\n%+v\n%+v", got, want)
	}
}
