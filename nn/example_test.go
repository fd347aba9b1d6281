package nn_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/nn"
)

// Example is the README's walk-through: split MNIST across ten clients with
// Dirichlet label skew and train client 0's model for one epoch.
func Example() {
	tt, err := data.MNIST()
	if err != nil {
		panic(err)
	}
	part, err := data.NewPartition(tt.Train, data.PartitionConfig{
		Method: data.Dirichlet, Clients: 10, Alpha: 0.3, Seed: 1})
	if err != nil {
		panic(err)
	}
	splits, err := data.SplitClients(tt.Train, part, data.Fractions{}, 1) // 0.7 / 0.1 / 0.2
	if err != nil {
		panic(err)
	}
	m, err := nn.Build(nn.Spec{Kind: "mlp", Input: []int{1, 28, 28}, Hidden: []int{64}, Classes: 10},
		1, nn.Options{Batch: 64})
	if err != nil {
		panic(err)
	}
	opt, _ := nn.NewOptimizer(nn.OptimizerSpec{Name: "sgd", LR: 0.01, Momentum: 0.9}, m.NumParams())
	train := data.NewBatcher(tt.Train, splits[0].Train, rand.New(rand.NewPCG(1, 1)), nil)
	res, err := m.Train(train, opt, nn.TrainConfig{Epochs: 1}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Samples == len(splits[0].Train), len(m.Params()) == m.NumParams())
	// Output: true true
}
