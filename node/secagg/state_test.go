package secagg

import (
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/node/trustlayer"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

// Secure aggregation: the next round's group sum of restored nodes is the
// original's.
func TestSnapshotRestoreSecAggNode(t *testing.T) {
	for _, cfg := range []Config{{Threshold: 2}, {Threshold: 2, Across: true}} {
		mk := nodetest.NewNet(nodetest.Circulant(5, 1), func() strategy.Strategy { return &strategy.FedAvg{} }, func(i int, dir *wire.Directory, c *node.Config) {
			l, err := New(i, c.Model, dir, seed.Seeded(5), cfg)
			if err != nil {
				panic(err)
			}
			c.Layers = []node.Layer{l}
		})
		orig, _ := nodetest.RestartIsInvisible(t, mk)
		if s := nodetest.SecAgg(orig[0]); s == nil || s.Fallback || s.Survivors != 2 {
			t.Fatalf("%+v: the group sum of the round: %+v", cfg, s)
		}
	}
}

// Secure aggregation inside the trust layer's screened peers: the
// restored secure-aggregation layer reads the restored trust.
func TestSnapshotRestoreScreenedSecAggNode(t *testing.T) {
	tc := trust.DefaultConfig()
	mk := nodetest.NewNet(nodetest.Circulant(5, 1), func() strategy.Strategy { return &strategy.FedAvg{} }, func(i int, dir *wire.Directory, c *node.Config) {
		l, err := New(i, c.Model, dir, seed.Seeded(5), Config{Threshold: 2, Screened: true})
		if err != nil {
			panic(err)
		}
		tl, err := trustlayer.New(c.Identity, dir, tc)
		if err != nil {
			panic(err)
		}
		c.Layers = []node.Layer{tl, l}
	})
	nodetest.RestartIsInvisible(t, mk)
}

// Paillier: the node's key, which lives across rounds, is restored.
func TestSnapshotRestorePaillierNode(t *testing.T) {
	mk := nodetest.NewNet(nodetest.Circulant(4, 1, 2), func() strategy.Strategy { return &strategy.FedAvg{} }, func(i int, dir *wire.Directory, c *node.Config) {
		l, err := NewPaillier(i, c.Model, dir, seed.Seeded(5), PaillierConfig{KeyBits: 512, ScaleBits: 16, Bound: 16, Headroom: 4})
		if err != nil {
			panic(err)
		}
		c.Layers = []node.Layer{l}
	})
	nodetest.RestartIsInvisible(t, mk)
}

// A Paillier layer takes the saved key in place of the one it drew, and a
// secure-aggregation layer refuses the state of another configuration,
// naming it.
func TestRestoreTakesTheSavedKeyAndConfiguration(t *testing.T) {
	ids, dir := wire.SimIdentities(5, 4)
	m := nodetest.NewNode(t, 0, ids, dir, strategy.Local{}).Model()
	pc := PaillierConfig{KeyBits: 512, ScaleBits: 16, Bound: 16, Headroom: 4}
	pl, err := NewPaillier(0, m, dir, seed.Seeded(1), pc)
	if err != nil {
		t.Fatal(err)
	}
	pl2, err := NewPaillier(0, m, dir, seed.Seeded(2), pc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := pl.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := pl2.Restore(st); err != nil || pl2.key.N.Cmp(pl.key.N) != 0 || pl2.pack.Per != pl.pack.Per {
		t.Errorf("a Paillier layer restored with another's key keeps its own (%v)", err)
	}
	sec, _ := New(0, m, dir, seed.Seeded(1), Config{Threshold: 2})
	sec3, _ := New(0, m, dir, seed.Seeded(1), Config{Threshold: 3})
	st, err = sec.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := sec3.Restore(st); err == nil || !strings.Contains(err.Error(), "threshold 2") {
		t.Errorf("a threshold-2 state into a threshold-3 layer: %v", err)
	}
}
