// Command mnist trains the learning core's models on the embedded MNIST with
// the learning-core recipe (batch 64, SGD lr 0.05, momentum 0.9)
// at full size and prints the test accuracy after every epoch:
//
//	go run ./bench/mnist                  # MLP 784-256-128-10 and FEMNIST CNN, 3 epochs
//	go run ./bench/mnist -model mlp -seeds 5
//
// The end-to-end tests in nn/mnist_test.go run a shortened version.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"time"

	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/nn"
)

func main() {
	model := flag.String("model", "both", "mlp, cnn or both")
	epochs := flag.Int("epochs", 3, "passes over the training set")
	seeds := flag.Int("seeds", 1, "number of seeds (1, 2, …) to run")
	trainN := flag.Int("train", 0, "use only the first N training images (0 = all 60,000)")
	threads := flag.Int("threads", runtime.GOMAXPROCS(0), "matrix-product threads")
	lr := flag.Float64("lr", 0.05, "SGD learning rate (momentum 0.9)")
	standardize := flag.Bool("standardize", false, "standardize pixels with MNIST's mean 0.1307 and std 0.3081")
	flag.Parse()

	tt, err := data.MNIST()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	specs := map[string]nn.Spec{
		"mlp": {Kind: "mlp", Input: []int{1, 28, 28}, Hidden: []int{256, 128}, Classes: 10},
		"cnn": {Kind: "femnist_cnn", Input: []int{1, 28, 28}, Classes: 10},
	}
	names := []string{*model}
	if *model == "both" {
		names = []string{"mlp", "cnn"}
	}
	idx := tt.Train.All()
	if *trainN > 0 && *trainN < len(idx) {
		idx = idx[:*trainN]
	}
	for _, name := range names {
		spec, ok := specs[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown model %q (want mlp, cnn or both)\n", name)
			os.Exit(2)
		}
		for seed := uint64(1); seed <= uint64(*seeds); seed++ {
			if err := run(name, spec, tt, idx, *epochs, seed, *threads, *lr, *standardize); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	}
}

func run(name string, spec nn.Spec, tt data.TrainTest, idx []int32, epochs int, seed uint64, threads int, lr float64, standardize bool) error {
	m, err := nn.Build(spec, seed, nn.Options{Batch: 64, Threads: threads})
	if err != nil {
		return err
	}
	defer m.Close()
	opt, err := nn.NewOptimizer(nn.OptimizerSpec{Name: "sgd", LR: lr, Momentum: 0.9}, m.NumParams())
	if err != nil {
		return err
	}
	var tf data.Transform
	if standardize {
		tf = data.MNISTStandardize
	}
	train := data.NewBatcher(tt.Train, idx, rand.New(rand.NewPCG(seed, 1)), tf)
	test := data.NewBatcher(tt.Test, tt.Test.All(), nil, tf)
	rng := rand.New(rand.NewPCG(seed, 2))
	for e := 1; e <= epochs; e++ {
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
		fmt.Printf("%s seed %d epoch %d: train loss %.4f, test accuracy %.4f (%.0f samples/s)\n",
			name, seed, e, tr.MeanLoss, res.Accuracy, float64(tr.Samples)/secs)
	}
	return nil
}
