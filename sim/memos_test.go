package sim

import (
	"context"
	"testing"

	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// The simulator gives its nodes shared memos unless told not to, and they
// are used: on a complete graph every broadcast reaches three receivers,
// so its digest is reused and its signature's verification remembered.
// (That they change no record is experiment's TestMemosChangeNoRecord.)
func TestMemosAreUsed(t *testing.T) {
	const n = 4
	ids, dir := wire.SimIdentities(5, n)
	g, err := topology.Complete(n)
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []bool{false, true} {
		nodes := make([]*node.Node, n)
		for i := range nodes {
			nodes[i] = tinyNode(t, i, ids, dir, 5, 2, func(c *node.Config) { c.Strategy = &strategy.FedAvg{} })
		}
		r, err := newRunner(Config{Rounds: 2, Graph: topology.Static(g), Identities: ids, Seed: 5, NoMemos: off}, nodes)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.run(context.Background(), metrics.SinkFunc(func(*metrics.Round) error { return nil })); err != nil {
			t.Fatal(err)
		}
		m := r.memos
		if off {
			if m != (node.Memos{}) {
				t.Errorf("NoMemos: the nodes got memos %+v", m)
			}
			continue
		}
		if m.Verify == nil || m.Digests == nil {
			t.Fatalf("memos %+v: want a verification cache and a digest memo", m)
		}
		if hits, _ := m.Digests.Stats(); hits == 0 {
			t.Error("no digest was reused")
		}
		if hits, _ := m.Verify.Stats(); hits == 0 {
			t.Error("no verification was remembered")
		}
		if m.Global != nil {
			t.Error("an evaluation memo without global evaluation")
		}
	}
}
