package strategy_test

import (
	"fmt"

	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/strategy"
)

// nearestPeer is a strategy written outside the package
// (docs/guides/extending.md, "Adding a strategy"): a node sends its trained
// model to every out-neighbour and averages its own model with the one
// received model nearest to it (squared L2 distance), half and half.
type nearestPeer struct{}

func (nearestPeer) Name() string { return "nearest_peer" }

// Share returns what to send after local training: the model, to all.
func (nearestPeer) Share(v *strategy.View) []strategy.Outgoing {
	return []strategy.Outgoing{{To: strategy.Broadcast, Tag: strategy.TagModel, Vector: v.Model.Params()}}
}

// Combine writes the node's next parameters and returns the weight it gave
// each sender. The node has checked every message (signature, round,
// length, finite values) before Combine sees it; a strategy still refuses,
// with an error, a vector of the wrong length.
func (nearestPeer) Combine(v *strategy.View, in []strategy.Incoming) (map[int]float64, error) {
	w := v.Model.Params()
	best, bestDist := -1, 0.0
	for i, m := range in {
		if m.Tag != strategy.TagModel {
			continue
		}
		if len(m.Vector) != len(w) {
			return nil, fmt.Errorf("nearest_peer: %d values from node %d, want %d", len(m.Vector), m.From, len(w))
		}
		var d float64
		for j, x := range m.Vector {
			d += float64(x-w[j]) * float64(x-w[j])
		}
		if best < 0 || d < bestDist {
			best, bestDist = i, d
		}
	}
	if best < 0 {
		return map[int]float64{}, nil // nothing arrived: keep the own model
	}
	for j, x := range in[best].Vector {
		w[j] = (w[j] + x) / 2
	}
	return map[int]float64{in[best].From: 0.5}, nil
}

// Example_newStrategy is the guide's strategy at a node whose own model is
// (1, 2, 3, 4): neighbour 1 sent (2, 2, 4, 4), at squared distance 2, and
// neighbour 2 a model far away; the node averages with neighbour 1 only,
// giving (1.5, 2, 3.5, 4), and reports weight 1/2 for it and none for
// neighbour 2 (so delta_max sees that node 2 was ignored). Any
// strategy.Strategy runs in the simulator as experiment.Setup's Strategy; a
// config names it once it has a registry row.
func Example_newStrategy() {
	m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{1}, Classes: 2}, 1, nn.Options{Batch: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	copy(m.Params(), []float32{1, 2, 3, 4})
	v := &strategy.View{ID: 0, Model: m, Neighbors: []int{1, 2}, NeighborDegree: []int{1, 1}, Degree: 2}
	var s strategy.Strategy = nearestPeer{}
	out := s.Share(v)
	fmt.Println(len(out), out[0].Tag)
	in := []strategy.Incoming{
		{From: 1, Tag: strategy.TagModel, Vector: []float32{2, 2, 4, 4}},
		{From: 2, Tag: strategy.TagModel, Vector: []float32{-50, 80, 9, 0}},
	}
	w, err := s.Combine(v, in)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("weights:", w)
	fmt.Println("parameters:", m.Params())
	// Output:
	// 1 model
	// weights: map[1:0.5]
	// parameters: [1.5 2 3.5 4]
}
