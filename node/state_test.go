package node_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/dplayer"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/node/secagg"
	"github.com/trellis-fl/trellis/node/trustlayer"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

// A plain node carries its optimizer's momentum, its strategy's state
// (Ditto's global model) and the second model's optimizer (Ditto's) and
// the training stream's position.
func TestSnapshotRestorePlainNode(t *testing.T) {
	withMomentum := func(_ int, _ *wire.Directory, c *node.Config) {
		n := c.Model.NumParams()
		c.Optimizer, _ = nn.NewOptimizer(nn.OptimizerSpec{LR: 0.1, Momentum: 0.9}, n)
		c.NewOptimizer = func() (nn.Optimizer, error) {
			return nn.NewOptimizer(nn.OptimizerSpec{LR: 0.1, Momentum: 0.9}, n)
		}
	}
	mk := nodetest.NewNet(nodetest.Circulant(3, 1), func() strategy.Strategy { return &strategy.Ditto{Lambda: 0.1} }, withMomentum)
	nodetest.RestartIsInvisible(t, mk)

	// Without the optimizer's momentum the next round differs: the
	// comparison above can fail.
	a, b := mk(t), mk(t)
	a.Round(0)
	a.Round(1)
	for i, n := range a.Nodes {
		s, err := n.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		s.Optimizer = make([]float32, len(s.Optimizer))
		if err := b.Nodes[i].Restore(s); err != nil {
			t.Fatal(err)
		}
	}
	a.Round(2)
	b.Round(2)
	if reflect.DeepEqual(a.Nodes[0].Model().Params(), b.Nodes[0].Model().Params()) {
		t.Fatal("the momentum made no difference to the next round")
	}
}

// trustNode is node id with the trust layer and no strategy of its own.
func trustNode(t *testing.T, id int, ids []*wire.Identity, dir *wire.Directory) *node.Node {
	t.Helper()
	tl, err := trustlayer.New(ids[id], dir, trust.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return nodetest.NewNode(t, id, ids, dir, strategy.Local{}, func(c *node.Config) { c.Layers = []node.Layer{tl} })
}

// Restore refuses, naming what differs, a snapshot that does not fit the
// node, and a node that already ran.
func TestRestoreRefusesWhatDoesNotFit(t *testing.T) {
	ids, dir := wire.SimIdentities(3, 3)
	a := trustNode(t, 0, ids, dir)
	nodetest.Begin(t, 0, node.Neighborhood{In: []int{0, 1, 2}}, a)
	nodetest.Outbox(t, a)
	if _, err := a.Snapshot(); err == nil || !strings.Contains(err.Error(), "Snapshot out of order") {
		t.Errorf("a snapshot inside a round: %v", err)
	}
	nodetest.End(t, a, node.EndOptions{})
	good, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(s *node.Snapshot)
		node func() *node.Node
		want string
	}{
		{"another node", func(s *node.Snapshot) { s.Node = 1 }, nil, "a snapshot of node 1"},
		{"another model", func(s *node.Snapshot) { s.Params = s.Params[1:] }, nil, "parameters, the model"},
		{"another optimizer", func(s *node.Snapshot) { s.Optimizer = []float32{1} }, nil, "optimizer"},
		{"no trust layer", nil, func() *node.Node { return nodetest.NewNode(t, 0, ids, dir, strategy.Local{}) }, "the snapshot has 1 layers ([trust]), the node 0 (none)"},
		{"a truncated layer", func(s *node.Snapshot) { s.Layers[0].State = s.Layers[0].State[:len(s.Layers[0].State)-1] }, nil, "layer trust"},
		{"strategy state", func(s *node.Snapshot) { s.Strategy = []byte{1} }, nil, "strategy (local) cannot take"},
		{"a ran node", nil, func() *node.Node { return a }, "restore into a fresh node"},
	} {
		s := good
		s.Params, s.Layers = append([]float32(nil), good.Params...), []node.LayerState{{good.Layers[0].Name, append([]byte(nil), good.Layers[0].State...)}}
		if c.edit != nil {
			c.edit(&s)
		}
		n := trustNode(t, 0, ids, dir)
		if c.node != nil {
			n = c.node()
		}
		if err := n.Restore(s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// Each layer's Restore refuses another layer's state and a damaged one,
// without panicking.
func TestLayerRestoreRefusesOtherStates(t *testing.T) {
	ids, dir := wire.SimIdentities(5, 4)
	m := nodetest.NewNode(t, 0, ids, dir, strategy.Local{}).Model()
	dp, _ := dplayer.New(0, m, seed.Seeded(1), 1, 1, 1e-3)
	sdp, _ := dplayer.NewSample(0, m, seed.Seeded(1), nn.DPConfig{Clip: 1, Multiplier: 1}, 1e-3)
	sec, _ := secagg.New(0, m, dir, seed.Seeded(1), secagg.Config{Threshold: 2})
	pl, err := secagg.NewPaillier(0, m, dir, seed.Seeded(1), secagg.PaillierConfig{KeyBits: 512, ScaleBits: 16, Bound: 16, Headroom: 4})
	if err != nil {
		t.Fatal(err)
	}
	tl, _ := trustlayer.New(ids[0], dir, trust.DefaultConfig())
	layers := []node.Layer{dp, sdp, sec, pl, tl}
	states := make([][]byte, len(layers))
	for i, l := range layers {
		if states[i], err = l.Snapshot(); err != nil {
			t.Fatal(err)
		}
	}
	for i, l := range layers {
		if err := l.Restore(states[i]); err != nil {
			t.Errorf("%s: its own state: %v", l.Name(), err)
		}
		for j, s := range states {
			bothDP := strings.HasPrefix(l.Name(), "dp") && strings.HasPrefix(layers[j].Name(), "dp")
			if j != i && !bothDP { // the DP layers' states are both an accountant's
				if err := l.Restore(s); err == nil {
					t.Errorf("%s took %s's state", l.Name(), layers[j].Name())
				}
			}
		}
		for k := range len(states[i]) {
			_ = l.Restore(states[i][:k]) // no panic
		}
	}
}
