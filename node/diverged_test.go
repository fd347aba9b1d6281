package node_test

import (
	"math"
	"testing"

	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// A node whose model is non-finite is not an error: Train and End go on,
// Ready says Diverged, and the evaluation is the accuracy as measured
// (every sample's outputs are NaN, so none is right) with loss 0. A node
// that recovers (finite parameters again) is not diverged any more.
func TestDivergedModelIsAnOutcome(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 1)
	n := nodetest.NewNode(t, 0, ids, dir, strategy.Local{})
	p := n.Model().Params()
	p[0] = float32(math.NaN())
	if err := n.Begin(0, node.Neighborhood{}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Train(t.Context()); err != nil {
		t.Fatalf("training a diverged model: %v", err)
	}
	nodetest.Outbox(t, n)
	rd := nodetest.End(t, n, node.EndOptions{Evaluate: true})
	if !rd.Diverged || rd.Eval == nil || rd.Eval.Local.N != 4 || rd.Eval.Local.Accuracy != 0 || rd.Eval.Local.Loss != 0 {
		t.Fatalf("diverged round: %+v, eval %+v", rd, rd.Eval)
	}
	for i := range p {
		p[i] = 0.1
	}
	nodetest.Begin(t, 1, node.Neighborhood{}, n)
	nodetest.Outbox(t, n)
	if rd := nodetest.End(t, n, node.EndOptions{Evaluate: true}); rd.Diverged || rd.Eval.Local.Loss == 0 {
		t.Errorf("recovered node: diverged %v, loss %v", rd.Diverged, rd.Eval.Local.Loss)
	}
}
