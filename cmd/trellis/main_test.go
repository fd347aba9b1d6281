package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/strategy"
)

// TestDemoWritesReproducibleRuns runs
// a shortened demo: metrics.jsonl is bit-identical for GOMAXPROCS 1 and 2.
func TestDemoWritesReproducibleRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a small federated experiment on MNIST")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var outputs []string
	dirs := []string{t.TempDir(), t.TempDir()}
	for i, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		var out, errb bytes.Buffer
		args := []string{"demo", "--rounds", "2", "--samples", "2000", "--nodes", "8", "-o", dirs[i]}
		if err := run(args, &out, &errb); err != nil {
			t.Fatalf("demo: %v\n%s", err, errb.String())
		}
		outputs = append(outputs, out.String())
	}
	for _, want := range []string{"local", "fedavg", "trimmed_mean(f=auto)", "balance", "ubar", "\n    0 ", "\n    1 ", "delta_max", "- fedavg averages", "- ubar keeps", "local-only",
		"honest global accuracy (fraction)", "rounds count from 0"} {
		if !strings.Contains(outputs[0], want) {
			t.Errorf("demo output lacks %q:\n%s", want, outputs[0])
		}
	}
	// One convention, as in the files: rounds 0 … N−1, accuracies as
	// fractions with three decimals, never percent.
	if strings.Contains(outputs[0], "\n    2 ") || strings.Contains(outputs[0], "%") {
		t.Errorf("demo output numbers rounds from 1 or prints percent:\n%s", outputs[0])
	}
	if !regexp.MustCompile(`\n    1 +0\.\d{3} +0\.\d{3}`).MatchString(outputs[0]) || !regexp.MustCompile(`\| fedavg \| 0\.\d{3} \| 0\.\d{3} \|`).MatchString(outputs[0]) {
		t.Errorf("demo output: accuracies are not fractions:\n%s", outputs[0])
	}
	for _, s := range []string{"local", "fedavg", "trimmed_mean-fauto", "balance", "ubar"} {
		a, err := os.ReadFile(filepath.Join(dirs[0], s, "metrics.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dirs[1], s, "metrics.jsonl"))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: metrics.jsonl differs between GOMAXPROCS 1 and 2", s)
		}
	}
	for _, f := range []string{"results.md", "accuracy.png", "accuracy.svg"} {
		if _, err := os.Stat(filepath.Join(dirs[0], f)); err != nil {
			t.Errorf("demo did not write %s: %v", f, err)
		}
	}
}

func TestBadArgumentsAreClearErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nosuch"}, "unknown command"},
		{[]string{"demo", "--nodes", "1"}, "--nodes 1: need at least 2"},
		{[]string{"demo", "--rounds", "0"}, "rounds = 0"},
		{[]string{"demo", "--byzantine", "1"}, "adversary.fraction = 1"},
		{[]string{"run", "no-such-preset"}, "neither a config file nor a preset"},
		{[]string{"run"}, "accepts 1 arg"},
	} {
		var out, errb bytes.Buffer
		err := run(c.args, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to mention %q", c.args, err, c.want)
		}
	}
}

func TestPresetsAndDefaults(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"presets"}, &out, &out); err != nil || !strings.Contains(out.String(), "quickstart") {
		t.Errorf("presets: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := run([]string{"config", "defaults"}, &out, &out); err != nil || !strings.Contains(out.String(), "[training]") {
		t.Errorf("config defaults: %v\n%s", err, out.String())
	}
}

func TestRunConfigFileWithSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a small sweep")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.toml")
	os.WriteFile(cfg, []byte(`
name = "t"
nodes = 4
rounds = 2
[data]
samples = 600
[model]
hidden = [8]
[sweep]
seeds = [1, 2]
[sweep.grid]
"training.lr" = [0.01, 0.1]
[sweep.variants.loc]
"strategy.name" = "local"
[sweep.variants.avg]
"strategy.name" = "fedavg"
`), 0o644)
	var out, errb bytes.Buffer
	if err := run([]string{"sweep", cfg, "-o", filepath.Join(dir, "out"), "--json"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), `"seed": 2`) {
		t.Errorf("--json output:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "summary.csv")); err != nil {
		t.Error(err)
	}
	// A paper-style table: lr by method, mean ± std over the two seeds.
	out.Reset()
	if err := run([]string{"report", filepath.Join(dir, "out"), "--rows", "training.lr", "--cols", "label", "--metric", "all_acc"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if err := run([]string{"report", filepath.Join(dir, "out"), "--curve", "honest_local_acc"}, &bytes.Buffer{}, &errb); err != nil {
		t.Fatalf("--curve honest_local_acc: %v", err)
	}
	if err := run([]string{"report", filepath.Join(dir, "out"), "--curve", "loss"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Error("--curve loss accepted")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "| training.lr |") || !strings.Contains(lines[0], "avg |") || !strings.Contains(lines[2], "±") {
		t.Errorf("table:\n%s", out.String())
	}
}

func TestBenchRules(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"bench", "rules", "--n", "10", "--f", "2", "--d", "5", "--trials", "2"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| median |", "| krum |", "gaussian", "min_sum", "--n 10 --f 2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("bench rules output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestCommandLineMessages checks the command line's messages:
// --version, validate, presets show, --set, --json where the README says,
// in snake_case.
func TestCommandLineMessages(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"--version"}, &out, &errb); err != nil || !strings.Contains(out.String(), "github.com/trellis-fl/trellis") {
		t.Errorf("--version: %v %q", err, out.String())
	}
	out.Reset()
	if err := run([]string{"validate", "byzantine-sweep"}, &out, &errb); err != nil || !strings.Contains(out.String(), "valid, 27 run(s)") {
		t.Errorf("validate: %v %q", err, out.String())
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "quickstart", "--set", "roundz=3"}, `did you mean "rounds"`},
		{[]string{"validate", "quickstart", "--set", "strategy.rule=krum"}, `strategy.rule = "krum"`},
		{[]string{"validate", "quickstart", "--set", "rounds=0"}, "rounds = 0"},
		// robust's options are checked by strategy.New, naming the key.
		{[]string{"validate", "quickstart", "--set", "strategy.name=robust", "--set", "strategy.rule=median", "--set", "strategy.options.f_fraction=5"}, "strategy.options.f_fraction = 5"},
		{[]string{"validate", "quickstart", "--set", "strategy.name=robust", "--set", "strategy.rule=krum", "--set", "strategy.f=1", "--set", "strategy.options.f_fraction=0.2"}, "strategy.options.f_fraction = 0.2: sets f per round, and f = 1 sets it too"},
		{[]string{"validate", "quickstart", "--set", "rounds"}, "want KEY=VALUE"},
		{[]string{"presets", "show", "nosuch"}, `no preset "nosuch"`},
	} {
		if err := run(c.args, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	out.Reset()
	if err := run([]string{"presets", "show", "quickstart"}, &out, &errb); err != nil || !strings.Contains(out.String(), `name = "quickstart"`) {
		t.Errorf("presets show: %v %q", err, out.String())
	}
	for _, args := range [][]string{{"presets", "--json"}, {"config", "defaults", "--json"}, {"presets", "show", "quickstart", "--json"}} {
		out.Reset()
		if err := run(args, &out, &errb); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var v any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Errorf("%v: not JSON: %v\n%s", args, err, out.String())
		}
	}
	if !strings.Contains(out.String(), `"toml"`) {
		t.Errorf("presets show --json: %s", out.String())
	}
	out.Reset()
	_ = run([]string{"config", "defaults", "--json"}, &out, &errb)
	for _, k := range []string{`"global_test"`, `"f": "auto"`, `"eval_every"`, `"optional_sections"`, `"max_staleness": 8`, `"paillier_bits": 512`, `"tolerance"`} {
		if !strings.Contains(out.String(), k) {
			t.Errorf("config defaults --json lacks %s", k)
		}
	}
}

// TestRunSetForceAndJSONReport: --set overrides a preset, a second run with
// another --set is refused naming --force, --force redoes it, and report
// --json prints the summary in snake_case.
func TestRunSetForceAndJSONReport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs small experiments")
	}
	dir := filepath.Join(t.TempDir(), "q")
	base := []string{"run", "quickstart", "-q", "-o", dir, "--set", "nodes=5", "--set", "topology.k=2", "--set", "data.samples=500", "--set", "model.hidden=[8]", "--set", "evaluation.global_test=100"}
	var out, errb bytes.Buffer
	if err := run(append(base, "--set", "rounds=2", "--json"), &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), `"final_honest_global_acc"`) || strings.Contains(out.String(), "HonestGlobalAcc") {
		t.Errorf("run --json is not snake_case:\n%s", out.String())
	}
	err := run(append(base, "--set", "rounds=3"), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("rerun with rounds 2 → 3: %v", err)
	}
	if err := run(append(base, "--set", "rounds=3", "--force"), &bytes.Buffer{}, &errb); err != nil {
		t.Fatalf("--force: %v", err)
	}
	out.Reset()
	if err := run([]string{"report", dir, "--json"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"rounds": "3"`) {
		t.Errorf("report --json:\n%s", out.String())
	}
}

// TestREADMELinksStayInside: every link
// of the README points to a file of the repository (or an anchor).
func TestREADMELinksStayInside(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile(`\]\(([^)]+)\)`).FindAllStringSubmatch(string(b), -1)
	if len(links) < 10 {
		t.Fatalf("only %d links found", len(links))
	}
	for _, m := range links {
		target := m[1]
		switch {
		case strings.HasPrefix(target, "#"):
			continue
		case strings.Contains(target, "://"), strings.HasPrefix(target, "/"), strings.Contains(target, ".."):
			t.Errorf("README link %q points outside the repository", target)
			continue
		}
		if _, err := os.Stat(filepath.Join("../..", strings.SplitN(target, "#", 2)[0])); err != nil {
			t.Errorf("README link %q: %v", target, err)
		}
	}
	for _, ref := range []string{"../shared", "spec/"} {
		if strings.Contains(strings.ReplaceAll(string(b), "docs/methods", ""), ref) {
			t.Errorf("README refers to %q, outside the repository", ref)
		}
	}
}

// TestConfigDefaultsJSONHasTheRegistry: `config defaults --json` lists
// every registered strategy, in the registry's order, with its
// capabilities and each option's default and range as the registry has
// them (an unbounded end as null), next to the config's own keys.
func TestConfigDefaultsJSONHasTheRegistry(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"config", "defaults", "--json"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Strategy   map[string]any `json:"strategy"`
		Strategies []struct {
			Name     string
			Takes    map[string]bool
			DefaultF *int `json:"default_f"`
			Options  []struct {
				Name     string
				Default  float64
				Min, Max *float64
				MinOpen  bool `json:"min_open"`
				MaxOpen  bool `json:"max_open"`
				Whole    bool
				Range    string
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Strategy["name"] == nil {
		t.Errorf("the config's [strategy] table is missing: %v", doc.Strategy)
	}
	reg := strategy.Registry()
	if len(doc.Strategies) != len(reg) {
		t.Fatalf("%d strategies, the registry has %d", len(doc.Strategies), len(reg))
	}
	bound := func(p *float64, x float64) bool {
		if math.IsInf(x, 0) {
			return p == nil
		}
		return p != nil && *p == x
	}
	for i, r := range reg {
		d := doc.Strategies[i]
		if d.Name != r.Name {
			t.Fatalf("strategy %d is %q, the registry's %q", i, d.Name, r.Name)
		}
		want := map[string]bool{"weighting": r.Weighting, "rule": r.Rule, "rule_params": r.RuleParams, "f": r.F, "score": r.Score, "ablations": r.Ablations}
		if !maps.Equal(d.Takes, want) {
			t.Errorf("%s takes %v, the registry %v", r.Name, d.Takes, want)
		}
		if r.F != (d.DefaultF != nil) || r.F && *d.DefaultF != r.DefaultF {
			t.Errorf("%s: default_f %v, the registry's F %v DefaultF %d", r.Name, d.DefaultF, r.F, r.DefaultF)
		}
		if len(d.Options) != len(r.Options) {
			t.Fatalf("%s: %d options, the registry has %d", r.Name, len(d.Options), len(r.Options))
		}
		for j, o := range r.Options {
			g := d.Options[j]
			if g.Name != o.Name || g.Default != o.Default || !bound(g.Min, o.Lo) || !bound(g.Max, o.Hi) ||
				g.MinOpen != o.LoOpen || g.MaxOpen != o.HiOpen || g.Whole != o.Whole || g.Range != o.Range() {
				t.Errorf("%s option %d: %+v, the registry's %+v", r.Name, j, g, o)
			}
		}
	}
	names := make([]string, len(doc.Strategies))
	for i, d := range doc.Strategies {
		names[i] = d.Name
	}
	for _, s := range []string{"fedavg", "robust", "dmtt"} {
		if !slices.Contains(names, s) {
			t.Errorf("strategy %s missing from %v", s, names)
		}
	}
}
