package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
)

func TestDifference(t *testing.T) {
	for _, c := range []struct {
		a, b float64
		want string
	}{
		{0.5, 0.4877, "0.012 above"},
		{0.4, 0.3996, "level with"},
		{0.3996, 0.4, "level with"},
		{0.1, 0.4, "0.300 below"},
	} {
		if got := difference(c.a, c.b); got != c.want {
			t.Errorf("difference(%v, %v) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

// The demo's runs: one per strategy, in the table's order, each with f =
// auto, the graph's degree capped at nodes − 1, named after its label.
func TestNewDemo(t *testing.T) {
	base := DemoBase()
	base.Nodes = 4
	d, err := NewDemo(base)
	if err != nil {
		t.Fatal(err)
	}
	var labels, names []string
	for _, c := range d.Configs {
		labels, names = append(labels, c.Label()), append(names, c.Name)
		if c.Topology.K != 3 || c.Nodes != 4 || c.Strategy.F == nil {
			t.Errorf("%s: k = %d, nodes %d, f %v; want 3, 4, auto", c.Label(), c.Topology.K, c.Nodes, c.Strategy.F)
		}
	}
	if got := strings.Join(labels, " "); got != "local fedavg trimmed_mean(f=auto) balance ubar" {
		t.Errorf("labels %s", got)
	}
	if got := strings.Join(names, " "); got != "demo-local demo-fedavg demo-trimmed_mean-fauto demo-balance demo-ubar" {
		t.Errorf("names %s", got)
	}
	if got := d.Dirs("out")[2]; got != filepath.Join("out", "trimmed_mean-fauto") {
		t.Errorf("the trimmed mean's directory %s", got)
	}
	base.Nodes = 1
	if _, err := NewDemo(base); err == nil || !strings.Contains(err.Error(), "nodes = 1") {
		t.Errorf("one node: %v", err)
	}
	base = DemoBase()
	base.Rounds = 0
	if _, err := NewDemo(base); err == nil || !strings.Contains(err.Error(), "rounds = 0") {
		t.Errorf("no rounds: %v", err)
	}
}

// The story told with made-up final numbers, each difference worked out by
// hand: the default demo has 20 nodes of which 6 lie, on a 5-regular graph,
// so f = auto is ⌈0.3 · 5⌉ = 2 and 14 nodes are honest.
func TestDemoTellsTheStory(t *testing.T) {
	d, err := NewDemo(DemoBase())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	d.WriteIntro(&b)
	d.WriteRow(&b, 0, []*metrics.Round{{HonestGlobalAcc: 0.25}, {HonestGlobalAcc: 0.5}, {HonestGlobalAcc: 0.125}, {HonestGlobalAcc: 1}, {HonestGlobalAcc: 0}})
	fins := []rundir.Final{
		{HonestGlobalAcc: 0.336, HonestLocalAcc: 0.741},                    // local
		{HonestGlobalAcc: 0.162, HonestLocalAcc: 0.197, DeltaMax: 1.0 / 3}, // fedavg: 0.174 and 0.544 below
		{HonestGlobalAcc: 0.495, HonestLocalAcc: 0.666},                    // trimmed mean: 0.159 above, 0.075 below
		{HonestGlobalAcc: 0.336, HonestLocalAcc: 0.755},                    // balance: level, 0.014 above
		{HonestGlobalAcc: 0.384, HonestLocalAcc: 0.679, DeltaMax: 0.25},    // ubar: 0.048 above, 0.062 below
	}
	if err := d.WriteSummary(&b, fins, "runs/demo", 28.46); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"trellis demo: 20 nodes learn MNIST together on a 5-regular graph; a fraction 0.3 of them lie\n",
		"12000 training images split by Dirichlet(0.5); MLP 784-128-10",
		"Honest global accuracy (fraction) on the 10,000-image global test set; rounds count from 0:\n\nround              local             fedavg  trimmed_mean(f=auto)",
		"\n    0              0.250              0.500              0.125              1.000              0.000\n",
		"\nFinal (mean of the last 3 rounds):\n",
		"| fedavg | 0.162 | 0.197 | 0.33 |\n",
		"- fedavg averages its own and its 5 neighbours' models equally, so every liar's noise (σ = 10) enters with weight 1/6: 0.174 below local-only in global accuracy, 0.544 below in local accuracy.\n",
		"drops the f = 2 largest and smallest values of each coordinate (f = ⌈0.3 · 5⌉ from the declared fraction; with 6 inputs that is the median)",
		" of 14 honest nodes with more, and it also averages away a node's own label mix: 0.159 above local-only in global accuracy, 0.075 below in local accuracy.\n",
		"(delta_max 0.00), and mixes the accepted ones half and half with its own: level with local-only in global accuracy, 0.014 above in local accuracy.\n",
		"(delta_max 0.25): 0.048 above local-only in global accuracy, 0.062 below in local accuracy.\n",
		"in runs/demo.\nDone in 28.5 s; every number is reproducible from --seed 1.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the demo's story lacks %q:\n%s", want, got)
		}
	}
	if f := d.Finals(fins); len(f) != 5 || f["trimmed_mean(f=auto)"] != fins[2] {
		t.Errorf("finals by label %v", f)
	}
}

// The demo's plot draws the accuracy its printed table shows — honest
// global accuracy — for every strategy, local-only included (whose own
// headline elsewhere is local accuracy), and says so.
func TestDemoPlotIsTheTablesAccuracy(t *testing.T) {
	base := DemoBase()
	base.Nodes, base.Rounds, base.Data.Samples, base.Model.Kind, base.Evaluation.GlobalTest = 4, 2, 400, "logreg", 100
	d, err := NewDemo(base)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for k, dir := range d.Dirs(out) {
		if _, err := experiment.RunToDir(t.Context(), d.Configs[k], dir, nil); err != nil {
			t.Fatal(err)
		}
	}
	var intro bytes.Buffer
	d.WriteIntro(&intro)
	if !strings.Contains(intro.String(), capital(Label("honest_global_acc"))) {
		t.Fatalf("the table is not of global accuracy: %s", intro.String())
	}
	md, err := d.Report(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, "The accuracy plots show honest global accuracy.") {
		t.Errorf("results.md does not say the plots show global accuracy:\n%s", md)
	}
	svg, err := os.ReadFile(filepath.Join(out, "accuracy.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg, []byte(Label("honest_global_acc"))) || bytes.Contains(svg, []byte("(local)")) {
		t.Errorf("accuracy.svg is not labelled with global accuracy for every run")
	}
}
