package node

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

// restartIsInvisible runs two rounds of a network built by mk, snapshots
// every node, restores the snapshots into a second network built by mk,
// and runs the next round on both: every node's parameters and Ready must
// be the same bit for bit (the restored node is the original). It returns
// both networks' Ready of that round.
func restartIsInvisible(t *testing.T, mk func(t *testing.T) *secAggNet) (orig, restored []Ready) {
	t.Helper()
	a := mk(t)
	a.round(0)
	a.round(1)
	b := mk(t)
	for i, n := range a.nodes {
		s, err := n.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if s.Round != 1 || s.Node != i {
			t.Fatalf("node %d's snapshot is of node %d round %d, want round 1", i, s.Node, s.Round)
		}
		if err := b.nodes[i].Restore(s); err != nil {
			t.Fatal(err)
		}
		if err := b.nodes[i].Begin(1, Neighborhood{}); err == nil || !strings.Contains(err.Error(), "rounds must increase") {
			t.Fatalf("a node restored after round 1 began round 1 again: %v", err)
		}
	}
	orig, restored = a.round(2), b.round(2)
	for i := range a.nodes {
		pa, pb := a.nodes[i].Model().Params(), b.nodes[i].Model().Params()
		for k := range pa {
			if math.Float32bits(pa[k]) != math.Float32bits(pb[k]) {
				t.Fatalf("node %d, parameter %d after the next round: %v restored, %v original", i, k, pb[k], pa[k])
			}
		}
		if !reflect.DeepEqual(orig[i], restored[i]) {
			t.Fatalf("node %d's Ready of the next round:\n restored %+v\n original %+v", i, restored[i], orig[i])
		}
	}
	return orig, restored
}

// net builds a network of n nodes on adj (a ring unless given) with
// strategy st() and the changes of each.
func net(adj [][]int, st func() strategy.Strategy, each func(i int, dir *wire.Directory, c *Config)) func(t *testing.T) *secAggNet {
	return func(t *testing.T) *secAggNet {
		ids, dir := wire.SimIdentities(5, len(adj))
		nt := &secAggNet{t: t, ids: ids, adj: adj, replay: -1}
		for i := range adj {
			nt.nodes = append(nt.nodes, newTestNode(t, i, ids, dir, st(), func(c *Config) {
				rng := rand.New(rand.NewPCG(uint64(i), 1))
				for k := range c.Model.Params() {
					c.Model.Params()[k] = float32(rng.NormFloat64())
				}
				if each != nil {
					each(i, dir, c)
				}
			}))
		}
		return nt
	}
}

// A plain node carries its optimizer's momentum, its strategy's state
// (Ditto's global model) and the second model's optimizer (Ditto's) and
// the training stream's position.
func TestSnapshotRestorePlainNode(t *testing.T) {
	withMomentum := func(_ int, _ *wire.Directory, c *Config) {
		n := c.Model.NumParams()
		c.Optimizer, _ = nn.NewOptimizer(nn.OptimizerSpec{LR: 0.1, Momentum: 0.9}, n)
		c.NewOptimizer = func() (nn.Optimizer, error) {
			return nn.NewOptimizer(nn.OptimizerSpec{LR: 0.1, Momentum: 0.9}, n)
		}
	}
	mk := net(circulant(3, 1), func() strategy.Strategy { return &strategy.Ditto{Lambda: 0.1} }, withMomentum)
	restartIsInvisible(t, mk)

	// Without the optimizer's momentum the next round differs: the
	// comparison above can fail.
	a, b := mk(t), mk(t)
	a.round(0)
	a.round(1)
	for i, n := range a.nodes {
		s, err := n.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		s.Optimizer = make([]float32, len(s.Optimizer))
		if err := b.nodes[i].Restore(s); err != nil {
			t.Fatal(err)
		}
	}
	a.round(2)
	b.round(2)
	if reflect.DeepEqual(a.nodes[0].Model().Params(), b.nodes[0].Model().Params()) {
		t.Fatal("the momentum made no difference to the next round")
	}
}

// A node-level DP node's accountant goes on from the saved releases: ε
// after the restored node's next round is the original's, three releases
// in, not one.
func TestSnapshotRestoreDPNode(t *testing.T) {
	mk := net(circulant(3, 1), func() strategy.Strategy { return &strategy.FedAvg{} }, func(i int, _ *wire.Directory, c *Config) {
		l, err := NewDPLayer(i, c.Model, seed.Seeded(c.Seed), 1, 1, 1e-3)
		if err != nil {
			panic(err)
		}
		c.Layers = []Layer{l}
	})
	orig, _ := restartIsInvisible(t, mk)
	if p := privacyOf(orig[0]); p == nil || p.Releases != 3 {
		t.Fatalf("privacy after three rounds: %+v, want 3 releases", p)
	}
	fresh := mk(t)
	if p := privacyOf(fresh.round(2)[0]); p.Epsilon >= privacyOf(orig[0]).Epsilon {
		t.Fatalf("ε of one release %v, of three %v: the check cannot tell a reset", p.Epsilon, privacyOf(orig[0]).Epsilon)
	}
}

