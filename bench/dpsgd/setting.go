package main

import (
	"math/rand/v2"

	"github.com/trellis-fl/trellis/nn"
)

// setting is one model and batch size the step is measured at.
type setting struct {
	name  string
	spec  nn.Spec
	batch int
}

var settings = []setting{
	{"mlp/batch32", nn.Spec{Kind: "mlp", Input: []int{784}, Hidden: []int{256, 128}, Classes: 10}, 32},
	{"mlp/batch256", nn.Spec{Kind: "mlp", Input: []int{784}, Hidden: []int{256, 128}, Classes: 10}, 256},
	{"lenet5/batch64", nn.Spec{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10}, 64},
}

// build returns the model of s (seed 1), an SGD optimizer (lr 0.01,
// momentum 0.9) and a random batch.
func build(s setting) (*nn.Model, nn.Optimizer, []float32, []int) {
	m, err := nn.Build(s.spec, 1, nn.Options{Batch: s.batch})
	if err != nil {
		panic(err) // the settings above are valid
	}
	r := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float32, s.batch*m.InputSize()), make([]int, s.batch)
	for i := range x {
		x[i] = r.Float32()
	}
	for i := range y {
		y[i] = r.IntN(s.spec.Classes)
	}
	opt, _ := nn.NewOptimizer(nn.OptimizerSpec{Name: "sgd", LR: 0.01, Momentum: 0.9}, m.NumParams())
	return m, opt, x, y
}
