package config

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestDefaultsAreValidAndRoundTrip(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	cfg, err := Parse([]byte(Defaults()), "defaults")
	if err != nil {
		t.Fatalf("printed defaults do not parse: %v", err)
	}
	if cfg.Rounds != Default().Rounds || cfg.Model.Kind != "mlp" {
		t.Errorf("defaults changed in the round trip: %+v", cfg)
	}
}

// TestConfigMistakes: each class of
// mistake gives a message that names the key and the fix.
func TestConfigMistakes(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"unknown key", "colour = 3", []string{`unknown key "colour"`}},
		{"final_rounds beyond the evaluations", "rounds = 40\neval_every = 5\nfinal_rounds = 10", []string{"final_rounds = 10", "only 8 are evaluated"}},
		{"typo of a key", "[training]\nlearning_rate = 0.1\nlrr = 0.2", []string{`"training.lrr"`, `did you mean "training.lr"`}},
		{"typo of a table", "[modle]\nkind = \"mlp\"", []string{`"modle.kind"`, `did you mean "model.kind"`}},
		{"wrong type", "rounds = \"ten\"", []string{"rounds", "line 1"}},
		{"wrong type in table", "[model]\nhidden = \"256\"", []string{"model.hidden", "line 2"}},
		{"out of range", "[training]\nlr = -1", []string{"training.lr = -1", "> 0"}},
		{"out of range fraction", "[adversary]\nfraction = 1.5\nattack = \"gaussian\"", []string{"adversary.fraction = 1.5", "[0, 1)"}},
		{"unknown strategy", "[strategy]\nname = \"fedprox2\"", []string{`strategy.name = "fedprox2"`, "fedavg", "robust"}},
		{"unknown attack", "[adversary]\nattack = \"gausian\"\nfraction = 0.2", []string{`adversary.attack = "gausian"`, "gaussian"}},
		{"unknown dataset", "[data]\ndataset = \"imagenet\"", []string{`data.dataset = "imagenet"`, "mnist"}},
		{"unknown rule", "[strategy]\nname = \"robust\"\nrule = \"krumm\"", []string{"strategy.rule", `"krumm"`, "median"}},
		{"sweep over an unknown key", "[sweep.grid]\n\"adversary.fractoin\" = [0.1]", []string{`"adversary.fractoin"`, `did you mean "adversary.fraction"`}},
		{"unknown shift", "[partition]\nshift = \"rotation\"", []string{`partition.shift = "rotation"`, "rotate"}},
		{"split not summing to 1", "[partition]\nsplit = [0.7, 0.2, 0.2]", []string{"partition.split", "summing to 1"}},
		{"score on fedavg", "[strategy]\nname = \"fedavg\"\nscore = \"ntk\"", []string{"score", "only lightyear"}},
		{"unknown lightyear score", "[strategy]\nname = \"lightyear\"\nscore = \"l2\"", []string{"l2", "ntk, calibration, cosine"}},
		{"lightyear tau out of range", "[strategy]\nname = \"lightyear\"\n[strategy.options]\ntau = 2", []string{"tau = 2", "[0, 1]"}},
		{"k too large", "nodes = 5\n[topology]\nkind = \"kregular\"\nk = 5", []string{"topology.k = 5", "1 to nodes − 1 = 4"}},
	} {
		_, err := Parse([]byte(c.text), "test.toml")
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: message %q lacks %q", c.name, err.Error(), w)
			}
		}
		if !strings.Contains(err.Error(), "test.toml") {
			t.Errorf("%s: message %q does not name the file", c.name, err.Error())
		}
	}
}

