package report

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
)

// Demo is `trellis demo`: nodes learn the embedded MNIST together on a
// 5-regular graph while some of them lie, under several strategies side
// by side (one config each), and the story of the result told in prose:
// what each strategy does with the liars and how it fared against
// local-only training. The caller runs the configs (experiment.RunSideBySide)
// and hands the rounds and final metrics to Demo's writers.
type Demo struct {
	// Configs are the columns' runs, in demoMethods' order.
	Configs []config.Config
}

// demoMethod is one column of the demo: a strategy, the label it is shown
// with, and the sentence that explains its final line (given the run's
// numbers and local-only's).
type demoMethod struct {
	label   string
	s       config.Strategy
	explain func(d demoFacts, f, local rundir.Final) string
}

// demoFacts are what the explanations quote besides the final metrics.
type demoFacts struct {
	k, fAuto, outnumbered, honest int
	liars, sigma                  float64
}

// demoMethods are the demo's columns: the baseline, the plain average the
// liars break, a robust rule with f = "auto" (derived from the declared
// fraction 0.3: on a 5-regular graph f = ⌈0.3·5⌉ = 2 of the 6 inputs, which makes
// the trimmed mean the median), and two personalized peer-side defences
// that judge neighbours against the node's own model.
var demoMethods = []demoMethod{
	{"local", config.Strategy{Name: "local"}, func(d demoFacts, f, _ rundir.Final) string {
		return "trains on its own data only: the baseline a defence must not fall below, and out of the liars' reach."
	}},
	{"fedavg", config.Strategy{Name: "fedavg", Weighting: "uniform"}, func(d demoFacts, f, l rundir.Final) string {
		return fmt.Sprintf("averages its own and its %d neighbours' models equally, so every liar's noise (σ = %g) enters with weight 1/%d: %s.",
			d.k, d.sigma, d.k+1, versus(f, l))
	}},
	{"trimmed_mean(f=auto)", config.Strategy{Name: "robust", Rule: "trimmed_mean"}, func(d demoFacts, f, l rundir.Final) string {
		return fmt.Sprintf("drops the f = %d largest and smallest values of each coordinate (f = ⌈%g · %d⌉ from the declared fraction; with %d inputs that is the median); it holds at nodes with at most %d lying neighbours and breaks at the %d of %d honest nodes with more, and it also averages away a node's own label mix: %s.",
			d.fAuto, d.liars, d.k, d.k+1, d.fAuto, d.outnumbered, d.honest, versus(f, l))
	}},
	{"balance", config.Strategy{Name: "balance"}, func(d demoFacts, f, l rundir.Final) string {
		return fmt.Sprintf("accepts a neighbour only if its model is within 0.3·e^(−t/T) of its own model's norm, which the noisy models never are (delta_max %.2f), and mixes the accepted ones half and half with its own: %s.",
			f.DeltaMax, versus(f, l))
	}},
	{"ubar", config.Strategy{Name: "ubar"}, func(d demoFacts, f, l rundir.Final) string {
		return fmt.Sprintf("keeps the nearest fraction ρ = 0.4 of its neighbours to its own model, then only those whose loss on one of its own batches is no worse than its own (delta_max %.2f): %s.",
			f.DeltaMax, versus(f, l))
	}},
}

// versus compares a final line with local-only's, on the honest nodes'
// global accuracy (the demo's headline) and on their local accuracy, as
// differences of fractions (the convention of every output: accuracies
// are fractions, never percent).
func versus(f, local rundir.Final) string {
	return fmt.Sprintf("%s local-only in global accuracy, %s in local accuracy",
		difference(f.HonestGlobalAcc, local.HonestGlobalAcc), difference(f.HonestLocalAcc, local.HonestLocalAcc))
}

// difference says how a compares with b, to three decimals: "0.012
// above", "level with" (within half a thousandth) or "0.300 below".
func difference(a, b float64) string {
	d := a - b
	switch {
	case d >= 0.0005:
		return fmt.Sprintf("%.3f above", d)
	case d > -0.0005:
		return "level with"
	}
	return fmt.Sprintf("%.3f below", -d)
}

// demoHeadline is the accuracy the demo's table of rounds, its final
// table's first column and its plots all show: the honest nodes' global
// accuracy, for every strategy (local-only included), so that the plot
// and the printed table agree.
const demoHeadline = "honest_global_acc"

// Report writes the demo's results.md and plots into out, the accuracy
// drawn the one the printed table shows (demoHeadline) for every run.
func (d *Demo) Report(out string) (string, error) { return ResultsCurve(out, demoHeadline) }

// DemoBase is the demo's config before its columns' strategies: 20 nodes
// on a 5-regular graph, 10 rounds, 12,000 MNIST training images, an MLP
// with one hidden layer of 128, 30 % of the nodes adding Gaussian noise
// (σ = 10) to what they send. `trellis demo`'s flags change it.
func DemoBase() config.Config {
	base := config.Default()
	base.Name, base.Nodes, base.Rounds, base.FinalRounds = "demo", 20, 10, 3
	base.Data.Samples = 12000
	base.Model.Hidden = []int{128}
	base.Training.LR, base.Training.Momentum = 0.05, 0.5
	base.Topology.Kind, base.Topology.K = "kregular", 5
	base.Adversary.Fraction, base.Adversary.Attack, base.Adversary.Sigma = 0.3, "gaussian", 10
	return base
}

