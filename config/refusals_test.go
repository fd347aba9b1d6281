package config

// The refusals of bad config files, each naming the key and the fix (the
// checks that need the topology built are experiment.Check's tests).

import (
	"fmt"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/strategy"
)

// parseErr is Parse's error text for a config text ("" when it parses).
func parseErr(t *testing.T, text string) string {
	t.Helper()
	_, err := Parse([]byte(text), "t.toml")
	if err == nil {
		return ""
	}
	return err.Error()
}

// wantErr fails unless text is refused with a message holding every want.
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

// Refusals that used to sit in run-level tests: a non-number f, checks of
// combinations of keys, and an unknown DP order grid.
func TestFileCombinationsAreRefused(t *testing.T) {
	wantErr(t, "bad f", "[strategy]\nname = \"robust\"\nrule = \"krum\"\nf = \"some\"", "strategy.f", `"auto"`)
	wantErr(t, "odd n·k", "nodes = 7\n[topology]\nkind = \"kregular\"\nk = 3", "topology.k = 3", "nodes·k even")
	wantErr(t, "lightyear without validation", "[strategy]\nname = \"lightyear\"\n[partition]\nsplit = [0.8, 0.0, 0.2]", "partition.split", "validation split")
	wantErr(t, "natural on mnist", "[partition]\nmethod = \"natural\"", `partition.method = "natural"`, "femnist")
	wantErr(t, "unknown grid", "[privacy]\nmode = \"sample\"\nnoise_multiplier = 1\norders = \"fine\"", "privacy.orders", "dense")
	wantErr(t, "unknown accountant", "[privacy]\nmode = \"sample\"\nnoise_multiplier = 1\naccountant = \"prv\"", "privacy.accountant", "pld")
}

// A config that leaves no honest node is refused.
func TestNoHonestNodeIsRefused(t *testing.T) {
	wantErr(t, "4 nodes, 0.9", "nodes = 4\n[adversary]\nfraction = 0.9\nattack = \"gaussian\"", "adversary.fraction = 0.9", "all 4 nodes Byzantine", "no honest node")
	wantErr(t, "1 node, 0.3", "nodes = 1\n[adversary]\nfraction = 0.3\nattack = \"gaussian\"", "adversary.fraction = 0.3", "all 1 nodes Byzantine")
	wantErr(t, "ids of everyone", "nodes = 3\n[adversary]\nids = [0, 1, 2]\nattack = \"gaussian\"", "adversary.ids", "all 3 nodes Byzantine")
}

