package report

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
)

// jsonNames lists the JSON names of a record type's fields, a nested
// struct's as prefix + "." + name.
func jsonNames(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, jsonNames(f.Type, prefix)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && name != "nodes" {
			out = append(out, jsonNames(ft, name+".")...)
			continue
		}
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && name != "scores" {
			continue // Round.Nodes: the node records, listed on their own
		}
		out = append(out, prefix+name)
	}
	return out
}

// Every metric a run records or a report derives has a label in the one
// table: every field of the round, node, trust, privacy and timing
// records, every summary.csv column, the report's derived curves and
// final metrics. No label is the raw name, and every label has a unit or
// is a count.
func TestLabelTableCoversEveryMetric(t *testing.T) {
	var names []string
	for _, v := range []any{metrics.Round{}, metrics.NodeRound{}, metrics.Timing{}} {
		names = append(names, jsonNames(reflect.TypeOf(v), "")...)
	}
	names = append(names, rundir.FinalColumns()...)
	names = append(names, "seed", "name", "max_delta_max", "final_honest_local_acc_std")
	for _, k := range trustCurves {
		names = append(names, k, "final_"+k)
	}
	if !slices.Contains(names, "trust.neighbor_byzantine") || !slices.Contains(names, "privacy.honest_max_epsilon") || !slices.Contains(names, "local_acc") {
		t.Fatalf("the record fields were not all found: %v", names)
	}
	for _, n := range names {
		m, ok := Describe(n)
		if !ok {
			t.Errorf("metric %q has no label in the table", n)
			continue
		}
		if strings.Contains(m.Label, "_acc") || strings.Contains(m.Label, n) && strings.Contains(n, "_") {
			t.Errorf("metric %q is labelled with a raw name: %q", n, m.Label)
		}
	}
	seen := map[string]bool{}
	for _, m := range Metrics() {
		if seen[m.Name] {
			t.Errorf("metric %q listed twice", m.Name)
		}
		seen[m.Name] = true
		if strings.Contains(m.Unit, "%") || strings.Contains(m.Label, "%") {
			t.Errorf("metric %q: %q (%s) — the convention is fractions, not percent", m.Name, m.Label, m.Unit)
		}
	}
	for name, want := range map[string]string{
		"final_honest_global_acc":   "final honest global accuracy (fraction)",
		"honest_local_acc":          "honest local accuracy (fraction)",
		"trust.neighbor_byzantine":  "mean topology trust in Byzantine neighbours (T_topo, 0–1)",
		"final_honest_max_epsilon":  "final largest ε of an honest node so far (ε at δ)",
		"round":                     "round (from 0)",
		"something_the_table_lacks": "something_the_table_lacks",
	} {
		if got := Label(name); got != want {
			t.Errorf("Label(%q) = %q, want %q", name, got, want)
		}
	}
}

// Plot file names are readable slugs: no '=', the swept key's short name
// and value, unique even where short names or values collide.
func TestPlotNames(t *testing.T) {
	keys := []string{"adversary.fraction", "partition.alpha", "strategy.options.alpha"}
	var combos []map[string]string
	for _, f := range []string{"0.1", "0.5"} {
		for _, a := range []string{"0.3", "1"} {
			combos = append(combos, map[string]string{keys[0]: f, keys[1]: a, keys[2]: "2"})
		}
	}
	// Two values that differ only in a character a file name cannot hold.
	combos = append(combos, map[string]string{keys[0]: "a/b", keys[1]: "1", keys[2]: "2"},
		map[string]string{keys[0]: "a:b", keys[1]: "1", keys[2]: "2"})
	names := plotNames(keys, combos)
	if names[0] != "_fraction-0.1_partition-alpha-0.3_strategy-options-alpha-2" {
		t.Errorf("first name %q", names[0])
	}
	seen := map[string]bool{}
	for _, n := range names {
		if strings.ContainsAny(n, "=/: ") {
			t.Errorf("plot name %q holds a character a file name should not", n)
		}
		if seen[n] {
			t.Errorf("plot name %q twice", n)
		}
		seen[n] = true
	}
	if got := plotNames([]string{"adversary.attack"}, []map[string]string{{"adversary.attack": "min_sum"}}); got[0] != "_attack-min_sum" {
		t.Errorf("one key: %q", got)
	}
}

