package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/nn"
)

// demo trains one model on the embedded MNIST with the learning core's
// reference recipe and prints the test accuracy after each epoch. It needs
// nothing but the binary. (The federated demo — many nodes, some lying —
// replaces it once the simulator lands.)
func demo(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	epochs := fs.Int("epochs", 1, "passes over the 60,000 training images")
	model := fs.String("model", "mlp", "mlp (784-256-128-10) or cnn (the FEMNIST CNN)")
	threads := fs.Int("threads", runtime.GOMAXPROCS(0), "threads for matrix products")
	seed := fs.Uint64("seed", 1, "seed of initialization, shuffling and dropout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *epochs < 1 {
		return fmt.Errorf("demo: -epochs %d: need at least 1", *epochs)
	}
	specs := map[string]nn.Spec{
		"mlp": {Kind: "mlp", Input: []int{1, 28, 28}, Hidden: []int{256, 128}, Classes: 10},
		"cnn": {Kind: "femnist_cnn", Input: []int{1, 28, 28}, Classes: 10},
	}
	spec, ok := specs[*model]
	if !ok {
		return fmt.Errorf("demo: -model %q: want mlp or cnn", *model)
	}

	tt, err := data.MNIST()
	if err != nil {
		return err
	}
	m, err := nn.Build(spec, *seed, nn.Options{Batch: 64, Threads: *threads})
	if err != nil {
		return err
	}
	defer m.Close()
	opt, err := nn.NewOptimizer(nn.OptimizerSpec{Name: "sgd", LR: 0.05, Momentum: 0.9}, m.NumParams())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "MNIST (embedded): %d training, %d test images\nmodel: %s\n",
		tt.Train.Len(), tt.Test.Len(), m.Describe())
	train := data.NewBatcher(tt.Train, tt.Train.All(), rand.New(rand.NewPCG(*seed, 1)), nil)
	test := data.NewBatcher(tt.Test, tt.Test.All(), nil, nil)
	rng := rand.New(rand.NewPCG(*seed, 2))
	for e := 1; e <= *epochs; e++ {
		start := time.Now()
		tr, err := m.Train(train, opt, nn.TrainConfig{Epochs: 1}, rng)
		if err != nil {
			return err
		}
		secs := time.Since(start).Seconds()
		res, err := m.Evaluate(test)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "epoch %d/%d: train loss %.4f, test accuracy %.2f%% (%.1f s, %.0f samples/s)\n",
			e, *epochs, tr.MeanLoss, 100*res.Accuracy, secs, float64(tr.Samples)/secs)
	}
	return nil
}
