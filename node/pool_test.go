package node_test

import (
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// heldCheck is a strategy that notes whether the model held its scratch
// (it has gradients) when the node asked it to shape the training and to
// combine, and runs a pass there (BatchLoss).
type heldCheck struct {
	strategy.FedAvg
	inTraining, inCombine bool
}

func (h *heldCheck) LocalTraining(v *strategy.View, base nn.TrainConfig) nn.TrainConfig {
	h.inTraining = v.Model.Grads() != nil
	return base
}

func (h *heldCheck) Combine(v *strategy.View, in []strategy.Incoming) (map[int]float64, error) {
	h.inCombine = v.Model.Grads() != nil
	if _, err := v.BatchLoss(v.Model.Params()); err != nil {
		return nil, err
	}
	return h.FedAvg.Combine(v, in)
}

// A node whose model takes its scratch from a pool holds it through Train
// and through End (one take each, so a strategy's passes in between find
// it held) and gives it back after; it computes what a node whose model
// owns its scratch does.
func TestNodeHoldsPooledScratchPerPhase(t *testing.T) {
	spec := nn.Spec{Kind: "logreg", Input: []int{2}, Classes: 2}
	pool, err := nn.NewPool(spec, nn.Options{Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	ids, dir := wire.SimIdentities(7, 2)
	pooled, own := &heldCheck{}, &heldCheck{}
	var m *nn.Model
	a := nodetest.NewNode(t, 0, ids, dir, pooled, func(c *node.Config) {
		if m, err = nn.Build(spec, 1, nn.Options{Pool: pool}); err != nil {
			t.Fatal(err)
		}
		c.Model = m
	})
	b := nodetest.NewNode(t, 0, ids, dir, own)
	peer := nodetest.NewNode(t, 1, ids, dir, &strategy.FedAvg{})
	hood := node.Neighborhood{In: []int{1}, InDegree: []int{1}, Degree: 1}
	for r := range 2 {
		nodetest.Begin(t, r, hood, a, b, peer)
		msg := nodetest.Outbox(t, peer)[0]
		var evals []*node.Evaluation
		for _, n := range []*node.Node{a, b} {
			nodetest.Outbox(t, n)
			if err := n.Step(msg); err != nil {
				t.Fatal(err)
			}
			evals = append(evals, nodetest.End(t, n, node.EndOptions{Evaluate: true}).Eval)
		}
		nodetest.End(t, peer, node.EndOptions{})
		if !pooled.inTraining || !pooled.inCombine {
			t.Fatalf("round %d: the scratch was held in training %v, in the combine %v", r, pooled.inTraining, pooled.inCombine)
		}
		if m.Grads() != nil || pool.Size() != 1 {
			t.Fatalf("round %d: after End the model holds gradients (%v), or the pool made %d scratches", r, m.Grads() != nil, pool.Size())
		}
		if !slices.Equal(a.Model().Params(), b.Model().Params()) || *evals[0] != *evals[1] {
			t.Fatalf("round %d: the pooled node computes %v %+v, the own-scratch node %v %+v", r,
				a.Model().Params(), *evals[0], b.Model().Params(), *evals[1])
		}
	}
}
