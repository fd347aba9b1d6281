package sim

import (
	"context"
	"reflect"
	"testing"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/trustlayer"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

// memData is a tiny in-memory nn.Batches.
type memData struct {
	x   []float32
	y   []int
	pos int
}

func (d *memData) Len() int { return len(d.y) }
func (d *memData) Reset()   { d.pos = 0 }
func (d *memData) Next(x []float32, y []int) int {
	n := min(len(y), len(d.y)-d.pos)
	copy(x, d.x[d.pos*2:(d.pos+n)*2])
	copy(y, d.y[d.pos:d.pos+n])
	d.pos += n
	return n
}

// keyPhase is a layer with two exchange phases: a key advertisement in
// phase 0, the strategy's vectors in phase 1 (the release phase). It
// counts the keys it received.
type keyPhase struct{ keys, rounds int }

func (l *keyPhase) Name() string                       { return "keys" }
func (l *keyPhase) Begin(int, node.Neighborhood) error { return nil }
func (l *keyPhase) Phases() int                        { return 2 }
func (l *keyPhase) ReleasePhase() int                  { return 1 }
func (l *keyPhase) Owns(k wire.Kind) bool              { return k == wire.KindKey }
func (l *keyPhase) ReleasesVectors() bool              { return true }
func (l *keyPhase) Expects(p int) []node.Expect {
	if p != 0 {
		return nil
	}
	return []node.Expect{{Kind: wire.KindKey, Content: wire.BlobContent(wire.KeySize, wire.KeySize)}}
}
func (l *keyPhase) Observe(*wire.Message, error) error { return nil }
func (l *keyPhase) Handle(*wire.Message) error         { l.keys++; return nil }
func (l *keyPhase) End(*node.Ready) error              { l.rounds++; return nil }
func (l *keyPhase) See(*strategy.View)                 {}
func (l *keyPhase) Snapshot() ([]byte, error)          { return nil, nil }
func (l *keyPhase) Restore([]byte) error               { return nil }
func (l *keyPhase) Release(out []*wire.Message) ([]*wire.Message, error) {
	return out, nil
}
func (l *keyPhase) Outbox(p int) ([]*wire.Message, error) {
	if p != 0 {
		return nil, nil
	}
	return []*wire.Message{{Header: wire.Header{Kind: wire.KindKey, To: wire.Broadcast}, Blob: wire.Blob{Data: make([]byte, wire.KeySize)}}}, nil
}

// The simulator runs as many exchange phases as the nodes' layers need:
// every phase's messages are routed (keys to the layer, vectors to the
// strategy), and traffic counts every phase.
func TestSimulatorRunsEveryExchangePhase(t *testing.T) {
	const n = 3
	ids, dir := wire.SimIdentities(9, n)
	g, err := topology.Complete(n)
	if err != nil {
		t.Fatal(err)
	}
	layers := make([]*keyPhase, n)
	nodes := make([]*node.Node, n)
	for i := range nodes {
		layers[i] = &keyPhase{}
		nodes[i] = tinyNode(t, i, ids, dir, 9, 2, func(c *node.Config) {
			c.Strategy, c.Layers = &strategy.FedAvg{}, []node.Layer{layers[i]}
		})
	}
	var recs []*metrics.Round
	err = Run(context.Background(), Config{Rounds: 2, Graph: topology.Static(g), Identities: ids, Seed: 9, WireRoundTrip: true},
		nodes, metrics.SinkFunc(func(r *metrics.Round) error { recs = append(recs, r); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range layers {
		if l.keys != 2*(n-1) || l.rounds != 2 {
			t.Errorf("node %d's layer: %d keys over %d rounds, want %d over 2", i, l.keys, l.rounds, 2*(n-1))
		}
	}
	key := &wire.Message{Header: wire.Header{Kind: wire.KindKey}, Blob: wire.Blob{Data: make([]byte, wire.KeySize)}}
	ks, _ := wire.EncodedSize(key)
	vec := &wire.Message{Header: wire.Header{Kind: wire.KindVector}, Payload: wire.Payload{Tag: strategy.TagModel, Data: make([]float32, 6)}}
	vs, _ := wire.EncodedSize(vec)
	for _, r := range recs {
		for _, nr := range r.Nodes {
			if nr.BytesSent != (ks+vs)*(n-1) || nr.Rejected != 0 || nr.ByzWeight != 0 {
				t.Fatalf("round %d node %d: %+v, want %d bytes (a key and a model to each of %d peers)", r.Round, nr.Node, nr, (ks+vs)*(n-1), n-1)
			}
		}
	}
}

// alternate is a ring on even rounds and the complete graph on odd ones:
// every round's edges change, so the events claim form has events to send.
type alternate struct{ ring, full *topology.Graph }

func (a alternate) N() int { return a.ring.N() }
func (a alternate) At(r int) *topology.Graph {
	if r%2 == 0 {
		return a.ring
	}
	return a.full
}

// TestSimulatorRunsTheEventsForm: 6 nodes with the trust layer in the
// events claim form, node 5 an omission liar, over a graph whose edges
// change every round, with the wire round trip: the three phases run, the
// event traffic counts as claim traffic, the records do not depend on the
// number of workers, and the honest nodes end up trusting the liar
// neighbour less than their honest ones.
func TestSimulatorRunsTheEventsForm(t *testing.T) {
	const n = 6
	ids, dir := wire.SimIdentities(11, n)
	ring, err := topology.Ring(n)
	if err != nil {
		t.Fatal(err)
	}
	full, err := topology.Complete(n)
	if err != nil {
		t.Fatal(err)
	}
	tc := trust.DefaultConfig()
	tc.Claims = trust.ClaimsEvents
	run := func(workers int) []*metrics.Round {
		nodes := make([]*node.Node, n)
		for i := range nodes {
			nodes[i] = tinyNode(t, i, ids, dir, 11, 8, func(c *node.Config) {
				tl, err := trustlayer.New(ids[i], dir, tc)
				if err != nil {
					t.Fatal(err)
				}
				c.Strategy, c.Layers = strategy.Local{}, []node.Layer{tl}
			})
		}
		var recs []*metrics.Round
		err = Run(context.Background(), Config{Rounds: 8, Graph: alternate{ring, full}, Identities: ids, Seed: 11, WireRoundTrip: true,
			Adversary: adversary.Config{Byzantine: []int{5}, Claims: adversary.ClaimAttack{Liar: adversary.LiarOmission}}, Workers: workers},
			nodes, metrics.SinkFunc(func(r *metrics.Round) error { recs = append(recs, r); return nil }))
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	recs := run(1)
	// The same records whatever the parallelism.
	if again := run(4); !reflect.DeepEqual(again, recs) {
		t.Error("4 workers gave other records than 1")
	}
	last := recs[len(recs)-1]
	if last.Trust == nil || last.Trust.NeighborHonest == nil || last.Trust.NeighborByzantine == nil {
		t.Fatalf("trust diagnostics %+v", last.Trust)
	}
	h, b := *last.Trust.NeighborHonest, *last.Trust.NeighborByzantine
	t.Logf("trust in honest neighbours %.3f, in the liar %.3f", h, b)
	if b >= h || b > 0.3 {
		t.Errorf("trust in honest neighbours %.3f, in the liar %.3f: want the liar below 0.3 and below honest", h, b)
	}
	for _, r := range recs {
		if r.Trust.ClaimBytesPerNode == 0 {
			t.Fatalf("round %d: no claim traffic", r.Round)
		}
	}
}

// tinyNode is node i of a logistic-regression toy (two features, four
// samples), for seed and rounds, edited by edit.
func tinyNode(t *testing.T, i int, ids []*wire.Identity, dir *wire.Directory, seed uint64, rounds int, edit func(*node.Config)) *node.Node {
	t.Helper()
	m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{2}, Classes: 2}, 1, nn.Options{Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	opt, _ := nn.NewOptimizer(nn.OptimizerSpec{LR: 0.1}, m.NumParams())
	d := &memData{x: []float32{1, 0, 0, 1, 1, 1, -1, 0}, y: []int{0, 1, 1, 0}}
	c := node.Config{ID: i, Model: m, Optimizer: opt, Train: nn.TrainConfig{Epochs: 1}, TrainData: d, Test: d,
		Identity: ids[i], Directory: dir, Seed: seed, Rounds: rounds}
	edit(&c)
	n, err := node.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
