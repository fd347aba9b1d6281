// Package nodetest is what the tests of node and of its layers'
// sub-packages share: a tiny node (logistic regression on two inputs,
// four samples), the calls of one round with the test failing on an
// error, and Net, a little driver that runs whole rounds over a graph.
// Tests only: no package's code imports it.
package nodetest

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// Data is a tiny in-memory nn.Batches of two-feature samples that says
// where it is (node.Positioned).
type Data struct {
	X      []float32 // two features a sample
	Y      []int
	pos    int
	resets uint64
}

func (d *Data) Len() int                   { return len(d.Y) }
func (d *Data) Reset()                     { d.pos, d.resets = 0, d.resets+1 }
func (d *Data) Position() (uint64, int)    { return d.resets, d.pos }
func (d *Data) Seek(r uint64, p int) error { d.resets, d.pos = r, p; return nil }
func (d *Data) Next(x []float32, y []int) int {
	n := min(len(y), len(d.Y)-d.pos)
	copy(x, d.X[d.pos*2:(d.pos+n)*2])
	copy(y, d.Y[d.pos:d.pos+n])
	d.pos += n
	return n
}

// NewNode is node id of the directory dir (identities ids) with strategy
// st: a logistic regression on two inputs, SGD at 0.1, one epoch of four
// samples (the same for training and test), seed 1, three rounds; opts
// change the configuration before the node is built.
func NewNode(t testing.TB, id int, ids []*wire.Identity, dir *wire.Directory, st strategy.Strategy, opts ...func(*node.Config)) *node.Node {
	t.Helper()
	n, err := node.New(Config(t, id, ids, dir, st, opts...))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Config is NewNode's configuration, for a test of what node.New refuses.
func Config(t testing.TB, id int, ids []*wire.Identity, dir *wire.Directory, st strategy.Strategy, opts ...func(*node.Config)) node.Config {
	t.Helper()
	m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{2}, Classes: 2}, 1, nn.Options{Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	opt, _ := nn.NewOptimizer(nn.OptimizerSpec{LR: 0.1}, m.NumParams())
	d := &Data{X: []float32{1, 0, 0, 1, 1, 1, -1, 0}, Y: []int{0, 1, 1, 0}}
	cfg := node.Config{ID: id, Model: m, Optimizer: opt, Train: nn.TrainConfig{Epochs: 1}, Strategy: st,
		TrainData: d, Test: d, Identity: ids[id], Directory: dir, Seed: 1, Rounds: 3}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// Begin opens round r on every node with hood and trains it.
func Begin(t testing.TB, r int, hood node.Neighborhood, nodes ...*node.Node) {
	t.Helper()
	for _, x := range nodes {
		if err := x.Begin(r, hood); err != nil {
			t.Fatal(err)
		}
		if _, err := x.Train(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// Outbox is the node's single exchange phase.
func Outbox(t testing.TB, n *node.Node) []*wire.Message {
	t.Helper()
	out, more, err := n.Outbox()
	if err != nil || more {
		t.Fatalf("outbox: more %v, %v", more, err)
	}
	return out
}

// End closes the node's round.
func End(t testing.TB, n *node.Node, o node.EndOptions) node.Ready {
	t.Helper()
	rd, err := n.End(o)
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// Privacy, SecAgg, Trust and Scores are the round's reports of their
// kind, nil when it has none.
func Privacy(rd node.Ready) *node.PrivacyReport { return report[*node.PrivacyReport](rd) }
func SecAgg(rd node.Ready) *node.SecAggReport   { return report[*node.SecAggReport](rd) }
func Trust(rd node.Ready) *node.TrustReport     { return report[*node.TrustReport](rd) }
func Scores(rd node.Ready) node.ScoresReport    { return report[node.ScoresReport](rd) }

func report[T node.Report](rd node.Ready) T {
	r, _ := node.ReportOf[T](rd)
	return r
}

// Net is a little driver: nodes on an undirected graph, every phase's
// messages delivered along its edges unless the sender is silent in that
// phase (a dropout) or Tamper changes them.
type Net struct {
	T     *testing.T
	IDs   []*wire.Identity
	Dir   *wire.Directory
	Nodes []*node.Node
	Adj   [][]int
	// Silent(i, p): node i's messages of phase p are lost.
	Silent func(i, p int) bool
	// Tamper may replace a message (re-signed by the sender's key).
	Tamper func(p int, m *wire.Message) *wire.Message
	// Replay delivers every message of phase Replay twice (-1: none).
	Replay int
}

// NewNet returns a maker of networks on adj: node i runs strategy st(),
// its model starts from parameters drawn from N(0, 1) with a stream of
// its own (so that means are not trivial), and each, if not nil, changes
// its configuration (dir is the network's directory).
func NewNet(adj [][]int, st func() strategy.Strategy, each func(i int, dir *wire.Directory, c *node.Config)) func(t *testing.T) *Net {
	return func(t *testing.T) *Net {
		ids, dir := wire.SimIdentities(5, len(adj))
		nt := &Net{T: t, IDs: ids, Dir: dir, Adj: adj, Replay: -1}
		for i := range adj {
			nt.Nodes = append(nt.Nodes, NewNode(t, i, ids, dir, st(), func(c *node.Config) {
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

// Hood is node i's neighbourhood on the net's graph.
func (net *Net) Hood(i int) node.Neighborhood {
	deg := make([]int, len(net.Adj[i]))
	for k, j := range net.Adj[i] {
		deg[k] = len(net.Adj[j])
	}
	return node.Neighborhood{In: net.Adj[i], InDegree: deg, Degree: len(net.Adj[i])}
}

// Round runs round r on every node: Begin and Train, every exchange phase,
// End.
func (net *Net) Round(r int) []node.Ready {
	t := net.T
	for i, nd := range net.Nodes {
		if err := nd.Begin(r, net.Hood(i)); err != nil {
			t.Fatal(err)
		}
		if _, err := nd.Train(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for p := 0; ; p++ {
		out := make([][]*wire.Message, len(net.Nodes))
		more := false
		for i, nd := range net.Nodes {
			var err error
			var m bool
			if out[i], m, err = nd.Outbox(); err != nil {
				t.Fatal(err)
			}
			more = more || m
		}
		for i := range net.Nodes {
			if net.Silent != nil && net.Silent(i, p) {
				continue
			}
			for _, m := range out[i] {
				if net.Tamper != nil {
					m = net.Tamper(p, m)
				}
				for _, j := range net.Adj[i] {
					if m.To != wire.Broadcast && m.To != uint32(j) {
						continue
					}
					_ = net.Nodes[j].Step(m)
					if p == net.Replay {
						_ = net.Nodes[j].Step(m)
					}
				}
			}
		}
		if !more {
			break
		}
	}
	rds := make([]node.Ready, len(net.Nodes))
	for i, nd := range net.Nodes {
		var err error
		if rds[i], err = nd.End(node.EndOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return rds
}

// Circulant is the graph on n vertices with edges i ~ i ± o for o in offs.
func Circulant(n int, offs ...int) [][]int {
	adj := make([][]int, n)
	for i := range adj {
		for _, o := range offs {
			adj[i] = append(adj[i], (i+o)%n, (i-o+n)%n)
		}
		slices.Sort(adj[i])
		adj[i] = slices.Compact(adj[i])
	}
	return adj
}

// RestartIsInvisible runs two rounds of a network made by mk, snapshots
// every node, restores the snapshots into a second network made by mk,
// and runs the next round on both: every node's parameters and Ready must
// be the same bit for bit (the restored node is the original). It returns
// both networks' Ready of that round.
func RestartIsInvisible(t *testing.T, mk func(t *testing.T) *Net) (orig, restored []node.Ready) {
	t.Helper()
	a := mk(t)
	a.Round(0)
	a.Round(1)
	b := mk(t)
	for i, n := range a.Nodes {
		s, err := n.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if s.Round != 1 || s.Node != i {
			t.Fatalf("node %d's snapshot is of node %d round %d, want round 1", i, s.Node, s.Round)
		}
		if err := b.Nodes[i].Restore(s); err != nil {
			t.Fatal(err)
		}
		if err := b.Nodes[i].Begin(1, node.Neighborhood{}); err == nil || !strings.Contains(err.Error(), "rounds must increase") {
			t.Fatalf("a node restored after round 1 began round 1 again: %v", err)
		}
	}
	orig, restored = a.Round(2), b.Round(2)
	for i := range a.Nodes {
		pa, pb := a.Nodes[i].Model().Params(), b.Nodes[i].Model().Params()
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
