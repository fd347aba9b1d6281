package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/strategy"
)

// The tests of issue 14's "Found" list, one per item: the bad config or
// command gives the clear error or the correct behaviour.

func parseErr(t *testing.T, text string) string {
	t.Helper()
	_, err := config.Parse([]byte(text), "t.toml")
	if err == nil {
		return ""
	}
	return err.Error()
}

func wantErr(t *testing.T, name, text string, want ...string) {
	t.Helper()
	msg := parseErr(t, text)
	if msg == "" {
		t.Errorf("%s: accepted", name)
		return
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: message %q lacks %q", name, msg, w)
		}
	}
}

// Found 1: f is "auto" by default, derived from the declared fraction and
// each node's in-degree; an explicit f = 0 against liars warns.
func TestFound1FIsNeverSilentlyZero(t *testing.T) {
	c, err := config.Parse([]byte(`
nodes = 8
[adversary]
fraction = 0.25
attack = "sign_flip"
[strategy]
name = "robust"
rule = "trimmed_mean"
`), "t")
	if err != nil {
		t.Fatal(err)
	}
	if c.Strategy.F == nil || !c.Strategy.F.Auto {
		t.Fatalf("default f = %v, want auto", c.Strategy.F)
	}
	rec, err := FRecordOf(c)
	if err != nil || rec == nil {
		t.Fatal(rec, err)
	}
	// Complete graph of 8: 7 neighbours, ⌈0.25·7⌉ = 2, and trimmed_mean
	// over 8 inputs tolerates 3.
	for _, n := range rec.Nodes {
		if n.InDegree != 7 || n.F != 2 || n.Wanted != 2 {
			t.Errorf("node %d: %+v, want in-degree 7 and f 2", n.Node, n)
		}
	}
	// An explicit f = 0 with liars declared warns.
	c.Strategy.F = config.FCount(0)
	if w := strings.Join(Warnings(c), "\n"); !strings.Contains(w, "strategy.f = 0") {
		t.Errorf("no warning for f = 0 against 25 %% liars: %q", w)
	}
	// f = "auto" decodes, and an explicit f is kept apart from the declared
	// fraction (a defender may underestimate it).
	c2, err := config.Parse([]byte("[adversary]\nfraction = 0.4\nattack = \"gaussian\"\n[strategy]\nname = \"robust\"\nrule = \"trimmed_mean\"\nf = 1\n"), "t")
	if err != nil || c2.Strategy.F.Auto || c2.Strategy.F.Count != 1 {
		t.Errorf("explicit f: %+v %v", c2.Strategy.F, err)
	}
	wantErr(t, "bad f", "[strategy]\nname = \"robust\"\nrule = \"krum\"\nf = \"some\"", "strategy.f", `"auto"`)
}

// Found 1, end to end: with 2 sign-flipping liars out of 8, the rules the
// issue lists, with the default f, no longer give the plain mean's accuracy.
func TestFound1RulesWithAutoFAreNotTheMean(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two small federations")
	}
	base := `
nodes = 8
rounds = 3
[data]
samples = 1600
[model]
hidden = [16]
[adversary]
fraction = 0.25
attack = "sign_flip"
[strategy]
name = "robust"
`
	var fins []rundir.Final
	rules := []string{"mean", "trimmed_mean", "multi_krum", "bulyan", "centered_clipping", "nnm+mean"}
	for _, rule := range rules {
		c, err := config.Parse([]byte(base+"rule = \""+rule+"\"\n"), rule)
		if err != nil {
			t.Fatal(err)
		}
		fin, err := RunToDir(context.Background(), c, t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		fins = append(fins, fin)
	}
	for i, rule := range rules[1:] {
		f := fins[i+1]
		t.Logf("%s: accuracy %.3f, delta_max %.3f (mean: %.3f, %.3f)", rule, f.HonestGlobalAcc, f.DeltaMax, fins[0].HonestGlobalAcc, fins[0].DeltaMax)
		// The liars' weight falls well below the mean's 2/8 and accuracy
		// rises above it (bulyan, capped at f = 1 by n > 4f + 3, the least).
		if f.HonestGlobalAcc <= fins[0].HonestGlobalAcc+0.02 || f.DeltaMax > fins[0].DeltaMax/2 {
			t.Errorf("%s (auto f) accuracy %.3f, delta_max %.3f vs the mean's %.3f, %.3f: the defence does nothing",
				rule, f.HonestGlobalAcc, f.DeltaMax, fins[0].HonestGlobalAcc, fins[0].DeltaMax)
		}
	}
}

