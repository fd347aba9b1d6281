package strategy_test

import (
	"fmt"

	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/strategy"
)

// ExampleFedAvg is one Combine of FedAvg with Metropolis–Hastings weights
// at a node of degree 2 whose neighbours 1 and 2 have degrees 3 and 1:
// neighbour j gets 1/(1 + max(2, deg j)), so 1/4 and 1/3, and the node
// keeps the rest, 5/12. With the node's own parameters (12, 0, 6, −6) and
// the neighbours' (4, 4, 6, 6) and (24, −3, 6, 0), the new parameters are
// 5/12·own + 1/4·x₁ + 1/3·x₂ = (5 + 1 + 8, 0 + 1 − 1, 6, −2.5 + 1.5 + 0).
// A node calls Share and Combine itself; a strategy never sees the driver.
func ExampleFedAvg() {
	m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{1}, Classes: 2}, 1, nn.Options{Batch: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	copy(m.Params(), []float32{12, 0, 6, -6}) // 2 weights, 2 biases: the node's trained model
	v := &strategy.View{ID: 0, Model: m, Neighbors: []int{1, 2}, NeighborDegree: []int{3, 1}, Degree: 2}
	in := []strategy.Incoming{
		{From: 1, Tag: strategy.TagModel, Vector: []float32{4, 4, 6, 6}},
		{From: 2, Tag: strategy.TagModel, Vector: []float32{24, -3, 6, 0}},
	}
	s := &strategy.FedAvg{Weighting: strategy.MetropolisHastings}
	w, err := s.Combine(v, in)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("weights: node 1 %.4f, node 2 %.4f\n", w[1], w[2])
	fmt.Println("parameters:", m.Params())
	// Output:
	// weights: node 1 0.2500, node 2 0.3333
	// parameters: [14 0 6 -1]
}
