package dplayer

import (
	"testing"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// TestDPLayerAsynchronousSteps: in asynchronous timing every step is one
// release. Over steps that skip numbers (a node's counter, not a round),
// what goes out is the node's noisy model, a neighbour's model reaches the
// combine with its staleness, and the report after k steps is what
// privacy.EpsilonAfter gives for k unamplified Gaussian releases.
func TestDPLayerAsynchronousSteps(t *testing.T) {
	const clip, z, delta = 1.0, 2.0, 1e-4
	ids, dir := wire.SimIdentities(3, 3)
	var l *Layer
	n := nodetest.NewNode(t, 0, ids, dir, &strategy.AsyncMean{}, func(c *node.Config) {
		var err error
		if l, err = New(0, c.Model, seed.Seeded(c.Seed), clip, z, delta); err != nil {
			t.Fatal(err)
		}
		c.Layers = []node.Layer{l}
		c.Async = &node.Async{MaxStaleness: 4}
		params := c.Model.NumParams()
		c.NewOptimizer = func() (nn.Optimizer, error) { return nn.NewOptimizer(nn.OptimizerSpec{LR: 0.1}, params) }
	})
	peer := nodetest.NewNode(t, 1, ids, dir, &strategy.AsyncMean{}, func(c *node.Config) { c.Async = &node.Async{MaxStaleness: 4} })
	hood := node.Neighborhood{In: []int{1, 2}, InDegree: []int{2, 2}, Degree: 2}
	peerHood := node.Neighborhood{In: []int{0, 2}, InDegree: []int{2, 2}, Degree: 2}
	for k, s := range []int{0, 1, 3, 4, 7} {
		nodetest.Begin(t, s, hood, n)
		start := append([]float32(nil), n.Model().Params()...)
		out := nodetest.Outbox(t, n)
		w := n.Model().Params()
		if len(out) == 0 {
			t.Fatalf("step %d: nothing sent", s)
		}
		moved := false
		for i := range w {
			if out[0].Payload.Data[i] != w[i] {
				t.Fatalf("step %d: the vector sent is not the node's noisy model", s)
			}
			moved = moved || w[i] != start[i]
		}
		if !moved || out[0].Round != uint64(s) {
			t.Fatalf("step %d: no noise on the release, or the message carries round %d", s, out[0].Round)
		}
		// The peer, on a counter of its own, sends its model; it is combined.
		nodetest.Begin(t, s+k, peerHood, peer)
		for _, m := range nodetest.Outbox(t, peer) {
			if m.To == 0 || m.To == wire.Broadcast {
				if err := n.Step(m); err != nil {
					t.Fatalf("step %d: the peer's message refused: %v", s, err)
				}
			}
		}
		nodetest.End(t, peer, node.EndOptions{Keep: true})
		rd := nodetest.End(t, n, node.EndOptions{})
		if len(rd.Ages) != 1 || rd.Ages[0].From != 1 {
			t.Fatalf("step %d: inputs %+v, want the peer's", s, rd.Ages)
		}
		want, _, err := privacy.EpsilonAfter(privacy.GaussianEvent{Multiplier: z, Sampling: privacy.Unamplified()}, k+1, delta, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p := nodetest.Privacy(rd); p == nil || p.Releases != k+1 || p.Epsilon != want {
			t.Fatalf("step %d (the node's %d-th): report %+v, want ε %v after %d releases", s, k+1, p, want, k+1)
		}
	}
}
