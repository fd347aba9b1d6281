// Command round times rounds of the simulator at the scale of the
// round protocol's performance target: N nodes (default 100), MNIST,
// MLP 784-256-128-10, Dirichlet 0.5, 1 local epoch, batch 32, SGD lr 0.01,
// FedAvg on a 5-regular graph. It prints seconds per round and the peak RSS,
// and can export the partition so bench/torch_round.py does the same work:
//
//	go run ./bench/round -nodes 100 -rounds 3 -export /tmp/part.json
//	go run ./bench/round -nodes 1000 -rounds 1     # the memory target
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"syscall"

	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/internal/cpu"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/sim"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
)

func main() {
	n := flag.Int("nodes", 100, "number of nodes")
	rounds := flag.Int("rounds", 3, "rounds to run (the first is reported separately as warm-up)")
	export := flag.String("export", "", "write each node's training indices as JSON to this file")
	s := flag.Uint64("seed", 1, "experiment seed")
	prof := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*n, *rounds, *export, *s); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(n, rounds int, export string, s uint64) error {
	tt, err := data.MNIST()
	if err != nil {
		return err
	}
	var times []float64
	var graph *topology.Graph
	x := experiment.Setup{
		Data: tt, Nodes: n, Rounds: rounds, EvalEvery: rounds, Seed: s,
		Partition: data.PartitionConfig{Method: data.Dirichlet, Alpha: 0.5},
		Model:     nn.Spec{Kind: "mlp", Input: []int{1, 28, 28}, Hidden: []int{256, 128}, Classes: 10},
		Optimizer: nn.OptimizerSpec{Name: "sgd", LR: 0.01},
		Batch:     32,
		Local:     nn.TrainConfig{Epochs: 1},
		Graph: func(n int, s uint64) (topology.Dynamic, error) {
			g, err := topology.KRegular(n, 5, s)
			graph = g
			return topology.Static(g), err
		},
		Strategy: func() strategy.Strategy { return &strategy.FedAvg{} },
		Timings:  func(tm metrics.Timing) { times = append(times, tm.Seconds) },
	}
	b, err := x.Build()
	if err != nil {
		return err
	}
	if export != "" {
		if err := exportSplits(export, b.Splits, graph); err != nil {
			return err
		}
	}
	fmt.Printf("%d nodes, MLP 784-256-128-10, Dirichlet 0.5, 5-regular graph, GOMAXPROCS %d, kernels %s (%s=%q)\n",
		n, runtime.GOMAXPROCS(0), cpu.Level(), cpu.EnvVar, os.Getenv(cpu.EnvVar))
	err = sim.Run(context.Background(), b.Config, b.Nodes, metrics.SinkFunc(func(r *metrics.Round) error {
		fmt.Printf("round %d: %.3f s (honest local accuracy %.3f)\n", r.Round, times[len(times)-1], r.HonestLocalAcc)
		return nil
	}))
	if err != nil {
		return err
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		fmt.Printf("peak RSS %.2f GiB\n", float64(ru.Maxrss)*1024/(1<<30))
	}
	fmt.Printf("seconds_per_round %.3f\n", slices.Min(times))
	return nil
}

// exportSplits writes {"train": [[indices of node 0], …], "neighbors": [[…], …]}.
func exportSplits(path string, splits []data.ClientSplit, g *topology.Graph) error {
	out := struct {
		Train     [][]int32 `json:"train"`
		Neighbors [][]int   `json:"neighbors"`
	}{}
	for i, sp := range splits {
		out.Train = append(out.Train, sp.Train)
		out.Neighbors = append(out.Neighbors, g.In(i))
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