func TestConfigOverridesDefaults(t *testing.T) {
	cfg, err := Parse([]byte(`
name = "x"
nodes = 20
[model]
hidden = [64]
[strategy]
name = "robust"
rule = "trimmed_mean"
f = 2
[sweep]
seeds = [1, 2]
[sweep.grid]
"adversary.fraction" = [0.0, 0.2]
`), "t")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Nodes != 20 || len(cfg.Model.Hidden) != 1 || cfg.Strategy.F == nil || *cfg.Strategy.F != *FCount(2) || cfg.Training.LR != 0.01 {
		t.Errorf("overrides or defaults lost: %+v", cfg)
	}
	if len(cfg.Sweep.Seeds) != 2 || len(cfg.Sweep.Grid["adversary.fraction"]) != 2 {
		t.Errorf("sweep lost: %+v", cfg.Sweep)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(Defaults()))
	f.Add([]byte("rounds = 3\n[model]\nhidden = [1, 2]\n[sweep.grid]\n\"nodes\" = [2, 3]"))
	f.Add([]byte("[[x]]\na = 1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := Parse(b, "fuzz")
		if err == nil {
			if verr := cfg.Validate(); verr != nil {
				t.Fatalf("accepted an invalid config: %v", verr)
			}
		}
	})
}

// TestGuideConfigExample keeps the config example of the experiments guide
// (docs/guides/experiments.md, its first toml block) valid.
func TestGuideConfigExample(t *testing.T) {
	b, err := os.ReadFile("../docs/guides/experiments.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```toml\n")
	if !ok {
		t.Fatal("docs/guides/experiments.md has no toml example")
	}
	text, _, _ := strings.Cut(rest, "```")
	c, err := Parse([]byte(text), "docs/guides/experiments.md example")
	if err != nil {
		t.Fatal(err)
	}
	if runs, _, err := c.Expand(); err != nil || len(runs) != 18 {
		t.Errorf("docs/guides/experiments.md's sweep: %d runs (%v), want 3 fractions × 2 rules × 3 seeds", len(runs), err)
	}
}

func TestEveryAttackIsReachableFromAConfig(t *testing.T) {
	for _, c := range []string{
		`attack = "none"`, `attack = "gaussian"` + "\nsigma = 1.0", `attack = "sign_flip"`, `attack = "scaling"` + "\nscale = 3.0",
		`attack = "random"`, `attack = "ana_proportional"` + "\npercent = 50.0", `attack = "alie"` + "\nz = 1.5\nminus = true",
		`attack = "ipm"` + "\nepsilon = 0.5", `attack = "min_max"` + "\nperturbation = \"std\"", `attack = "min_sum"` + "\ngamma_init = 5.0",
		`attack = "fang_trim"` + "\nb = 3.0", `attack = "label_flip"`,
	} {
		cfg, err := Parse([]byte("[adversary]\nfraction = 0.2\n"+c), "t")
		if err != nil {
			t.Errorf("%s: %v", c, err)
			continue
		}
		if a, err := cfg.Attack(); err != nil || a == nil {
			t.Errorf("%s: attack %v, %v", c, a, err)
		}
	}
	_, err := Parse([]byte("[adversary]\nfraction = 0.2\nattack = \"min_max\"\nperturbation = \"diagonal\""), "t")
	if err == nil || !strings.Contains(err.Error(), "diagonal") {
		t.Errorf("bad perturbation: %v", err)
	}
}