const tinyRun = `
nodes = 4
rounds = 3
[data]
samples = 400
[model]
hidden = [8]
[evaluation]
global_test = 100
`

// Found 2: a rerun with another config into the same directory is refused
// (or, forced, redone), never mixed with the old results.
func TestFound2ChangedConfigIsNotReused(t *testing.T) {
	out := t.TempDir()
	c, err := config.Parse([]byte(tinyRun+"[sweep]\nseeds = [1]\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunSweep(context.Background(), c, out, nil); err != nil {
		t.Fatal(err)
	}
	c.Rounds = 4
	_, err = RunSweep(context.Background(), c, out, nil)
	if !errors.Is(err, rundir.ErrOtherConfig) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("rerun with rounds 3 → 4: %v, want a refusal naming --force", err)
	}
	if _, err := RunSweepWith(context.Background(), c, out, SweepOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	rows, err := rundir.ReadSummary(out)
	if err != nil || len(rows) != 1 || rows[0]["rounds"] != "4" {
		t.Errorf("forced rerun summary: %v %v", rows, err)
	}
}

// Found 3: a config that leaves no honest node is refused.
func TestFound3NoHonestNodeIsRefused(t *testing.T) {
	wantErr(t, "4 nodes, 0.9", "nodes = 4\n[adversary]\nfraction = 0.9\nattack = \"gaussian\"", "adversary.fraction = 0.9", "all 4 nodes Byzantine", "no honest node")
	wantErr(t, "1 node, 0.3", "nodes = 1\n[adversary]\nfraction = 0.3\nattack = \"gaussian\"", "adversary.fraction = 0.3", "all 1 nodes Byzantine")
	wantErr(t, "ids of everyone", "nodes = 3\n[adversary]\nids = [0, 1, 2]\nattack = \"gaussian\"", "adversary.ids", "all 3 nodes Byzantine")
}

// Found 4: strong attacks are recorded as diverged honest models, not
// errors; the run finishes.
func TestFound4DivergenceIsRecordedNotAnError(t *testing.T) {
	for _, atk := range []string{"attack = \"scaling\"\nscale = 1e30", "attack = \"ipm\"\nepsilon = 1e10"} {
		c, err := config.Parse([]byte(tinyRun+"[adversary]\nfraction = 0.25\n"+atk+"\n"), "t")
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		fin, err := RunToDir(context.Background(), c, dir, nil)
		if err != nil {
			t.Fatalf("%s: %v", atk, err)
		}
		if fin.Rounds != 3 || fin.DivergedRound < 0 || fin.Diverged != 3 {
			t.Errorf("%s: final %+v, want 3 rounds and the 3 honest nodes diverged", atk, fin)
		}
		b, _ := os.ReadFile(filepath.Join(dir, rundir.MetricsFile))
		if !strings.Contains(string(b), `"diverged":true`) {
			t.Errorf("%s: metrics.jsonl records no diverged node", atk)
		}
		rows, _ := rundir.ReadSummary(dir)
		if len(rows) != 1 || rows[0]["diverged_round"] == "-1" || rows[0]["diverged_nodes"] != "3" {
			t.Errorf("%s: summary %v", atk, rows)
		}
	}
}

// Found 5: settings the run would ignore are refused.
func TestFound5IgnoredSettingsAreRefused(t *testing.T) {
	wantErr(t, "rule with fedavg", "[strategy]\nname = \"fedavg\"\nrule = \"krum\"", `strategy.rule = "krum"`, `only strategy.name = "robust" and "rdpfl"`)
	wantErr(t, "robust options", "[strategy]\nname = \"robust\"\nrule = \"median\"\n[strategy.options]\nfoo = 1", "strategy.options.foo = 1", "unknown option", "f_fraction, f_expected", "not options: f, m, tau")
	wantErr(t, "robust nan option", "[strategy]\nname = \"robust\"\nrule = \"median\"\n[strategy.options]\nlambda = nan", "strategy.options.lambda = NaN", "unknown option")
	wantErr(t, "ditto nan", "[strategy]\nname = \"ditto\"\n[strategy.options]\nlambda = nan", "lambda")
	wantErr(t, "f on median", "[adversary]\nfraction = 0.2\nattack = \"gaussian\"\n[strategy]\nname = \"robust\"\nrule = \"median\"\nf = 1", "strategy.f = 1", `rule "median" takes no f`)
	// robust is built through strategy.New like every strategy, so its
	// options are range-checked and checked against its rule and f.
	const krum = "[adversary]\nfraction = 0.2\nattack = \"gaussian\"\n[strategy]\nname = \"robust\"\n"
	wantErr(t, "f_fraction out of range", krum+"rule = \"median\"\n[strategy.options]\nf_fraction = 5", "strategy.options.f_fraction = 5", "allowed range [0, 1]")
	wantErr(t, "f_fraction on a rule without f", krum+"rule = \"median\"\n[strategy.options]\nf_fraction = 0.3", "strategy.options.f_fraction = 0.3", `rule "median" takes no f`)
	wantErr(t, "f and f_fraction", krum+"rule = \"krum\"\nf = 1\n[strategy.options]\nf_fraction = 0.3", "strategy.options.f_fraction = 0.3", "f = 1 sets it too")
	wantErr(t, "f_expected not 0 or 1", krum+"rule = \"krum\"\n[strategy.options]\nf_expected = 0.5", "strategy.options.f_expected = 0.5", "0 or 1")
	wantErr(t, "unknown rule", krum+"rule = \"nnm+krumm\"", `strategy.rule = "nnm+krumm"`, `unknown rule "krumm"`)
	wantErr(t, "exchange on fedavg", "[strategy]\nname = \"fedavg\"\nexchange = \"update\"", `strategy.exchange = "update"`, "only robust takes")
	wantErr(t, "sigma without adversary", "[adversary]\nsigma = 3", "adversary.sigma", "nobody attacks")
	wantErr(t, "attack without adversary", "[adversary]\nattack = \"gaussian\"", "adversary.attack", "nobody attacks")
	wantErr(t, "samples beyond MNIST", "[data]\nsamples = 999999999", "data.samples = 999999999", "60000")
	// A sweep whose grid includes fraction 0 (the clean baseline) is fine.
	if msg := parseErr(t, "[adversary]\nattack = \"gaussian\"\n[sweep.grid]\n\"adversary.fraction\" = [0.0, 0.2]"); msg != "" {
		t.Errorf("sweep with a clean baseline refused: %s", msg)
	}
	// So is one f for a sweep over rules: the rules that take one use it.
	if msg := parseErr(t, "[adversary]\nfraction = 0.2\nattack = \"gaussian\"\n[strategy]\nname = \"robust\"\nf = 1\n[sweep.grid]\n\"strategy.rule\" = [\"mean\", \"trimmed_mean\"]"); msg != "" {
		t.Errorf("one f over a sweep of rules refused: %s", msg)
	}
}

// Found 6: what used to fail at run time fails in validation, and a sweep
// checks every run before the first starts.
func TestFound6ChecksBeforeAnyWork(t *testing.T) {
	wantErr(t, "odd n·k", "nodes = 7\n[topology]\nkind = \"kregular\"\nk = 3", "topology.k = 3", "nodes·k even")
	wantErr(t, "lightyear without validation", "[strategy]\nname = \"lightyear\"\n[partition]\nsplit = [0.8, 0.0, 0.2]", "partition.split", "validation split")
	wantErr(t, "natural on mnist", "[partition]\nmethod = \"natural\"", `partition.method = "natural"`, "femnist")
	c, err := config.Parse([]byte("nodes = 6\n[topology]\nkind = \"ring\"\n[adversary]\nfraction = 0.2\nattack = \"gaussian\"\n[strategy]\nname = \"robust\"\nrule = \"krum\"\nf = 2"), "t")
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(c); err == nil || !strings.Contains(err.Error(), "strategy.f = 2") || !strings.Contains(err.Error(), "3 inputs") {
		t.Errorf("krum f = 2 on a ring: %v", err)
	}
	// A rule that cannot run at some node even with f = 0 (krum on a star's
	// leaves: 2 inputs) is refused too.
	st, err := config.Parse([]byte("nodes = 5\n[topology]\nkind = \"star\"\n[adversary]\nfraction = 0.2\nattack = \"gaussian\"\n[strategy]\nname = \"robust\"\nrule = \"krum\""), "t")
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(st); err == nil || !strings.Contains(err.Error(), "even with f = 0") {
		t.Errorf("krum on a star: %v", err)
	}
	// On a dynamic graph every round's in-degrees count.
	m, err := config.Parse([]byte("nodes = 20\nrounds = 30\n[topology]\nkind = \"mobility\"\n[adversary]\nfraction = 0.2\nattack = \"gaussian\"\n[strategy]\nname = \"robust\"\nrule = \"krum\"\nf = 2"), "t")
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(m); err == nil || !strings.Contains(err.Error(), "(round ") {
		t.Errorf("krum f = 2 on mobility: %v", err)
	}
	// A sweep whose last run is bad starts none.
	s, err := config.Parse([]byte(tinyRun+"[topology]\nkind = \"ring\"\n[adversary]\nfraction = 0.25\nattack = \"gaussian\"\n[strategy]\nname = \"robust\"\nrule = \"krum\"\n[sweep.grid]\n\"strategy.f\" = [0, 3]\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := RunSweep(context.Background(), s, out, nil); err == nil || !strings.Contains(err.Error(), "strategy.f = 3") {
		t.Fatalf("sweep with a bad run: %v", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("a refused sweep wrote %d entries", len(ents))
	}
}

// Found 6, --keep-going: a failed run is recorded and the sweep goes on.
func TestSweepKeepGoing(t *testing.T) {
	s, err := config.Parse([]byte(tinyRun+"[sweep.variants.a]\n\"data.dataset\" = \"fashion_mnist\"\n\"data.dir\" = \"/nonexistent\"\n[sweep.variants.b]\n\"data.dataset\" = \"mnist\"\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunSweepWith(context.Background(), s, t.TempDir(), SweepOptions{KeepGoing: true})
	if err == nil || res.Errs[0] == nil || res.Errs[1] != nil || res.Fin[1].Rounds != 3 {
		t.Errorf("keep going: %v, %+v", err, res)
	}
}

// Found 7: a name cannot leave the output directory.
func TestFound7NameStaysInside(t *testing.T) {
	wantErr(t, "escape", `name = "../../escape"`, `name = "../../escape"`, "letters, digits")
	wantErr(t, "dotdot", `name = ".."`, `name = ".."`)
}

// Found 8 (in part; the command-line items are in cmd/trellis): errors
// without Go map syntax or repeated prefixes, defaults that list every
// key, convolutional models evaluated on part of the global test set.
func TestFound8Messages(t *testing.T) {
	msg := parseErr(t, "[training]\nlr = nan\n[sweep.grid]\n\"training.momentum\" = [0.5]")
	if msg == "" || strings.Contains(msg, "map[") {
		t.Errorf("message %q", msg)
	}
	s, err := config.Parse([]byte("[sweep.grid]\n\"training.lr\" = [0.1, -1]"), "t")
	if err == nil {
		_, _, err = s.Expand()
	}
	if err == nil || strings.Contains(err.Error(), "map[") || !strings.Contains(err.Error(), "training.lr=-1") {
		t.Errorf("sweep run error: %v", err)
	}
	// Every bad run of a sweep is reported, not only the first.
	s2, err := config.Parse([]byte("[sweep.grid]\n\"training.lr\" = [-2, 0.1, -1]"), "t")
	if err == nil {
		_, _, err = s2.Expand()
	}
	if err == nil || !strings.Contains(err.Error(), "training.lr=-1") || !strings.Contains(err.Error(), "training.lr=-2") {
		t.Errorf("sweep with two bad runs: %v", err)
	}
	c := config.Default()
	c.Topology.Kind, c.Topology.File = "edge_list", "/nonexistent/edges.txt"
	if _, err := graphOf(c)(4, 1); err == nil || strings.Contains(err.Error(), "topology: topology:") {
		t.Errorf("topology error: %v", err)
	}
	d := config.Defaults()
	for _, k := range []string{"f = \"auto\"", "exchange", "prediction", "clipping", "[strategy.options]", "ids = []"} {
		if !strings.Contains(d, k) {
			t.Errorf("config defaults lack %q", k)
		}
	}
	// Every strategy's options, with the registry's defaults.
	for _, r := range strategy.Registry() {
		i := strings.Index(d, "#   "+r.Name+": ")
		if i < 0 {
			t.Errorf("config defaults lack strategy %s", r.Name)
			continue
		}
		line := d[i:]
		line = line[:strings.IndexByte(line, '\n')]
		for _, o := range r.Options {
			if want := fmt.Sprintf("%s = %v in ", o.Name, o.Default); o.Range() != "0 or 1" && !strings.Contains(line, want) {
				t.Errorf("config defaults: %q lacks %q", line, want)
			}
		}
	}
	cnn, err := config.Parse([]byte("[model]\nkind = \"femnist_cnn\""), "t")
	if err != nil || cnn.Evaluation.GlobalTest != config.ConvGlobalTest {
		t.Errorf("femnist_cnn global_test = %d, %v", cnn.Evaluation.GlobalTest, err)
	}
	all, err := config.Parse([]byte("[model]\nkind = \"femnist_cnn\"\n[evaluation]\nglobal_test = -1"), "t")
	if err != nil || all.Evaluation.GlobalTest != -1 {
		t.Errorf("explicit global_test = -1 lost: %d %v", all.Evaluation.GlobalTest, err)
	}
}

// Found 8, resume: an interrupted run continues after its last complete
// round and ends with the files of an uninterrupted run (the SIGKILL test
// of the built binary is in cmd/trellis).
func TestInterruptedRunResumesBitIdentical(t *testing.T) {
	c, err := config.Parse([]byte(strings.Replace(tinyRun, "rounds = 3", "rounds = 6", 1)), "t")
	if err != nil {
		t.Fatal(err)
	}
	full, cut := t.TempDir(), t.TempDir()
	if _, err := RunToDir(context.Background(), c, full, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = RunToDir(ctx, c, cut, func(r *metrics.Round, _ int) {
		if r.Round == 2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted: %v", err)
	}
	// A torn last line, as a kill in the middle of a write leaves.
	f, _ := os.OpenFile(filepath.Join(cut, rundir.MetricsFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"round":3,"node":0,"byz`)
	f.Close()
	var rounds []int
	if _, err := RunToDir(context.Background(), c, cut, func(r *metrics.Round, _ int) { rounds = append(rounds, r.Round) }); err != nil {
		t.Fatal(err)
	}
	if len(rounds) != 6 {
		t.Errorf("resumed run reported rounds %v", rounds)
	}
	for _, name := range []string{rundir.MetricsFile, rundir.RoundsFile, rundir.SummaryFile} {
		a, _ := os.ReadFile(filepath.Join(full, name))
		b, _ := os.ReadFile(filepath.Join(cut, name))
		if name == rundir.SummaryFile {
			a, b = []byte(strings.SplitN(string(a), "\n", 2)[1]), []byte(strings.SplitN(string(b), "\n", 2)[1])
		}
		if string(a) != string(b) {
			t.Errorf("%s differs after resume", name)
		}
	}
	man, err := rundir.ReadManifest(cut)
	if err != nil || len(man.Resumed) != 1 {
		t.Errorf("manifest resumed = %v, %v", man.Resumed, err)
	}
}