// Redrawing a plot under its new name removes the same plot under its old
// "="-joined name, and nothing else.
func TestSavePlotReplacesOldName(t *testing.T) {
	dir := t.TempDir()
	keys := []string{"adversary.fraction"}
	combo := map[string]string{"adversary.fraction": "0.1"}
	old := oldPlotName("accuracy", keys, combo)
	if old != "accuracy_adversary.fraction=0.1" {
		t.Fatalf("old name %q", old)
	}
	for _, f := range []string{old + ".png", old + ".svg", "accuracy_adversary.fraction=0.5.png"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := Curves(Filter(syntheticSweep(), map[string]string{key: "0.1"}), metric, Figure{})
	if err != nil {
		t.Fatal(err)
	}
	if err := savePlot(dir, "accuracy"+plotNames(keys, []map[string]string{combo})[0], old, ch); err != nil {
		t.Fatal(err)
	}
	want := []string{"accuracy_adversary.fraction=0.5.png", "accuracy_fraction-0.1.png", "accuracy_fraction-0.1.svg"}
	if got := dirNames(t, dir); !slices.Equal(got, want) {
		t.Errorf("directory holds %q, want %q", got, want)
	}
}

// The default accuracy follows the strategy: local for personalized
// methods, global for the others where measured; a figure mixing them
// says in each legend entry which it draws; --curve overrides.
func TestAccuracyFollowsTheStrategy(t *testing.T) {
	for _, s := range []string{"local", "rdpfl", "dmtt", "lightyear", "ditto", "murmura"} {
		if !Personalized(s) || AccuracyCurve(s, true) != "honest_local_acc" {
			t.Errorf("%s is personalized: its curve is honest_local_acc", s)
		}
	}
	for _, s := range []string{"fedavg", "robust", "balance", "ubar"} {
		if Personalized(s) || AccuracyCurve(s, true) != "honest_global_acc" || AccuracyCurve(s, false) != "honest_local_acc" {
			t.Errorf("%s: global accuracy where measured, local otherwise", s)
		}
	}
	mk := func(label, strategy string) RunResult {
		s := Series{Rounds: []int{0, 1}, Values: []float64{0.5, 0.6}}
		g := Series{Rounds: []int{0, 1}, Values: []float64{0.2, 0.3}}
		return RunResult{Label: label, Strategy: strategy, Seed: 1, Params: map[string]string{},
			Curves: map[string]Series{"honest_local_acc": s, "honest_global_acc": g},
			Final:  map[string]float64{"final_honest_local_acc": 0.6, "final_honest_global_acc": 0.3}}
	}
	runs := []RunResult{mk("local", "local"), mk("fedavg", "fedavg")}
	acc := accuracyOf(runs, "")
	sel, m := acc.runs(runs, "")
	if m != "accuracy" || sel[0].Label != "local (local)" || sel[1].Label != "fedavg (global)" || sel[1].Curves["accuracy"].Values[1] != 0.3 {
		t.Errorf("mixed figure: metric %q, runs %+v", m, sel)
	}
	if ax := acc.axis(runs, false); ax != "honest accuracy (fraction)" {
		t.Errorf("mixed axis %q", ax)
	}
	if n := acc.note(); !strings.Contains(n, "local accuracy for local") || !strings.Contains(n, "global accuracy for fedavg") {
		t.Errorf("note %q", n)
	}
	one := accuracyOf(runs, "honest_global_acc")
	if sel, m := one.runs(runs, "final_"); m != "final_honest_global_acc" || sel[0].Label != "local" {
		t.Errorf("--curve honest_global_acc: %q %q", m, sel[0].Label)
	}
	if ax := one.axis(runs, true); ax != "final honest global accuracy (fraction)" {
		t.Errorf("axis %q", ax)
	}
}

// docs/reports.md lists every entry of the label table.
func TestDocsListEveryLabel(t *testing.T) {
	b, err := os.ReadFile("../docs/reports.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Metrics() {
		unit := m.Unit
		if unit == "" {
			unit = "—"
		}
		if row := "| `" + m.Name + "` | " + m.Label + " | " + unit + " |"; !strings.Contains(string(b), row) {
			t.Errorf("docs/reports.md lacks the row %s", row)
		}
	}
}
