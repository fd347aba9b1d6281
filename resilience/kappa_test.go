package resilience

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/attack"
)

func mustAttack(t *testing.T, name string, p attack.Params) attack.Attack {
	t.Helper()
	a, err := attack.New(name, p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustRule(t *testing.T, name string, f int) aggregate.Rule {
	t.Helper()
	r, err := aggregate.New(name, f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// spyRule returns its first input and keeps a copy of every input set.
type spyRule struct{ calls [][][]float32 }

func (*spyRule) Name() string { return "spy" }

func (s *spyRule) Aggregate(dst []float32, xs [][]float32) error {
	c := make([][]float32, len(xs))
	for i, x := range xs {
		c[i] = slices.Clone(x)
	}
	s.calls = append(s.calls, c)
	copy(dst, xs[0])
	return nil
}

// spyAttack records the views it is given (a copy of their fields) and
// sends its own vector scaled by −1.
type spyAttack struct {
	views []seenView
}

type seenView struct {
	ptr                       *attack.View
	round, senders, attackers int
	honest                    [][]float32
	from, to                  int
}

func (*spyAttack) Name() string { return "spy" }

func (s *spyAttack) Craft(dst []float32, v *attack.View, honest []float32, from, to int, _ *rand.Rand) error {
	c := make([][]float32, len(v.Honest))
	for i, x := range v.Honest {
		c[i] = slices.Clone(x)
	}
	s.views = append(s.views, seenView{v, v.Round, v.Senders, v.Attackers, c, from, to})
	for j, x := range honest {
		dst[j] = -x
	}
	return nil
}

// κ̂ against its definition, recomputed from the inputs the rule received:
// per trial ||A(X) − mean(S)||² / mean_{i∈S} ||x_i − mean(S)||² with A(X) =
// x_0, S the first n − f inputs; the max and mean over trials, and the
// distances. The attackers see S through the View, with n and f.
func TestKappaDefinition(t *testing.T) {
	cfg := Config{N: 7, F: 2, D: 5, Spread: 0.5, Trials: 4, Seed: 3}
	rule, atk := &spyRule{}, &spyAttack{}
	got, err := Kappa(rule, atk, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rule.calls) != cfg.Trials || len(atk.views) != cfg.Trials*cfg.F {
		t.Fatalf("%d rule calls, %d crafts", len(rule.calls), len(atk.views))
	}
	var want Result
	for k, xs := range rule.calls {
		s := xs[:cfg.N-cfg.F]
		mu := make([]float64, cfg.D)
		for _, x := range s {
			for j, v := range x {
				mu[j] += float64(v) / float64(len(s))
			}
		}
		d2 := func(x []float32) float64 {
			var a float64
			for j, v := range x {
				a += (float64(v) - mu[j]) * (float64(v) - mu[j])
			}
			return a
		}
		var den float64
		for _, x := range s {
			den += d2(x) / float64(len(s))
		}
		ratio := d2(xs[0]) / den
		want.Kappa = max(want.Kappa, ratio)
		want.KappaMean += ratio / float64(cfg.Trials)
		want.Dist += math.Sqrt(d2(xs[0])) / float64(cfg.Trials)
		want.DistMax = max(want.DistMax, math.Sqrt(d2(xs[0])))
		for a := range cfg.F {
			v := atk.views[k*cfg.F+a]
			if v.ptr != atk.views[k*cfg.F].ptr {
				t.Error("attackers of one trial got different views")
			}
			if v.round != k || v.senders != 7 || v.attackers != 2 || !slices.EqualFunc(v.honest, s, slices.Equal) {
				t.Errorf("trial %d: view %+v, want S, 7 senders, 2 attackers", k, v)
			}
			if v.from != len(s)+a || v.to != cfg.N {
				t.Errorf("trial %d attacker %d: from %d to %d", k, a, v.from, v.to)
			}
			// The attack vectors follow S, and are −(own vector): not in S.
			if slices.ContainsFunc(s, func(x []float32) bool { return slices.Equal(x, xs[len(s)+a]) }) {
				t.Errorf("trial %d: attack vector %d equals an honest one", k, a)
			}
		}
	}
	for _, c := range [][2]float64{{got.Kappa, want.Kappa}, {got.KappaMean, want.KappaMean}, {got.Dist, want.Dist}, {got.DistMax, want.DistMax}} {
		if math.Abs(c[0]-c[1]) > 1e-12*c[1] {
			t.Errorf("got %+v, want %+v", got, want)
			break
		}
	}
	// Honest sets differ between trials.
	if slices.EqualFunc(rule.calls[0][0], rule.calls[1][0], func(a, b float32) bool { return a == b }) {
		t.Error("two trials drew the same honest vector")
	}
	// The mean with no attack vector is mean(S): κ̂ is rounding only.
	r, err := Kappa(mustRule(t, "mean", 0), mustAttack(t, "none", attack.Params{}), Config{N: 10, F: 0, D: 30, Spread: 1, Trials: 5, Seed: 1})
	if err != nil || r.Kappa > 1e-12 {
		t.Errorf("mean of S: κ̂ = %v (err %v)", r.Kappa, err)
	}
}

// The contrast of the spec: under a large scaling attack the mean's κ̂ is
// huge, the median's stays bounded.
func TestKappaMeanVersusMedian(t *testing.T) {
	cfg := Config{N: 20, F: 4, D: 50, Spread: 1, Trials: 10, Seed: 1}
	atk := mustAttack(t, "scaling", attack.Params{Scale: 1e6})
	mean, err := Kappa(mustRule(t, "mean", 0), atk, cfg)
	if err != nil {
		t.Fatal(err)
	}
	median, err := Kappa(mustRule(t, "median", 0), atk, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("scaling 1e6, n = 20, f = 4: κ̂ mean %.3g (dist %.3g), median %.3g (dist %.3g)", mean.Kappa, mean.Dist, median.Kappa, median.Dist)
	// f/n · 1e6 · ||b|| with ||b||² ≈ 2d: κ̂ ≈ 0.04 · 1e12 · 100 / 50.
	if mean.Kappa < 1e10 {
		t.Errorf("mean: κ̂ = %v, want huge (≈ 1e11)", mean.Kappa)
	}
	// Median: with 4 of 20 values extreme, each coordinate moves at most
	// to the 4/16 quantile shift of the honest values, well under 2σ.
	if median.Kappa > 4 {
		t.Errorf("median: κ̂ = %v, want bounded (< 4)", median.Kappa)
	}
}

func TestConfigErrors(t *testing.T) {
	good := DefaultConfig()
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mod  func(*Config)
		want []string
	}{
		{func(c *Config) { c.N = 1 }, []string{"n = 1", "[2, 100000]"}},
		{func(c *Config) { c.F = 19 }, []string{"f = 19", "[0, 18]"}},
		{func(c *Config) { c.F = -1 }, []string{"f = -1"}},
		{func(c *Config) { c.D = 0 }, []string{"d = 0", "[1, 100000000]"}},
		{func(c *Config) { c.D = 20_000_000 }, []string{"d = 20000000", "n·d"}},
		{func(c *Config) { c.Spread = math.NaN() }, []string{"spread = NaN", "(0, 1e+06]"}},
		{func(c *Config) { c.Trials = 0 }, []string{"trials = 0", "[1, 1000000]"}},
	} {
		cfg := good
		c.mod(&cfg)
		err := cfg.Validate()
		if err == nil {
			t.Errorf("%+v accepted", cfg)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %q does not say %q", cfg, err, w)
			}
		}
		if _, err := Kappa(mustRule(t, "mean", 0), mustAttack(t, "none", attack.Params{}), cfg); err == nil {
			t.Errorf("Kappa ran with %+v", cfg)
		}
	}
	if _, err := Table(nil, []attack.Attack{mustAttack(t, "none", attack.Params{})}, good); err == nil {
		t.Error("Table with no rules")
	}
}

// A table of rules under the standard attacks: each cell equals the Kappa
// of its pair, rules that cannot run at (n, f) and attacks that cannot
// (alie's z_max with f > n/2) are cells with their error, a data attack is
// such a cell, and the Markdown shows all of it. Same seed, same table.
func TestTable(t *testing.T) {
	cfg := Config{N: 10, F: 3, D: 20, Spread: 1, Trials: 3, Seed: 9}
	atks, err := StandardAttacks(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range atks {
		names = append(names, a.Name())
	}
	if want := []string{"none", "gaussian", "sign_flip", "scaling", "ana_proportional", "alie", "ipm", "min_max", "min_sum", "fang_trim", "gaussian_norm"}; !slices.Equal(names, want) {
		t.Fatalf("standard attacks %v, want %v", names, want)
	}
	atks = append(atks, mustAttack(t, "label_flip", attack.Params{}))
	rules := []aggregate.Rule{mustRule(t, "mean", 0), mustRule(t, "median", 0),
		Labeled(mustRule(t, "trimmed_mean", 3), "trimmed_mean f=3"), Labeled(mustRule(t, "trimmed_mean", 5), "trimmed_mean f=5")}
	res, err := Table(rules, atks, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, rule := range rules {
		for j, a := range atks {
			c := res.Cells[i][j]
			switch {
			case a.Name() == "label_flip":
				if !errors.Is(c.Err, ErrDataAttack) {
					t.Errorf("%s × label_flip: err = %v", rule.Name(), c.Err)
				}
			case i == 3:
				if !errors.Is(c.Err, aggregate.ErrTooFewInputs) {
					t.Errorf("trimmed_mean f = 5 at n = 10 × %s: err = %v", a.Name(), c.Err)
				}
			default:
				if c.Err != nil {
					t.Errorf("%s × %s: %v", rule.Name(), a.Name(), c.Err)
				}
				want, err := Kappa(rule, a, cfg)
				if err != nil || want != c.Result {
					t.Errorf("%s × %s: cell %+v, Kappa %+v (err %v)", rule.Name(), a.Name(), c.Result, want, err)
				}
			}
		}
	}
	// Scaling moves the mean further than the median.
	if mean, med := res.Cells[0][3].Result.Kappa, res.Cells[1][3].Result.Kappa; mean <= 10*med {
		t.Errorf("scaling: mean κ̂ %v, median κ̂ %v", mean, med)
	}
	var buf bytes.Buffer
	if err := res.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	t.Log("\n" + md)
	lines := strings.Split(strings.TrimSpace(md), "\n")
	header := "| rule \\ attack | none | gaussian | sign_flip | scaling | ana_proportional | alie | ipm | min_max | min_sum | fang_trim | gaussian_norm | label_flip |"
	if !slices.Contains(lines, header) {
		t.Errorf("no header row %q", header)
	}
	for _, want := range []string{"n = 10 inputs of which f = 3", "| trimmed_mean f=5 | n/a [2] |", "| trimmed_mean f=3 | 0.", "[1] attack label_flip", "[2] trial 0: trimmed_mean"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	// Every table row has as many cells as the header.
	for _, l := range lines {
		if strings.HasPrefix(l, "|") && strings.Count(strings.ReplaceAll(l, `\|`, ""), "|") != 14 {
			t.Errorf("row with the wrong number of cells: %q", l)
		}
	}
	again, _ := Table(rules, atks, cfg)
	if !slices.EqualFunc(again.Cells, res.Cells, func(a, b []Cell) bool {
		return slices.EqualFunc(a, b, func(x, y Cell) bool { return x.Result == y.Result })
	}) {
		t.Error("same seed, another table")
	}
	cfg.Seed++
	other, _ := Table(rules, atks, cfg)
	if other.Cells[0][0].Result == res.Cells[0][0].Result {
		t.Error("another seed, same cell")
	}

	// alie's z_max is infinite for f > n/2: a column of errors, not a crash.
	res, err = Table(rules[:2], []attack.Attack{mustAttack(t, "alie", attack.Params{})}, Config{N: 10, F: 6, D: 4, Spread: 1, Trials: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if c := res.Cells[i][0]; c.Err == nil || !strings.Contains(c.Err.Error(), "z_max") {
			t.Errorf("alie with f = 6 of 10: cell %+v", c)
		}
	}
}
