package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
)

func sweepInto(t *testing.T, toml string, edit func(c *config.Config)) string {
	t.Helper()
	c, err := config.Parse([]byte(`
name = "tiny"
nodes = 4
rounds = 3
[data]
samples = 800
[model]
hidden = [16]
[evaluation]
global_test = 500
`+toml), "tiny.toml")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&c)
	}
	out := t.TempDir()
	if _, err := experiment.RunSweep(t.Context(), c, out, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

// The report of a sweep: the results table and both kinds of plots.
func TestResultsOfASweep(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	out := sweepInto(t, `
[adversary]
attack = "gaussian"
[sweep]
seeds = [1, 2]
[sweep.grid]
"adversary.fraction" = [0.0, 0.25]
`, nil)
	md, err := Results(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, "0.25") || !strings.Contains(md, "±") || !strings.Contains(md, "final honest global accuracy (fraction)") ||
		!strings.Contains(md, "rounds count from 0") || strings.Contains(md, "final_honest") {
		t.Errorf("results table (labelled, with the convention):\n%s", md)
	}
	for _, f := range []string{"results.md", "accuracy_fraction-0.25.png", "accuracy_fraction-0.svg",
		"final-vs-adversary.fraction.png", "final-vs-adversary.fraction.svg"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("report file %s: %v", f, err)
		}
	}
}

// A sweep of DMTT and local-only writes trust curves for DMTT only; the
// report plots them and PivotDir tabulates them for the runs that have
// them.
func TestTrustMetricsReachTheReport(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	out := sweepInto(t, `
[topology]
kind = "mobility"
[adversary]
attack = "gaussian"
[sweep.grid]
"adversary.fraction" = [0.25, 0.5]
[sweep.variants.dmtt]
"strategy.name" = "dmtt"
[sweep.variants.local]
"strategy.name" = "local"
"adversary.liar" = ""
`, func(c *config.Config) {
		c.Nodes, c.Rounds = 8, 2
		// The evidential head and DMTT go in after parsing (the base
		// config is softmax).
		c.Model.Head, c.Strategy.Name, c.Adversary.Liar = "evidential", "dmtt", "omission"
	})
	if _, err := Results(out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "trust_fraction-0.25.png")); err != nil {
		t.Errorf("no trust plot: %v", err)
	}
	q := PivotQuery{Rows: "label", Cols: "adversary.fraction", Decimals: 2}
	for _, c := range []struct {
		metric  string
		methods []string
	}{{"trust_neighbor_honest", []string{"dmtt"}}, {"max_delta_max", []string{"dmtt", "local"}}} {
		q.Metric = c.metric
		tab, err := PivotDir(out, q)
		if err != nil {
			t.Fatalf("%s: %v", c.metric, err)
		}
		for _, m := range []string{"dmtt", "local"} {
			if strings.Contains(tab, "| "+m+" ") != slices.Contains(c.methods, m) {
				t.Errorf("%s table, row %s: want rows %v:\n%s", c.metric, m, c.methods, tab)
			}
		}
	}
}
