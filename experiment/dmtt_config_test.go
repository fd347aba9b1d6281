package experiment

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/configs"
	"github.com/trellis-fl/trellis/sim"
)

func TestDMTTConfigErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"[strategy]\nname = \"dmtt\"", `model.head = "softmax"`},
		{"[model]\nhead = \"evidential\"\n[strategy]\nname = \"murmura\"\n[partition]\nsplit = [0.8, 0.0, 0.2]", "validation split"},
		{"[adversary]\nliar = \"omission\"", "need the trust layer"},
		{"[adversary]\nliar = \"fibber\"\n[trust]\nenabled = true", `adversary.liar = "fibber"`},
		{"[trust]\nenabled = true\nbudget = 0", "Budget"},
		{"[model]\nhead = \"evidential\"\n[strategy]\nname = \"dmtt\"\n[strategy.options]\nb = 2.5", "b = 2.5"},
		{"[model]\nhead = \"evidential\"\n[strategy]\nname = \"dmtt\"\n[strategy.options]\ntau_trust = 1.5", "tau_trust = 1.5"},
	} {
		_, err := ParseConfig([]byte(c.text), "t")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one mentioning %q", c.text, err, c.want)
		}
	}
	ok := "[model]\nhead = \"evidential\"\n[strategy]\nname = \"dmtt\"\n[strategy.options]\ntau_trust = 0.5\n[trust]\nlambda = 0.7\n[adversary]\nfraction = 0.2\nliar = \"inflation\"\nclaim_flood = true"
	c, err := ParseConfig([]byte(ok), "t")
	if err != nil {
		t.Fatal(err)
	}
	tc, err := c.trustConfig()
	if err != nil || tc == nil || tc.TauTrust != 0.5 || tc.Lambda != 0.7 {
		t.Errorf("trust config %+v, %v: want τ_trust 0.5 from the dmtt option and λ 0.7", tc, err)
	}
	if a := c.claimAttack(); a.Liar != sim.LiarInflation || !a.Flood || a.Forge {
		t.Errorf("claim attack %+v", a)
	}
}

// TestDMTTQuickPresetRunsShort runs every variant of the quick main
// comparison for 2 rounds on 10 nodes: a smoke test of the committed preset.
func TestDMTTQuickPresetRunsShort(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	b, ok := configs.Read("dmtt/main-quick")
	if !ok {
		t.Fatal("preset dmtt/main-quick missing")
	}
	c, err := ParseConfig(b, "dmtt/main-quick")
	if err != nil {
		t.Fatal(err)
	}
	runs, _, err := c.Expand()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]bool{}
	for _, r := range runs {
		rc := r.Config
		if rc.Adversary.Fraction != 0.5 {
			continue
		}
		rc.Nodes, rc.Rounds, rc.Data.Samples = 10, 2, 1000
		rc.Model.Hidden = []int{16}
		s, err := rc.Setup(loadMNIST(t))
		if err != nil {
			t.Fatalf("%s: %v", rc.Label(), err)
		}
		var final *sim.Round
		if err := s.Run(t.Context(), sim.SinkFunc(func(r *sim.Round) error { final = r; return nil })); err != nil {
			t.Fatalf("%s: %v", rc.Label(), err)
		}
		labels[rc.Label()] = true
		if rc.Strategy.Name == "dmtt" && (final.Trust == nil || final.DeltaMax != 0) {
			t.Errorf("dmtt: trust diagnostics %v, delta_max %v", final.Trust, final.DeltaMax)
		}
	}
	if len(labels) != 8 {
		t.Errorf("ran %d methods, want 8: %v", len(labels), labels)
	}
}

// TestTrustMetricsReachTheReport: a sweep of DMTT and local-only writes
// trust curves for DMTT only; the report plots them and --metric
// tabulates them for the runs that have them.
func TestTrustMetricsReachTheReport(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	c := tinyConfig(t, `
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
`)
	c.Nodes, c.Rounds = 8, 2
	// tinyConfig's [model] is softmax: the evidential head and DMTT go in
	// after parsing.
	c.Model.Head, c.Strategy.Name, c.Adversary.Liar = "evidential", "dmtt", "omission"
	out := t.TempDir()
	if _, err := RunSweep(t.Context(), c, out, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Report(out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "trust_"+safeName("adversary.fraction=0.25")+".png")); err != nil {
		t.Errorf("no trust plot: %v", err)
	}
	q := PivotQuery{Rows: "label", Cols: "adversary.fraction", Decimals: 2}
	for _, c := range []struct {
		metric  string
		methods []string
	}{{"trust_neighbor_honest", []string{"dmtt"}}, {"max_delta_max", []string{"dmtt", "local"}}} {
		q.Metric = c.metric
		tab, err := Pivot(out, q)
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
