package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/sim"
	"github.com/trellis-fl/trellis/strategy"
)

// demo runs the framework's main job on the embedded MNIST: nodes learn
// together on a graph while some of them lie, under three strategies side
// by side (local-only, FedAvg, coordinate-wise median), and prints the
// honest nodes' accuracy on the global test set after every round.
func demo(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nodes := fs.Int("nodes", 10, "number of nodes")
	rounds := fs.Int("rounds", 10, "rounds of train → share → combine")
	byz := fs.Float64("byzantine", 0.3, "fraction of lying nodes, in [0, 1)")
	sigma := fs.Float64("sigma", 10, "standard deviation of the Gaussian noise liars add to what they send")
	pool := fs.Int("samples", 12000, "training images split across the nodes (up to 60,000)")
	seed := fs.Uint64("seed", 1, "experiment seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *nodes < 2:
		return fmt.Errorf("demo: -nodes %d: need at least 2", *nodes)
	case *rounds < 1:
		return fmt.Errorf("demo: -rounds %d: need at least 1", *rounds)
	case !(*byz >= 0 && *byz < 1):
		return fmt.Errorf("demo: -byzantine %v: allowed range [0, 1)", *byz)
	case *pool < *nodes*10:
		return fmt.Errorf("demo: -samples %d: need at least 10 per node", *pool)
	}
	var atk attack.Attack
	if *byz > 0 {
		var err error
		if atk, err = attack.New("gaussian", attack.Params{Sigma: *sigma}); err != nil {
			return fmt.Errorf("demo: -sigma: %w", err)
		}
	}
	tt, err := data.MNIST()
	if err != nil {
		return err
	}
	strategies := []struct {
		name string
		make func() strategy.Strategy
	}{
		{"local-only", func() strategy.Strategy { return strategy.Local{} }},
		{"fedavg", func() strategy.Strategy { return &strategy.FedAvg{} }},
		{"median", func() strategy.Strategy {
			r, _ := aggregate.New("median", 0)
			return &strategy.RobustRule{Rule: r}
		}},
	}
	liars, _ := sim.ChooseByzantine(*nodes, *byz, *seed)
	fmt.Fprintf(stdout, "trellis demo: %d nodes learn MNIST together on a complete graph; %d of them lie\n", *nodes, len(liars))
	fmt.Fprintf(stdout, "(they add Gaussian noise, σ = %g, to every model they send).\n", *sigma)
	fmt.Fprintf(stdout, "Data: embedded MNIST, %d training images split by Dirichlet(0.5); MLP 784-128-10; 1 local epoch per round.\n", *pool)
	fmt.Fprintf(stdout, "Accuracy of the honest nodes on the 10,000-image global test set:\n\n")
	fmt.Fprintf(stdout, "%5s", "round")
	for _, s := range strategies {
		fmt.Fprintf(stdout, "  %10s", s.name)
	}
	fmt.Fprintln(stdout)

	type report struct {
		strategy, round int
		acc, delta      float64
		err             error
	}
	ch := make(chan report)
	start := time.Now()
	workers := max(1, runtime.GOMAXPROCS(0)/len(strategies))
	for k, s := range strategies {
		x := experiment.Setup{
			Data: tt, Pool: *pool, Nodes: *nodes, Rounds: *rounds, GlobalTest: -1, Seed: *seed,
			Partition: data.PartitionConfig{Method: data.Dirichlet, Alpha: 0.5},
			Model:     nn.Spec{Kind: "mlp", Input: []int{1, 28, 28}, Hidden: []int{128}, Classes: 10},
			Optimizer: nn.OptimizerSpec{Name: "sgd", LR: 0.05, Momentum: 0.5},
			Strategy:  s.make, Byzantine: *byz, Attack: atk, Workers: workers,
		}
		go func() {
			err := x.Run(context.Background(), sim.SinkFunc(func(r *sim.Round) error {
				ch <- report{strategy: k, round: r.Round, acc: r.HonestGlobalAcc, delta: r.DeltaMax}
				return nil
			}))
			if err != nil {
				ch <- report{strategy: k, round: -1, err: err}
			}
		}()
	}
	// Print round r once every strategy has finished it.
	acc := make([][]float64, *rounds)
	delta := make([][]float64, *rounds)
	for r := range acc {
		acc[r], delta[r] = make([]float64, len(strategies)), make([]float64, len(strategies))
	}
	got := make([]int, *rounds)
	next := 0
	for next < *rounds {
		rep := <-ch
		if rep.err != nil {
			return fmt.Errorf("demo: %s: %w", strategies[rep.strategy].name, rep.err)
		}
		acc[rep.round][rep.strategy], delta[rep.round][rep.strategy] = rep.acc, rep.delta
		got[rep.round]++
		for next < *rounds && got[next] == len(strategies) {
			fmt.Fprintf(stdout, "%5d", next+1)
			for _, a := range acc[next] {
				fmt.Fprintf(stdout, "  %9.1f%%", 100*a)
			}
			fmt.Fprintln(stdout)
			next++
		}
	}
	last := *rounds - 1
	var b strings.Builder
	for k, s := range strategies {
		fmt.Fprintf(&b, "%s %.2f", s.name, delta[last][k])
		if k < len(strategies)-1 {
			b.WriteString(", ")
		}
	}
	fmt.Fprintf(stdout, "\nLargest total weight an honest node gave to liars in the last round (delta_max): %s.\n", b.String())
	fmt.Fprintf(stdout, "Done in %.1f s. Every number above is reproducible from -seed %d.\n", time.Since(start).Seconds(), *seed)
	return nil
}