// NewDemo makes the demo's runs from base (DemoBase, changed): one per
// strategy, robust rules with f = "auto", the graph's degree at most
// nodes − 1, this machine's cores shared among the runs. Each config is
// checked; base needs at least 2 nodes.
func NewDemo(base config.Config) (*Demo, error) {
	if base.Nodes < 2 {
		return nil, fmt.Errorf("nodes = %d: need at least 2", base.Nodes)
	}
	base.Topology.K = min(5, base.Nodes-1)
	cfgs := make([]config.Config, len(demoMethods))
	for i, m := range demoMethods {
		cfgs[i] = base
		cfgs[i].Strategy = m.s
		if m.s.Weighting == "" {
			cfgs[i].Strategy.Weighting = "uniform"
		}
		cfgs[i].Strategy.Rule = cmp.Or(m.s.Rule, base.Strategy.Rule)
		cfgs[i].Strategy.F = config.AutoF()
		cfgs[i].RunLabel = m.label
		cfgs[i].Name = "demo-" + dirName(m.label)
		cfgs[i].Run.Workers = max(1, runtime.GOMAXPROCS(0)/len(demoMethods))
		if err := experiment.Check(cfgs[i]); err != nil {
			return nil, err
		}
	}
	return &Demo{Configs: cfgs}, nil
}

// Dirs are the runs' directories under out, named after their labels.
func (d *Demo) Dirs(out string) []string {
	dirs := make([]string, len(d.Configs))
	for k, c := range d.Configs {
		dirs[k] = filepath.Join(out, dirName(c.Label()))
	}
	return dirs
}

// WriteIntro tells what the demo runs and heads the table of rounds.
func (d *Demo) WriteIntro(w io.Writer) {
	b := d.Configs[0]
	fmt.Fprintf(w, "trellis demo: %d nodes learn MNIST together on a %d-regular graph; a fraction %g of them lie\n",
		b.Nodes, b.Topology.K, b.Adversary.Fraction)
	fmt.Fprintf(w, "(they add Gaussian noise, σ = %g, to every model they send). Robust rules take f = \"auto\" from that fraction.\n", b.Adversary.Sigma)
	fmt.Fprintf(w, "Data: embedded MNIST, %d training images split by Dirichlet(%g); MLP 784-%d-10; 1 local epoch per round.\n",
		b.Data.Samples, b.Partition.Alpha, b.Model.Hidden[0])
	fmt.Fprintf(w, "%s on the 10,000-image global test set; rounds count from 0:\n\n%5s", capital(Label(demoHeadline)), "round")
	for _, c := range d.Configs {
		fmt.Fprintf(w, "  %17s", c.Label())
	}
	fmt.Fprintln(w)
}

// WriteRow is a round's line of the table: each run's honest global
// accuracy.
func (d *Demo) WriteRow(w io.Writer, round int, rs []*metrics.Round) {
	fmt.Fprintf(w, "%5d", round)
	for _, r := range rs {
		fmt.Fprintf(w, "  %17.3f", r.HonestGlobalAcc)
	}
	fmt.Fprintln(w)
}

// Finals are the runs' final metrics by label (the demo's --json).
func (d *Demo) Finals(fins []rundir.Final) map[string]rundir.Final {
	res := map[string]rundir.Final{}
	for k, c := range d.Configs {
		res[c.Label()] = fins[k]
	}
	return res
}

// WriteSummary is the demo's ending: the final metrics of each run (fins,
// in Configs' order) as a table, a sentence per strategy explaining its
// line, where the files are (out) and how long it took.
func (d *Demo) WriteSummary(w io.Writer, fins []rundir.Final, out string, seconds float64) error {
	b := d.Configs[0]
	fmt.Fprintf(w, "\nFinal (mean of the last %d rounds):\n\n| strategy | %s | %s | %s |\n|---|---:|---:|---:|\n", b.FinalRounds,
		Label("honest_global_acc"), Label("honest_local_acc"), Label("delta_max"))
	for k, c := range d.Configs {
		f := fins[k]
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %.2f |\n", c.Label(), f.HonestGlobalAcc, f.HonestLocalAcc, f.DeltaMax)
	}
	facts, err := demoFactsOf(d.Configs)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nGlobal accuracy is on the 10,000 test images every node is also evaluated on; local accuracy on the\nnode's own test split (its own label mix). δ_max (delta_max in the files) is the largest total weight an\nhonest node gave to liars in a round. Each line:\n\n")
	for k, m := range demoMethods {
		fmt.Fprintf(w, "- %s %s\n", m.label, m.explain(facts, fins[k], fins[0]))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Run directories, results.md and plots of the same accuracy (accuracy.png, .svg) in %s.\nDone in %.1f s; every number is reproducible from --seed %d.\n",
		out, seconds, b.Seed)
	return nil
}

// demoFactsOf reads the numbers the explanations quote from the configs:
// the degree, the declared fraction, f = auto's resolution and how many
// honest nodes have more lying neighbours than it tolerates.
func demoFactsOf(cfgs []config.Config) (demoFacts, error) {
	b := cfgs[0]
	d := demoFacts{k: b.Topology.K, liars: b.Adversary.Fraction, sigma: b.Adversary.Sigma}
	for _, c := range cfgs {
		rec, err := experiment.FRecordOf(c)
		if err != nil {
			return d, err
		}
		if rec == nil {
			continue
		}
		for _, n := range rec.Nodes {
			if n.Byzantine {
				continue
			}
			d.honest++
			d.fAuto = max(d.fAuto, n.F)
			if n.ByzantineNeighbours > n.F {
				d.outnumbered++
			}
		}
		break
	}
	return d, nil
}

// dirName turns a label such as "trimmed_mean(f=1)" into a directory name
// that needs no quoting in a shell: "trimmed_mean-f1".
func dirName(label string) string {
	return strings.NewReplacer("(", "-", ")", "", "=", "", " ", "_").Replace(label)
}
