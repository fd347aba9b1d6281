package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
)

// Refusals found in review, one test each: the bad config or
// command gives the clear error or the correct behaviour.

// F is "auto" by default, derived from the declared fraction and
// each node's in-degree; an explicit f = 0 against liars warns.
func TestFIsNeverSilentlyZero(t *testing.T) {
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
}

// End to end: with 2 sign-flipping liars out of 8, the rules the
// review listed, with the default f, no longer give the plain mean's accuracy.
func TestRulesWithAutoFAreNotTheMean(t *testing.T) {
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

// A rerun with another config into the same directory is refused
// (or, forced, redone), never mixed with the old results.
func TestChangedConfigIsNotReused(t *testing.T) {
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

// Strong attacks are recorded as diverged honest models, not
// errors; the run finishes.
func TestDivergenceIsRecordedNotAnError(t *testing.T) {
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

// What used to fail at run time fails in validation, and a sweep
// checks every run before the first starts.
func TestChecksBeforeAnyWork(t *testing.T) {
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

// --keep-going: a failed run is recorded and the sweep goes on.
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

// Resume: an interrupted run continues after its last complete
// round and ends with the files of an uninterrupted run (the SIGKILL test
// of the built binary is in cmd/trellis).
func TestInterruptedRunResumesBitIdentical(t *testing.T) {
	// The cancel comes from the run directory's writer, behind a queue
	// of metrics.DefaultQueue rounds: when it sees round 0, the simulator
	// is at most that many rounds (and the one it is sending) ahead, so
	// with more rounds than that the run is always cut short.
	c, err := config.Parse([]byte(strings.Replace(tinyRun, "rounds = 3", fmt.Sprintf("rounds = %d", metrics.DefaultQueue+3), 1)), "t")
	if err != nil {
		t.Fatal(err)
	}
	full, cut := t.TempDir(), t.TempDir()
	if _, err := RunToDir(context.Background(), c, full, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = RunToDir(ctx, c, cut, func(r *metrics.Round, _ int) {
		if r.Round == 0 {
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
	if len(rounds) != c.Rounds {
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

// TestAsyncStalenessBoundWarns: a staleness bound that the drifting step
// counters of nodes of different speeds cross within the run warns with
// the step it starts dropping a slower neighbour's models at and the
// bound that keeps every link; one above the drift does not. Steps of 1 s
// and stragglers of 5 s: a straggler's model arrives every 5 of a fast
// node's steps, k·(1 − 1/5) + 1 steps old at its step k (the simulator's
// staleness at steps 5, 10, …, 25 is 5, 9, …, 21, checked below), so a
// bound of 8 is passed after (8 − 1)/0.8 = 8.75 steps and 30·0.8 + 1 = 25
// keeps every link.
func TestAsyncStalenessBoundWarns(t *testing.T) {
	text := "nodes = 10\nrounds = 30\n[data]\nsamples = 2000\n[model]\nkind = \"logreg\"\n[topology]\nkind = \"kregular\"\nk = 4\n[strategy]\nname = \"async_mean\"\n[timing]\nmode = \"async\"\nmax_staleness = 8\nstragglers = 0.2\nslowdown = 5.0\n"
	c, err := config.Parse([]byte(text), "a.toml")
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(Warnings(c), "\n")
	for _, want := range []string{"the first after about 9 of node ", "'s 30 steps (1 s a step; its in-neighbour ", ": 5 s)", "max_staleness = 25 keeps every link"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings %q, want %q", w, want)
		}
	}
	c.Timing.MaxStaleness = 25
	if w := strings.Join(Warnings(c), "\n"); strings.Contains(w, "max_staleness") {
		t.Errorf("max_staleness 25 over 30 steps warned: %q", w)
	}
	// The estimate against the simulator's staleness: a fast node's
	// largest input staleness at its steps 5, 10, …, 25.
	out := t.TempDir()
	if _, err := RunToDir(t.Context(), c, out, nil); err != nil {
		t.Fatal(err)
	}
	steps, err := rundir.ReadSteps(out)
	if err != nil {
		t.Fatal(err)
	}
	fast := map[int][]int{}
	for _, st := range steps {
		if st.Step%5 == 0 && st.Step > 0 {
			fast[st.Node] = append(fast[st.Node], st.MaxStaleness)
		}
	}
	want := []int{5, 9, 13, 17, 21}
	seen := 0
	for _, got := range fast {
		if slices.Equal(got, want) {
			seen++
		}
	}
	if seen == 0 {
		t.Errorf("no node's staleness at steps 5, 10, …, 25 is %v: %v", want, fast)
	}
}

// A robust rule in asynchronous timing against declared Byzantine nodes
// warns that a step sees only the inputs since the last, unless
// timing.inputs = "latest"; without Byzantine nodes it does not.
func TestAsyncRobustInputsWarns(t *testing.T) {
	text := "nodes = 10\n[strategy]\nname = \"robust\"\nrule = \"median\"\n[adversary]\nfraction = 0.2\nattack = \"gaussian\"\n[timing]\nmode = \"async\"\nmax_staleness = 1000\n"
	for _, c := range []struct {
		extra string
		warn  bool
	}{{"", true}, {"inputs = \"latest\"\n", false}, {"inputs = \"new\"\n", true}} {
		cfg, err := config.Parse([]byte(text+c.extra), "a.toml")
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Join(Warnings(cfg), "\n")
		if got := strings.Contains(w, "robust rule median in asynchronous timing with 20 % of the nodes declared Byzantine"); got != c.warn {
			t.Errorf("%q: warned %v, want %v: %q", c.extra, got, c.warn, w)
		}
	}
	cfg, err := config.Parse([]byte(strings.Replace(text, "fraction = 0.2\nattack = \"gaussian\"\n", "", 1)), "a.toml")
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(Warnings(cfg), "\n"); strings.Contains(w, "robust rule") {
		t.Errorf("no Byzantine nodes, and warned: %q", w)
	}
}

// An explicit f in asynchronous timing that the rule cannot keep with the
// own model alone warns how many inputs it needs (a step with fewer keeps
// the own model); f = "auto", and a rule around the own model (no
// neighbour's input: no rule run), do not.
func TestAsyncFixedFWarns(t *testing.T) {
	for _, c := range []struct {
		rule, f, want string
	}{
		{"trimmed_mean", "1", "trimmed_mean needs 3 inputs for f = 1"},
		{"krum", "1", "krum needs 5 inputs for f = 1"},
		{"trimmed_mean", "\"auto\"", ""},
		{"msr", "1", ""},
	} {
		text := fmt.Sprintf("nodes = 10\n[topology]\nkind = \"kregular\"\nk = 6\n[strategy]\nname = \"robust\"\nrule = %q\nf = %s\n[adversary]\nfraction = 0.1\n[timing]\nmode = \"async\"\nmax_staleness = 1000\n", c.rule, c.f)
		cfg, err := config.Parse([]byte(text), "a.toml")
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Join(Warnings(cfg), "\n")
		if got := strings.Contains(w, "in asynchronous timing: "); c.want == "" && got || c.want != "" && !strings.Contains(w, c.want) {
			t.Errorf("%s f = %s: warnings %q, want %q", c.rule, c.f, w, c.want)
		}
	}
}
