package configs_test

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/configs"
	"github.com/trellis-fl/trellis/internal/imports"
	"github.com/trellis-fl/trellis/strategy"
)

// leadingComment is a preset's comment before its first key, without the
// "#" marks, one line per line.
func leadingComment(text string) string {
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(line, "#"), " "))
	}
	return strings.Join(lines, "\n")
}

// comments is every comment of a preset (whole-line and trailing ones:
// "#" is not used in the presets' values).
func comments(text string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			out = append(out, line[i+1:])
		}
	}
	return strings.Join(out, "\n")
}

// repoFile matches a file name with a source or document extension that a
// comment may point to: "docs/results/privacy.md", "main-100.toml".
var repoFile = regexp.MustCompile(`(?:^|[\s(\x60"'])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:md|py|sh|toml|go))\b`)

// TestPresetsPointInsideTheRepository: no preset cites a file outside the
// repository or an issue (imports.OutsideCitation, the repository-wide
// pattern), and every file a preset's comments name exists, from the
// repository's root or the preset's own directory.
func TestPresetsPointInsideTheRepository(t *testing.T) {
	root := filepath.Join("..")
	for _, name := range configs.Names() {
		b, _ := configs.Read(name)
		text := string(b)
		for i, line := range strings.Split(text, "\n") {
			if m := imports.OutsideCitation.FindString(line); m != "" {
				t.Errorf("preset %s, line %d: cites %q, which is not in the repository", name, i+1, m)
			}
		}
		for _, m := range repoFile.FindAllStringSubmatch(comments(text), -1) {
			f := m[1]
			if strings.HasPrefix(f, "runs/") {
				continue // a run's output directory in a command line
			}
			if exists(filepath.Join(root, f)) || exists(filepath.Join(root, "configs", path.Dir(name), f)) {
				continue
			}
			t.Errorf("preset %s names %s, which is not a file of the repository", name, f)
		}
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// term is how a preset's comment names a strategy, a robust rule or an
// attack: a pattern and the config values it stands for (any of them will
// do: "Gaussian" is the attack gaussian, gaussian_norm or ANA's additive
// noise; ANA and SFA, dynamic's mix of them). A term with forward = false is too common an English word to say
// that a comment names the method ("mean", "local"), so it only counts as
// naming a method the preset runs.
type term struct {
	re      *regexp.Regexp
	kind    string // "strategy", "rule" or "attack"
	values  []string
	forward bool
}

// name is a method's name as written (FedAvg, DMTT, BALANCE): matched
// with its case, so that a lower-case variant name or label ("fedavg")
// does not count as the method.
func name(pattern, kind string, forward bool, values ...string) term {
	return term{regexp.MustCompile(`(?:^|[^\w-])(?:` + pattern + `)(?:$|[^\w-])`), kind, values, forward}
}

// words is a term written in words ("trimmed mean", "sign flipping"),
// matched in any case.
func words(pattern, kind string, forward bool, values ...string) term {
	return name(`(?i:`+pattern+`)`, kind, forward, values...)
}

var terms = []term{
	name(`FedAvg`, "strategy", true, "fedavg"),
	name(`DMTT`, "strategy", true, "dmtt"),
	name(`MURMURA`, "strategy", true, "murmura"),
	name(`LIGHTYEAR`, "strategy", true, "lightyear"),
	name(`R-DPFL`, "strategy", true, "rdpfl"),
	name(`BALANCE`, "strategy", true, "balance"),
	name(`UBAR`, "strategy", true, "ubar"),
	name(`SCClip`, "strategy", true, "scclip"),
	name(`Ditto`, "strategy", true, "ditto"),
	name(`FedProx`, "strategy", true, "fedprox"),
	name(`CFL`, "strategy", true, "cfl"),
	name(`AFA`, "strategy", true, "afa"),
	name(`ASMR`, "strategy", true, "asmr"),
	name(`ADMM`, "strategy", true, "admm"),
	words(`local-only`, "strategy", true, "local"),
	words(`local`, "strategy", false, "local"),
	words(`trimmed mean`, "rule", true, "trimmed_mean"),
	name(`Multi-Krum`, "rule", true, "multi_krum"),
	name(`Krum`, "rule", true, "krum", "multi_krum"),
	words(`geometric median`, "rule", true, "geometric_median"),
	words(`centered clipping`, "rule", true, "centered_clipping"),
	name(`Bulyan`, "rule", true, "bulyan"),
	words(`median`, "rule", true, "median", "geometric_median"),
	words(`mean`, "rule", false, "mean"),
	words(`Gaussian`, "attack", true, "gaussian", "gaussian_norm", "ana", "ana_proportional"),
	words(`ANA`, "attack", true, "ana", "ana_proportional", "dynamic"),
	words(`SFA`, "attack", true, "sfa", "dynamic"),
	name(`ALIE`, "attack", true, "alie"),
	name(`IPM`, "attack", true, "ipm"),
	words(`sign[ -]flip(?:ping)?`, "attack", true, "sign_flip"),
	words(`label[ -]flip(?:ping)?`, "attack", true, "label_flip"),
	words(`min[ -]max`, "attack", true, "min_max"),
	words(`min[ -]sum`, "attack", true, "min_sum"),
	name(`Fang`, "attack", true, "fang_trim"),
}

// The config names with an underscore read as what they are wherever a
// comment writes them ("gaussian_norm", "adaptive_receiver").
func init() {
	for _, set := range []struct {
		kind  string
		names []string
	}{{"strategy", strategy.Names()}, {"rule", aggregate.Names()}, {"attack", attack.Names()}} {
		for _, n := range set.names {
			if strings.Contains(n, "_") {
				terms = append(terms, name(regexp.QuoteMeta(n), set.kind, true, n))
			}
		}
	}
}

// expanded is a preset parsed and expanded, once for all the tests (a
// sweep validates every run: seconds for the larger presets).
type expanded struct {
	config config.Config
	runs   []config.SweepRun
	err    error
}

var (
	expandOnce sync.Once
	presets    map[string]expanded
)

func expand(name string) expanded {
	expandOnce.Do(func() {
		presets = map[string]expanded{}
		for _, n := range configs.Names() {
			b, _ := configs.Read(n)
			c, err := config.Parse(b, n)
			if err != nil {
				presets[n] = expanded{err: err}
				continue
			}
			runs, _, err := c.Expand()
			if err != nil {
				err = fmt.Errorf("sweep: %w", err)
			}
			if c.WorstCase != nil {
				// A worst-case search's runs start from its defences.
				runs = nil
				for name := range c.WorstCase.Defences {
					d, derr := c.Defence(name)
					err = errors.Join(err, derr)
					runs = append(runs, config.SweepRun{Config: d, Dir: name})
				}
			}
			presets[n] = expanded{config: c, runs: runs, err: err}
		}
	})
	return presets[name]
}

// ran is what a preset's runs use, by kind: every run's strategy, robust's
// and R-DPFL's rule, and the attack of runs with Byzantine nodes.
func ran(t *testing.T, name string) map[string][]string {
	e := expand(name)
	if e.err != nil {
		t.Fatalf("preset %s: %v", name, e.err)
	}
	used := map[string][]string{}
	add := func(kind, v string) {
		if !slices.Contains(used[kind], v) {
			used[kind] = append(used[kind], v)
		}
	}
	for _, r := range e.runs {
		if r.Config.Consensus != nil {
			continue // task type consensus: no strategy, rule or attack runs
		}
		s := r.Config.Strategy
		add("strategy", s.Name)
		if s.Name == "robust" || s.Name == "rdpfl" {
			if sp, err := aggregate.ParseSpec(s.Rule); err == nil {
				add("rule", sp.Rule)
			}
		}
		if a := r.Config.Adversary; (a.Fraction > 0 || len(a.IDs) > 0) && a.Attack != "none" {
			add("attack", a.Attack)
		}
	}
	return used
}

// TestPresetsAreWhatTheirCommentsSay: every strategy, robust rule and
// attack a preset's leading comment names is one its runs use, and every
// strategy its runs use is named there (for robust, each rule it runs).
func TestPresetsAreWhatTheirCommentsSay(t *testing.T) {
	for _, name := range configs.Names() {
		b, _ := configs.Read(name)
		comment := leadingComment(string(b))
		if comment == "" {
			t.Errorf("preset %s has no leading comment", name)
			continue
		}
		used := ran(t, name)
		named := map[string][]string{}
		for _, tm := range terms {
			if !tm.re.MatchString(comment) {
				continue
			}
			if tm.forward && !slices.ContainsFunc(tm.values, func(v string) bool { return slices.Contains(used[tm.kind], v) }) {
				t.Errorf("preset %s: its comment names %s (%s %s), which none of its runs uses (they use %s)",
					name, tm.re.FindString(comment), tm.kind, strings.Join(tm.values, " or "), strings.Join(used[tm.kind], ", "))
			}
			named[tm.kind] = append(named[tm.kind], tm.values...)
		}
		for _, s := range used["strategy"] {
			if s != "robust" && !slices.Contains(named["strategy"], s) {
				t.Errorf("preset %s runs strategy %s, which its comment does not name", name, s)
			}
		}
		for _, r := range used["rule"] {
			if !slices.Contains(named["rule"], r) {
				t.Errorf("preset %s runs the rule %s, which its comment does not name", name, r)
			}
		}
	}
}

// TestPresetLabelsAreHonest: a run's label shows an f only when its rule
// takes one. A sweep over rules with one strategy.f gives it to the rules
// that take one (byzantine-sweep: the trimmed mean's f = 2), and the
// mean's and the median's tables must not say median(f=2).
func TestPresetLabelsAreHonest(t *testing.T) {
	for _, name := range configs.Names() {
		e := expand(name)
		if e.err != nil {
			t.Fatalf("preset %s: %v", name, e.err)
		}
		for _, r := range e.runs {
			rc := r.Config
			if rc.RunLabel == "" && rc.Strategy.Name == "robust" && strings.Contains(rc.Label(), "(f=") && !rc.RobustTakesF() {
				t.Errorf("preset %s, run %s: label %q, but the rule %s takes no f", name, r.Dir, rc.Label(), rc.Strategy.Rule)
			}
		}
	}
}
