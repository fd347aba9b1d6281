package sim_test

import (
	"context"
	"fmt"
	"log"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/sim"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// Example simulates two rounds of four nodes on a ring (0–1–2–3–0) running
// uniform FedAvg, node 0 Byzantine and sending its model's negation
// (sign_flip). Each honest node averages itself and its two ring
// neighbours with weight 1/3 each; nodes 1 and 3 neighbour node 0, node 2
// does not, so the weights honest nodes give the attacker are 1/3, 0 and
// 1/3: delta_max (their largest) is 1/3 and their mean 2/9. The simulator
// knows who is Byzantine; the nodes never learn it.
func Example() {
	const n = 4
	ids, dir := wire.SimIdentities(7, n) // keys derived from the seed
	// Two samples per node: the class is 1 when the second feature is the larger.
	d := &data.Dataset{
		Name: "points", Shape: []int{2}, Classes: []string{"a", "b"},
		X: []float32{1, 0, 0, 1, 2, 1, 1, 3, 3, 1, 1, 2, 2, 0, 0, 2},
		Y: []int{0, 1, 0, 1, 0, 1, 0, 1},
	}
	nodes := make([]*node.Node, n)
	for i := range nodes {
		m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{2}, Classes: 2}, 7, nn.Options{Batch: 2})
		if err != nil {
			log.Fatal(err)
		}
		opt, err := nn.NewOptimizer(nn.OptimizerSpec{Name: "sgd", LR: 0.1}, m.NumParams())
		if err != nil {
			log.Fatal(err)
		}
		mine := data.NewBatcher(d, []int32{int32(2 * i), int32(2*i + 1)}, nil, nil)
		if nodes[i], err = node.New(node.Config{ID: i, Model: m, Optimizer: opt,
			Train: nn.TrainConfig{Epochs: 1}, Strategy: &strategy.FedAvg{},
			TrainData: mine, Test: mine, Identity: ids[i], Directory: dir, Seed: 7, Rounds: 2}); err != nil {
			log.Fatal(err)
		}
	}
	ring, err := topology.Ring(n)
	if err != nil {
		log.Fatal(err)
	}
	flip, err := attack.New("sign_flip", attack.Params{})
	if err != nil {
		log.Fatal(err)
	}
	cfg := sim.Config{Rounds: 2, Graph: topology.Static(ring), Identities: ids, Seed: 7,
		Adversary: adversary.Config{Byzantine: []int{0}, Attack: flip}}
	err = sim.Run(context.Background(), cfg, nodes, metrics.SinkFunc(func(r *metrics.Round) error {
		fmt.Printf("round %d: delta_max %.4f, mean weight on the attacker %.4f, by node:", r.Round, r.DeltaMax, r.MeanByzWeight)
		for _, nr := range r.Nodes[1:] {
			fmt.Printf(" %d→%.4f", nr.Node, nr.ByzWeight)
		}
		fmt.Println()
		return nil
	}))
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// round 0: delta_max 0.3333, mean weight on the attacker 0.2222, by node: 1→0.3333 2→0.0000 3→0.3333
	// round 1: delta_max 0.3333, mean weight on the attacker 0.2222, by node: 1→0.3333 2→0.0000 3→0.3333
}