// Settings the run would ignore are refused.
func TestIgnoredSettingsAreRefused(t *testing.T) {
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
	wantErr(t, "safe_area on a model", krum+"rule = \"safe_area\"\nf = 1", `strategy.rule = "safe_area"`, "at most 8 coordinates", "a rule for models: mean, median")
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

// A name cannot leave the output directory.
func TestNameStaysInside(t *testing.T) {
	wantErr(t, "escape", `name = "../../escape"`, `name = "../../escape"`, "letters, digits")
	wantErr(t, "dotdot", `name = ".."`, `name = ".."`)
}

// Readable messages (the command line's are in cmd/trellis): errors
// without Go map syntax or repeated prefixes, defaults that list every
// key, convolutional models evaluated on part of the global test set.
func TestMessagesAreReadable(t *testing.T) {
	msg := parseErr(t, "[training]\nlr = nan\n[sweep.grid]\n\"training.momentum\" = [0.5]")
	if msg == "" || strings.Contains(msg, "map[") {
		t.Errorf("message %q", msg)
	}
	s, err := Parse([]byte("[sweep.grid]\n\"training.lr\" = [0.1, -1]"), "t")
	if err == nil {
		_, _, err = s.Expand()
	}
	if err == nil || strings.Contains(err.Error(), "map[") || !strings.Contains(err.Error(), "training.lr=-1") {
		t.Errorf("sweep run error: %v", err)
	}
	// Every bad run of a sweep is reported, not only the first.
	s2, err := Parse([]byte("[sweep.grid]\n\"training.lr\" = [-2, 0.1, -1]"), "t")
	if err == nil {
		_, _, err = s2.Expand()
	}
	if err == nil || !strings.Contains(err.Error(), "training.lr=-1") || !strings.Contains(err.Error(), "training.lr=-2") {
		t.Errorf("sweep with two bad runs: %v", err)
	}
	c := Default()
	c.Topology.Kind, c.Topology.File = "edge_list", "/nonexistent/edges.txt"
	if _, err := c.graph(4, 1); err == nil || strings.Contains(err.Error(), "topology: topology:") {
		t.Errorf("topology error: %v", err)
	}
	d := Defaults()
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
	cnn, err := Parse([]byte("[model]\nkind = \"femnist_cnn\""), "t")
	if err != nil || cnn.Evaluation.GlobalTest != ConvGlobalTest {
		t.Errorf("femnist_cnn global_test = %d, %v", cnn.Evaluation.GlobalTest, err)
	}
	all, err := Parse([]byte("[model]\nkind = \"femnist_cnn\"\n[evaluation]\nglobal_test = -1"), "t")
	if err != nil || all.Evaluation.GlobalTest != -1 {
		t.Errorf("explicit global_test = -1 lost: %d %v", all.Evaluation.GlobalTest, err)
	}
}

func TestStartRoundConfigErrors(t *testing.T) {
	const head = "rounds = 5\nnodes = 8\n[adversary]\nfraction = 0.25\n"
	wantErr(t, "start after the last round", head+"attack = \"sign_flip\"\nstart_round = 5", "adversary.start_round", "[0, rounds = 5)")
	wantErr(t, "negative start", head+"attack = \"sign_flip\"\nstart_round = -1", "adversary.start_round")
	wantErr(t, "no attack to schedule", head+"attack = \"none\"\nstart_round = 2", "adversary.start_round", "none")
	wantErr(t, "data attack", head+"attack = \"label_flip\"\nstart_round = 2", "label_flip", "start_round")
	if msg := parseErr(t, head+"attack = \"sign_flip\"\nstart_round = 2"); msg != "" {
		t.Errorf("a valid schedule refused: %s", msg)
	}
}

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
		_, err := Parse([]byte(c.text), "t")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one mentioning %q", c.text, err, c.want)
		}
	}
	ok := "[model]\nhead = \"evidential\"\n[strategy]\nname = \"dmtt\"\n[strategy.options]\ntau_trust = 0.5\n[trust]\nlambda = 0.7\n[adversary]\nfraction = 0.2\nliar = \"inflation\"\nclaim_flood = true"
	c, err := Parse([]byte(ok), "t")
	if err != nil {
		t.Fatal(err)
	}
	tc, err := c.TrustLayer()
	if err != nil || tc == nil || tc.TauTrust != 0.5 || tc.Lambda != 0.7 {
		t.Errorf("trust config %+v, %v: want τ_trust 0.5 from the dmtt option and λ 0.7", tc, err)
	}
	if a := c.Adversary; a.Liar != LiarInflation || !a.ClaimFlood || a.ClaimForgery || a.ClaimReplay {
		t.Errorf("claim attack %+v", a)
	}
}

// Configs that used to be accepted silently: one node, a file that sets
// nothing, a rule next to a strategy without one even when it names the
// default rule. A copy of `trellis config defaults` (every key named)
// stays valid.
func TestSilentAcceptsAreRefused(t *testing.T) {
	wantErr(t, "one node", "nodes = 1", "nodes = 1", "allowed range 2 to 100000")
	wantErr(t, "empty", "", "sets no key", "trellis config defaults")
	wantErr(t, "comments only", "# nothing\n\n", "sets no key")
	wantErr(t, "default rule under fedavg", "[strategy]\nname = \"fedavg\"\nrule = \"median\"", `strategy.rule = "median"`, "remove strategy.rule")
	wantErr(t, "default sigma without an adversary", "[adversary]\nsigma = 10.0", "adversary.sigma set")
	if _, err := Parse([]byte(Defaults()), "defaults.toml"); err != nil {
		t.Errorf("a copy of the defaults: %v", err)
	}
	if _, err := Parse([]byte(strings.TrimPrefix(Defaults(), DefaultsHeader)), "defaults.toml"); err != nil {
		t.Errorf("a copy of the defaults without its first line: %v", err)
	}
	c := Default()
	if err := c.CheckSet([]string{"strategy.rule"}); err == nil {
		t.Error("--set strategy.rule=median under fedavg accepted")
	}
}

// --set of a [sweep] key says that --set cannot change the sweep and what
// to do; it used to answer "did you mean" with the very key given.
func TestSetRefusesTheSweepSaying(t *testing.T) {
	c := Default()
	for _, key := range []string{"sweep.seeds", "sweep", "sweep.grid"} {
		err := c.Set(key, "[1]")
		if err == nil || !strings.Contains(err.Error(), "cannot change the [sweep] table") || strings.Contains(err.Error(), "did you mean") {
			t.Errorf("--set %s=[1]: %v", key, err)
		}
	}
	if err := c.Set("seeds", "[1]"); err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Errorf("--set seeds=[1]: %v", err)
	}
}
