package sim

import (
	"context"
	"testing"

	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
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
func (l *keyPhase) Observe(*wire.Message, error) error { return nil }
func (l *keyPhase) Handle(*wire.Message) error         { l.keys++; return nil }
func (l *keyPhase) End(*node.Ready) error              { l.rounds++; return nil }
func (l *keyPhase) See(*strategy.View)                 {}
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
		m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{2}, Classes: 2}, 1, nn.Options{Batch: 4})
		if err != nil {
			t.Fatal(err)
		}
		opt, _ := nn.NewOptimizer(nn.OptimizerSpec{LR: 0.1}, m.NumParams())
		d := &memData{x: []float32{1, 0, 0, 1, 1, 1, -1, 0}, y: []int{0, 1, 1, 0}}
		layers[i] = &keyPhase{}
		nodes[i], err = node.New(node.Config{ID: i, Model: m, Optimizer: opt, Train: nn.TrainConfig{Epochs: 1},
			Strategy: &strategy.FedAvg{}, TrainData: d, Test: d, Identity: ids[i], Directory: dir, Seed: 9, Rounds: 2,
			Layers: []node.Layer{layers[i]}})
		if err != nil {
			t.Fatal(err)
		}
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
