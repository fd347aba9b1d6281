package dplayer

import (
	"testing"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// A node-level DP node's accountant goes on from the saved releases: ε
// after the restored node's next round is the original's, three releases
// in, not one.
func TestSnapshotRestoreDPNode(t *testing.T) {
	mk := nodetest.NewNet(nodetest.Circulant(3, 1), func() strategy.Strategy { return &strategy.FedAvg{} }, func(i int, _ *wire.Directory, c *node.Config) {
		l, err := New(i, c.Model, seed.Seeded(c.Seed), 1, 1, 1e-3)
		if err != nil {
			panic(err)
		}
		c.Layers = []node.Layer{l}
	})
	orig, _ := nodetest.RestartIsInvisible(t, mk)
	if p := nodetest.Privacy(orig[0]); p == nil || p.Releases != 3 {
		t.Fatalf("privacy after three rounds: %+v, want 3 releases", p)
	}
	fresh := mk(t)
	if p := nodetest.Privacy(fresh.Round(2)[0]); p.Epsilon >= nodetest.Privacy(orig[0]).Epsilon {
		t.Fatalf("ε of one release %v, of three %v: the check cannot tell a reset", p.Epsilon, nodetest.Privacy(orig[0]).Epsilon)
	}
}

// Sample-level DP (DP-SGD): the accountant of the steps continues too.
func TestSnapshotRestoreSampleDPNode(t *testing.T) {
	mk := nodetest.NewNet(nodetest.Circulant(3, 1), func() strategy.Strategy { return &strategy.FedAvg{} }, func(i int, _ *wire.Directory, c *node.Config) {
		l, err := NewSample(i, c.Model, seed.Seeded(c.Seed), nn.DPConfig{Clip: 1, Multiplier: 1}, 1e-3)
		if err != nil {
			panic(err)
		}
		c.Layers, c.Trainer = []node.Layer{l}, l
	})
	orig, _ := nodetest.RestartIsInvisible(t, mk)
	if p := nodetest.Privacy(orig[0]); p == nil || p.Releases != 3 {
		t.Fatalf("privacy after three rounds: %+v, want 3 steps", p)
	}
}