// Sample-level DP (DP-SGD): the accountant of the steps continues too.
func TestSnapshotRestoreSampleDPNode(t *testing.T) {
	mk := net(circulant(3, 1), func() strategy.Strategy { return &strategy.FedAvg{} }, func(i int, _ *wire.Directory, c *Config) {
		l, err := NewSampleDPLayer(i, c.Model, seed.Seeded(c.Seed), nn.DPConfig{Clip: 1, Multiplier: 1}, 1e-3)
		if err != nil {
			panic(err)
		}
		c.Layers, c.Trainer = []Layer{l}, l
	})
	orig, _ := restartIsInvisible(t, mk)
	if p := privacyOf(orig[0]); p == nil || p.Releases != 3 {
		t.Fatalf("privacy after three rounds: %+v, want 3 steps", p)
	}
}

// Secure aggregation: the next round's group sum of restored nodes is the
// original's.
func TestSnapshotRestoreSecAggNode(t *testing.T) {
	for _, cfg := range []SecAggConfig{{Threshold: 2}, {Threshold: 2, Across: true}} {
		mk := net(circulant(5, 1), func() strategy.Strategy { return &strategy.FedAvg{} }, func(i int, dir *wire.Directory, c *Config) {
			l, err := NewSecAggLayer(i, c.Model, dir, seed.Seeded(5), cfg)
			if err != nil {
				panic(err)
			}
			c.Layers = []Layer{l}
		})
		orig, _ := restartIsInvisible(t, mk)
		if s := secAggOf(orig[0]); s == nil || s.Fallback || s.Survivors != 2 {
			t.Fatalf("%+v: the group sum of the round: %+v", cfg, s)
		}
	}
}

// Secure aggregation inside the trust layer's screened peers: the
// restored secure-aggregation layer reads the restored trust.
func TestSnapshotRestoreScreenedSecAggNode(t *testing.T) {
	tc := trust.DefaultConfig()
	mk := net(circulant(5, 1), func() strategy.Strategy { return &strategy.FedAvg{} }, func(i int, dir *wire.Directory, c *Config) {
		l, err := NewSecAggLayer(i, c.Model, dir, seed.Seeded(5), SecAggConfig{Threshold: 2, Screened: true})
		if err != nil {
			panic(err)
		}
		c.Trust, c.Layers = &tc, []Layer{l}
	})
	restartIsInvisible(t, mk)
}

// Paillier: the node's key, which lives across rounds, is restored.
func TestSnapshotRestorePaillierNode(t *testing.T) {
	mk := net(circulant(4, 1, 2), func() strategy.Strategy { return &strategy.FedAvg{} }, func(i int, dir *wire.Directory, c *Config) {
		l, err := NewPaillierLayer(i, c.Model, dir, seed.Seeded(5), PaillierConfig{KeyBits: 512, ScaleBits: 16, Bound: 16, Headroom: 4})
		if err != nil {
			panic(err)
		}
		c.Layers = []Layer{l}
	})
	restartIsInvisible(t, mk)
}

// The trust layer's state: claims to forward, pools, Beta trust.
func TestSnapshotRestoreTrustNode(t *testing.T) {
	tc := trust.DefaultConfig()
	orig, _ := restartIsInvisible(t, net(circulant(5, 1, 2), func() strategy.Strategy { return strategy.Local{} }, func(_ int, _ *wire.Directory, c *Config) {
		c.Trust = &tc
	}))
	if trustOf(orig[0]) == nil || len(trustOf(orig[0]).Screened) == 0 {
		t.Fatalf("trust of the round: %+v: the comparison saw no trust", trustOf(orig[0]))
	}
}

