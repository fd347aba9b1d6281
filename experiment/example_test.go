package experiment_test

import (
	"context"
	"fmt"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
)

// Example is the README's simulation: 20 nodes on DMTT's mobile graph,
// 30 % of them adding Gaussian noise to what they send. (Compiled, not run
// by go test: it takes a minute.)
func Example() {
	ctx := context.Background()
	tt, _ := data.MNIST()
	atk, _ := attack.New("gaussian", attack.Params{Sigma: 10})
	x := experiment.Setup{
		Data: tt, Nodes: 20, Rounds: 30, GlobalTest: -1, Seed: 42,
		Partition: data.PartitionConfig{Method: data.Dirichlet, Alpha: 0.5},
		Model:     nn.Spec{Kind: "mlp", Input: []int{1, 28, 28}, Hidden: []int{256, 128}, Classes: 10},
		Graph: func(n int, s uint64) (topology.Dynamic, error) {
			return topology.NewMobility(topology.DefaultMobility(n, s)) // DMTT's torus random walk
		},
		Strategy:          func() strategy.Strategy { return &strategy.FedAvg{Weighting: strategy.MetropolisHastings} },
		ByzantineFraction: 0.3, Attack: atk,
	}
	err := x.Run(ctx, metrics.SinkFunc(func(r *metrics.Round) error {
		fmt.Println(r.Round, r.HonestGlobalAcc, r.DeltaMax) // every node's record is in r.Nodes
		return nil
	}))
	if err != nil {
		fmt.Println(err)
	}
}
