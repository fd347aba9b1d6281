package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/report"
)

// demoStrategies are the demo's columns. On a 5-regular graph a node
// aggregates 6 models, so the trimmed mean drops f = 1 at each end (with
// f = 2 it would average the middle two: the median).
var demoStrategies = []experiment.StrategyConfig{
	{Name: "local"},
	{Name: "fedavg", Weighting: "uniform"},
	{Name: "robust", Rule: "median"},
	{Name: "robust", Rule: "trimmed_mean", F: experiment.FCount(1)},
}

// demoCmd runs the framework's main job on the embedded MNIST: nodes on a
// 5-regular graph learn together while some of them lie, under several
// strategies side by side, each written as a run directory.
func demoCmd(o *options) *cobra.Command {
	base := experiment.DefaultConfig()
	base.Name, base.Nodes, base.Rounds, base.FinalRounds = "demo", 20, 10, 3
	base.Data.Samples = 12000
	base.Model.Hidden = []int{128}
	base.Training.LR, base.Training.Momentum = 0.05, 0.5
	base.Topology.Kind, base.Topology.K = "kregular", 5
	base.Adversary.Fraction, base.Adversary.Attack, base.Adversary.Sigma = 0.3, "gaussian", 10
	c := &cobra.Command{
		Use:   "demo",
		Short: "nodes learn the embedded MNIST together while some lie: local-only, FedAvg, median, trimmed mean",
		Args:  cobra.NoArgs,
	}
	f := c.Flags()
	f.IntVar(&base.Nodes, "nodes", base.Nodes, "number of nodes")
	f.IntVar(&base.Rounds, "rounds", base.Rounds, "rounds of train → share → combine")
	f.Float64Var(&base.Adversary.Fraction, "byzantine", base.Adversary.Fraction, "fraction of lying nodes, in [0, 1)")
	f.Float64Var(&base.Adversary.Sigma, "sigma", base.Adversary.Sigma, "standard deviation of the Gaussian noise liars add to what they send")
	f.IntVar(&base.Data.Samples, "samples", base.Data.Samples, "training images split across the nodes (0: all 60,000)")
	f.Uint64Var(&base.Seed, "seed", base.Seed, "experiment seed")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if base.Nodes < 2 {
			return fmt.Errorf("demo: --nodes %d: need at least 2", base.Nodes)
		}
		base.Topology.K = min(5, base.Nodes-1)
		out := o.out
		if out == "" {
			out = filepath.Join("runs", "demo")
		}
		cfgs := make([]experiment.Config, len(demoStrategies))
		for i, s := range demoStrategies {
			cfgs[i] = base
			cfgs[i].Strategy = s
			if s.Weighting == "" {
				cfgs[i].Strategy.Weighting = "uniform"
			}
			cfgs[i].Name = "demo-" + cfgs[i].Label()
			cfgs[i].Run.Workers = max(1, runtime.GOMAXPROCS(0)/len(demoStrategies))
			if err := cfgs[i].Validate(); err != nil {
				return fmt.Errorf("demo: %w", err)
			}
		}
		return runDemo(cmd, o, cfgs, out)
	}
	return c
}

func runDemo(cmd *cobra.Command, o *options, cfgs []experiment.Config, out string) error {
	w := o.stdout
	b := cfgs[0]
	if !o.json {
		fmt.Fprintf(w, "trellis demo: %d nodes learn MNIST together on a %d-regular graph; %.0f %% of them lie\n",
			b.Nodes, b.Topology.K, 100*b.Adversary.Fraction)
		fmt.Fprintf(w, "(they add Gaussian noise, σ = %g, to every model they send).\n", b.Adversary.Sigma)
		fmt.Fprintf(w, "Data: embedded MNIST, %d training images split by Dirichlet(%g); MLP 784-%d-10; 1 local epoch per round.\n",
			b.Data.Samples, b.Partition.Alpha, b.Model.Hidden[0])
		fmt.Fprintf(w, "Accuracy of the honest nodes on the 10,000-image global test set:\n\n%5s", "round")
		for _, c := range cfgs {
			fmt.Fprintf(w, "  %17s", c.Label())
		}
		fmt.Fprintln(w)
	}
	start := time.Now()
	dirs := make([]string, len(cfgs))
	for k, c := range cfgs {
		dirs[k] = filepath.Join(out, dirName(c.Label()))
	}
	fins, err := experiment.RunSideBySide(cmd.Context(), cfgs, dirs, func(round int, rs []*metrics.Round) {
		if o.json {
			return
		}
		fmt.Fprintf(w, "%5d", round+1)
		for _, r := range rs {
			fmt.Fprintf(w, "  %16.1f%%", 100*r.HonestGlobalAcc)
		}
		fmt.Fprintln(w)
	})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if _, err := report.Results(out); err != nil {
		return fmt.Errorf("demo: report: %w", err)
	}
	if o.json {
		res := map[string]experiment.Final{}
		for k, c := range cfgs {
			res[c.Label()] = fins[k]
		}
		return jsonOut(w, res)
	}
	fmt.Fprintf(w, "\nFinal (mean of the last %d rounds):\n\n| strategy | honest global accuracy | honest local accuracy | delta_max |\n|---|---:|---:|---:|\n", b.FinalRounds)
	for k, c := range cfgs {
		f := fins[k]
		fmt.Fprintf(w, "| %s | %.1f %% | %.1f %% | %.2f |\n", c.Label(), 100*f.HonestGlobalAcc, 100*f.HonestLocalAcc, f.DeltaMax)
	}
	fmt.Fprintf(w, "\ndelta_max is the largest total weight an honest node gave to liars.\n")
	fmt.Fprintf(w, "Run directories, results.md and plots (accuracy.png, .svg) in %s.\nDone in %.1f s; every number is reproducible from --seed %d.\n",
		out, time.Since(start).Seconds(), b.Seed)
	return nil
}

// dirName turns a label such as "trimmed_mean(f=1)" into a directory name
// that needs no quoting in a shell: "trimmed_mean-f1".
func dirName(label string) string {
	return strings.NewReplacer("(", "-", ")", "", "=", "", " ", "_").Replace(label)
}

func ptr[T any](v T) *T { return &v }