// The trust layer's state survives a restore into a fresh node: the
// restored node forwards the claims the original chose, and none when it
// resumes rounds later (they would be stale).
func TestTrustStateAndSkippedRounds(t *testing.T) {
	ids, dir := wire.SimIdentities(3, 3)
	a, b := newTrustNode(t, 0, ids, dir), newTrustNode(t, 1, ids, dir)
	hood := Neighborhood{In: []int{0, 1, 2}}
	begin(t, 0, hood, a, b)
	for _, m := range outbox(t, b) {
		if err := a.Step(m); err != nil {
			t.Fatal(err)
		}
	}
	outbox(t, a)
	end(t, a, EndOptions{})
	if len(a.layers[0].(*TrustLayer).fwd) == 0 {
		t.Fatal("a chose no claim to forward: the test needs one")
	}
	st, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	claims := func(n *Node, r int) int {
		t.Helper()
		begin(t, r, hood, n)
		k := 0
		for _, m := range outbox(t, n) {
			if m.Kind == wire.KindClaim {
				k++
			}
		}
		return k
	}
	for _, c := range []struct {
		round, want int
	}{{1, 2}, {5, 1}} { // own claim and b's forwarded; own claim only
		n := newTrustNode(t, 0, ids, dir)
		if err := n.Restore(st); err != nil {
			t.Fatal(err)
		}
		if got := claims(n, c.round); got != c.want {
			t.Errorf("restored, round %d: %d claims sent, want %d", c.round, got, c.want)
		}
	}
}

// Restore refuses, naming what differs, a snapshot that does not fit the
// node, and a node that already ran.
func TestRestoreRefusesWhatDoesNotFit(t *testing.T) {
	ids, dir := wire.SimIdentities(3, 3)
	a := newTrustNode(t, 0, ids, dir)
	begin(t, 0, Neighborhood{In: []int{0, 1, 2}}, a)
	outbox(t, a)
	if _, err := a.Snapshot(); err == nil || !strings.Contains(err.Error(), "Snapshot out of order") {
		t.Errorf("a snapshot inside a round: %v", err)
	}
	end(t, a, EndOptions{})
	good, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(s *Snapshot)
		node func() *Node
		want string
	}{
		{"another node", func(s *Snapshot) { s.Node = 1 }, nil, "a snapshot of node 1"},
		{"another model", func(s *Snapshot) { s.Params = s.Params[1:] }, nil, "parameters, the model"},
		{"another optimizer", func(s *Snapshot) { s.Optimizer = []float32{1} }, nil, "optimizer"},
		{"no trust layer", nil, func() *Node { return newTestNode(t, 0, ids, dir, strategy.Local{}) }, "the snapshot has 1 layers ([trust]), the node 0 (none)"},
		{"a truncated layer", func(s *Snapshot) { s.Layers[0].State = s.Layers[0].State[:len(s.Layers[0].State)-1] }, nil, "layer trust"},
		{"strategy state", func(s *Snapshot) { s.Strategy = []byte{1} }, nil, "strategy (local) cannot take"},
		{"a ran node", nil, func() *Node { return a }, "restore into a fresh node"},
	} {
		s := good
		s.Params, s.Layers = append([]float32(nil), good.Params...), []LayerState{{good.Layers[0].Name, append([]byte(nil), good.Layers[0].State...)}}
		if c.edit != nil {
			c.edit(&s)
		}
		n := newTrustNode(t, 0, ids, dir)
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
	m := newTestNode(t, 0, ids, dir, strategy.Local{}).Model()
	dp, _ := NewDPLayer(0, m, seed.Seeded(1), 1, 1, 1e-3)
	sdp, _ := NewSampleDPLayer(0, m, seed.Seeded(1), nn.DPConfig{Clip: 1, Multiplier: 1}, 1e-3)
	sec, _ := NewSecAggLayer(0, m, dir, seed.Seeded(1), SecAggConfig{Threshold: 2})
	sec3, _ := NewSecAggLayer(0, m, dir, seed.Seeded(1), SecAggConfig{Threshold: 3})
	pl, err := NewPaillierLayer(0, m, dir, seed.Seeded(1), PaillierConfig{KeyBits: 512, ScaleBits: 16, Bound: 16, Headroom: 4})
	if err != nil {
		t.Fatal(err)
	}
	tl, _ := NewTrustLayer(ids[0], dir, trust.DefaultConfig())
	layers := []Layer{dp, sdp, sec, pl, tl}
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
	pl2, err := NewPaillierLayer(0, m, dir, seed.Seeded(2), PaillierConfig{KeyBits: 512, ScaleBits: 16, Bound: 16, Headroom: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := pl2.Restore(states[3]); err != nil || pl2.key.N.Cmp(pl.key.N) != 0 || pl2.pack.Per != pl.pack.Per {
		t.Errorf("a Paillier layer restored with another's key keeps its own (%v)", err)
	}
	if err := sec3.Restore(states[2]); err == nil || !strings.Contains(err.Error(), "threshold 2") {
		t.Errorf("a threshold-2 state into a threshold-3 layer: %v", err)
	}
}
