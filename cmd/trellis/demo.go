package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/report"
)

// demoCmd runs the framework's main job on the embedded MNIST: nodes on a
// 5-regular graph learn together while some of them lie, under several
// strategies side by side, each written as a run directory (report.Demo
// holds the runs and tells their story).
func demoCmd(o *options) *cobra.Command {
	base := report.DemoBase()
	c := &cobra.Command{
		Use:   "demo",
		Short: "nodes learn the embedded MNIST together while some lie: local-only, FedAvg, trimmed mean with f = auto, BALANCE, UBAR",
		Long: `Nodes learn the embedded MNIST together while some lie: local-only, FedAvg, the
trimmed mean with f = auto, BALANCE and UBAR side by side, one run directory each.
As every output of trellis: accuracies are fractions (0–1) and rounds count from 0.`,
		Args: cobra.NoArgs,
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
		d, err := report.NewDemo(base)
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		out, err := o.outDir(filepath.Join("runs", "demo"))
		if err != nil {
			return err
		}
		return runDemo(cmd, o, d, out)
	}
	return c
}

func runDemo(cmd *cobra.Command, o *options, d *report.Demo, out string) error {
	w := o.stdout
	if !o.json {
		d.WriteIntro(w)
	}
	start := time.Now()
	fins, err := experiment.RunSideBySide(cmd.Context(), d.Configs, d.Dirs(out), func(round int, rs []*metrics.Round) {
		if !o.json {
			d.WriteRow(w, round, rs)
		}
	})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if _, err := d.Report(out); err != nil {
		return fmt.Errorf("demo: report: %w", err)
	}
	if o.json {
		return jsonOut(w, d.Finals(fins))
	}
	if err := d.WriteSummary(w, fins, out, time.Since(start).Seconds()); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}