func TestEveryStrategyIsReachableFromAConfig(t *testing.T) {
	for _, c := range []string{
		`name = "local"`, `name = "fedavg"` + "\nweighting = \"mh\"", `name = "dpsgd"`, `name = "gradient_tracking"`,
		`name = "robust"` + "\nrule = \"trimmed_mean\"\nf = 1", `name = "balance"` + "\n[strategy.options]\ngamma = 0.5",
		`name = "ubar"` + "\n[strategy.options]\nrho = 0.6", `name = "scclip"` + "\nf = 2", `name = "clipped_gossip"`,
		`name = "afa"` + "\n[strategy.options]\nxi0 = 1.5", `name = "asmr"`, `name = "cfl"`,
		`name = "robust"` + "\nrule = \"multi_krum\"\nexchange = \"update\"",
		`name = "rdpfl"` + "\nrule = \"trimmed_mean\"\nf = 2\nprediction = false\n[strategy.options]\nlambda = 0.5\ngd = inf",
	} {
		cfg, err := Parse([]byte("[strategy]\n"+c), "t")
		if err != nil {
			t.Errorf("%s: %v", c, err)
			continue
		}
		if _, err := cfg.StrategyParams(); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
	for _, bad := range []string{
		"name = \"balance\"\n[strategy.options]\ngama = 0.5",
		"name = \"local\"\nf = 2",
		"name = \"rdpfl\"\nrule = \"krum\"",
		"name = \"fedavg\"\nexchange = \"update\"",
		"name = \"robust\"\nexchange = \"updates\"",
		"name = \"rdpfl\"\nrule = \"median\"\nf = 1",
		"name = \"fedavg\"\nclipping = false",
		"name = \"rdpfl\"\n[strategy.options]\nwarmup = 2.5",
	} {
		if _, err := Parse([]byte("[strategy]\n"+bad), "t"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestEveryRuleIsReachableFromAConfig(t *testing.T) {
	for _, c := range []string{
		`rule = "krum"` + "\nf = 1", `rule = "multi_krum"` + "\nf = 1\nm = 3", `rule = "geometric_median"` + "\niterations = 50",
		`rule = "centered_clipping"` + "\ntau = 1.0", `rule = "bulyan"`, `rule = "msr"` + "\nf = 1",
		`rule = "nnm+krum"` + "\nf = 1", `rule = "bucketing+median"` + "\nbucket = 2", `rule = "clip+mean"` + "\nclip = 5.0",
	} {
		if _, err := Parse([]byte("[strategy]\nname = \"robust\"\n"+c), "t"); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
	for _, bad := range []string{"name = \"robust\"\nrule = \"krumm\"", "name = \"fedavg\"\ntau = 1.0"} {
		_, err := Parse([]byte("[strategy]\n"+bad), "t")
		if err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestSweepVariants: every variant runs at every grid point with its own
// label and settings, and a grid over a strategy option gives each run its
// own value (the TOML decoder writes into maps in place, so runs sharing
// one Options map would all end with the last value).
func TestSweepVariants(t *testing.T) {
	cfg, err := Parse([]byte(`
[strategy]
name = "rdpfl"
[strategy.options]
lambda = 0.3
[sweep]
seeds = [1, 2]
[sweep.grid]
"strategy.options.g" = [0.5, 1.0]
[sweep.variants.plain]
"strategy.prediction" = false
"strategy.clipping" = false
"strategy.rule" = "mean"
[sweep.variants.full]
"strategy.rule" = "median"
`), "t")
	if err != nil {
		t.Fatal(err)
	}
	runs, keys, err := cfg.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 8 || keys[0] != "variant" || keys[1] != "strategy.options.g" {
		t.Fatalf("%d runs, keys %v; want 8 runs (2 variants × 2 g × 2 seeds), keys [variant strategy.options.g]", len(runs), keys)
	}
	for _, r := range runs {
		c := r.Config
		if c.Label() != r.Params["variant"] || fmt.Sprint(c.Strategy.Options["g"]) != r.Params["strategy.options.g"] || c.Strategy.Options["lambda"] != 0.3 {
			t.Errorf("run %s: label %q, options %v", r.Dir, c.Label(), c.Strategy.Options)
		}
		plain := r.Params["variant"] == "plain"
		if plain != (c.Strategy.Rule == "mean") || plain != (c.Strategy.Prediction != nil) {
			t.Errorf("run %s: variant settings not applied: %+v", r.Dir, c.Strategy)
		}
		if !strings.HasPrefix(r.Dir, "variant="+r.Params["variant"]+"/") {
			t.Errorf("run dir %s", r.Dir)
		}
	}
	for _, bad := range []string{
		"[sweep.variants.x]\n\"strategy.nosuch\" = 1",
		"[sweep.grid]\n\"strategy.rule\" = [\"mean\"]\n[sweep.variants.x]\n\"strategy.rule\" = \"median\"",
		"[sweep.variants.\"a b\"]\n\"strategy.rule\" = \"median\"",
	} {
		if _, err := Parse([]byte(bad), "t"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
