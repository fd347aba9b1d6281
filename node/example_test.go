package node_test

import (
	"context"
	"fmt"
	"log"
	"slices"

	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// points is a tiny two-feature, two-class dataset: the class is 1 when the
// second feature is the larger.
var points = &data.Dataset{
	Name: "points", Shape: []int{2}, Classes: []string{"a", "b"},
	X: []float32{1, 0, 0, 1, 2, 1, 1, 3},
	Y: []int{0, 1, 0, 1},
}

// newNode builds node id of a two-node federation: a logistic regression
// (the same initial parameters on both nodes) trained on its own two
// samples, averaging with FedAvg. It returns the model too, which the node
// updates in place.
func newNode(id int, ids []*wire.Identity, dir *wire.Directory) (*node.Node, *nn.Model) {
	m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{2}, Classes: 2}, 1, nn.Options{Batch: 2})
	if err != nil {
		log.Fatal(err)
	}
	opt, err := nn.NewOptimizer(nn.OptimizerSpec{Name: "sgd", LR: 0.5}, m.NumParams())
	if err != nil {
		log.Fatal(err)
	}
	own := data.NewBatcher(points, []int32{int32(2 * id), int32(2*id + 1)}, nil, nil)
	n, err := node.New(node.Config{
		ID: id, Model: m, Optimizer: opt, Train: nn.TrainConfig{Epochs: 1},
		Strategy:  &strategy.FedAvg{Weighting: strategy.Uniform},
		TrainData: own, Test: own, Identity: ids[id], Directory: dir, Seed: 1, Rounds: 1,
	})
	if err != nil {
		log.Fatal(err)
	}
	return n, m
}

// ExampleNode drives two nodes through one round by hand, as a driver (the
// simulator, a networked runtime) does: Begin, Train, Outbox, Step for
// every message that arrives, End. Each node hears the other, so uniform
// FedAvg gives the peer weight 1/2 and leaves both nodes holding the mean
// of the two trained models, which the example checks against its own
// average.
func ExampleNode() {
	ctx := context.Background()
	ids, dir := wire.SimIdentities(1, 2) // a deployment reads key files instead
	n0, m0 := newNode(0, ids, dir)
	n1, m1 := newNode(1, ids, dir)
	nodes, models := []*node.Node{n0, n1}, []*nn.Model{m0, m1}
	hoods := []node.Neighborhood{ // whom each node hears this round, their degrees, its own
		{In: []int{1}, InDegree: []int{1}, Degree: 1},
		{In: []int{0}, InDegree: []int{1}, Degree: 1},
	}
	trained := make([][]float32, len(nodes))

	for i, n := range nodes {
		if err := n.Begin(0, hoods[i]); err != nil { // round 0 opens with its neighbourhood
			log.Fatal(err)
		}
		if _, err := n.Train(ctx); err != nil { // local training; ctx cancels between batches
			log.Fatal(err)
		}
		trained[i] = slices.Clone(models[i].Params())
	}
	for more := true; more; { // one exchange phase per Outbox (secure aggregation has several)
		sent := make([][]*wire.Message, len(nodes))
		for i, n := range nodes {
			var err error
			if sent[i], more, err = n.Outbox(); err != nil { // signed messages to send now
				log.Fatal(err)
			}
		}
		for i, out := range sent { // the "network": each node's messages reach the other
			for _, m := range out {
				if err := nodes[1-i].Step(m); err != nil { // Step takes a message at any time
					fmt.Println("refused:", err)
				}
			}
		}
	}
	for i, n := range nodes {
		rd, err := n.End(node.EndOptions{}) // everything the round produced
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("node %d: weights %v, %d rejected\n", i, rd.Weights, rd.Rejected)
	}

	mean := make([]float32, len(trained[0]))
	for k := range mean {
		mean[k] = float32((float64(trained[0][k]) + float64(trained[1][k])) / 2)
	}
	fmt.Println("the trained models differ:", !slices.Equal(trained[0], trained[1]))
	fmt.Println("both nodes hold their mean:", slices.Equal(m0.Params(), mean) && slices.Equal(m1.Params(), mean))
	// Output:
	// node 0: weights map[1:0.5], 0 rejected
	// node 1: weights map[0:0.5], 0 rejected
	// the trained models differ: true
	// both nodes hold their mean: true
}
