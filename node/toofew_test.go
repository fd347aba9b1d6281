package node_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/strategy"
)

// TestTooFewInputsKeepTheOwnModel: a neighbour that stays silent must not
// stop a node whose rule needs more inputs than arrived. On a ring each
// node has two in-neighbours; trimmed mean with f = 1 needs three inputs.
// Node 1 is silent, so nodes 0 and 2 get one neighbour's model: each keeps
// its trained model bit for bit (the model a "local" node has after the
// same round), says so, and counts the input it could not use; node 3,
// whose neighbours both sent, combines as usual.
func TestTooFewInputsKeepTheOwnModel(t *testing.T) {
	const silent = 1
	trimmed := func() strategy.Strategy {
		sp, err := aggregate.ParseSpec("trimmed_mean")
		if err != nil {
			t.Fatal(err)
		}
		r, err := sp.New(aggregate.Params{F: 1})
		if err != nil {
			t.Fatal(err)
		}
		return &strategy.RobustRule{Rule: r}
	}
	ring := nodetest.Circulant(5, 1)
	net := nodetest.NewNet(ring, trimmed, nil)(t)
	net.Silent = func(i, _ int) bool { return i == silent }
	local := nodetest.NewNet(ring, func() strategy.Strategy { return strategy.Local{} }, nil)(t)
	rds := net.Round(0)
	local.Round(0)
	for i, rd := range rds {
		alone := i != silent && slices.Contains(ring[i], silent)
		own := slices.Equal(net.Nodes[i].Model().Params(), local.Nodes[i].Model().Params())
		if rd.KeptOwn != alone || own != alone {
			t.Errorf("node %d (one neighbour's model: %v): kept its own model %v, its model the trained one %v", i, alone, rd.KeptOwn, own)
		}
		if !alone {
			continue
		}
		other := ring[i][0]
		if other == silent {
			other = ring[i][1]
		}
		want := []node.Rejection{{From: other, Reason: node.ReasonTooFew, Count: 1}}
		if !slices.Equal(rd.Rejections, want) || rd.Rejected != 1 || len(rd.Weights) != 0 {
			t.Errorf("node %d: rejections %v (%d), weights %v; want %v and no weights", i, rd.Rejections, rd.Rejected, rd.Weights, want)
		}
	}
	// The strategy says it changed nothing.
	var st strategy.Strategy = trimmed()
	if _, err := st.Combine(&strategy.View{Model: net.Nodes[0].Model()}, nil); !errors.Is(err, strategy.ErrKeptOwn) {
		t.Errorf("trimmed mean over the own model alone: %v, want ErrKeptOwn", err)
	}
}
