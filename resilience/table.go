package resilience

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/attack"
)

// Cell is one rule × attack entry: its Result, or the error that kept it
// from running (then Result is zero).
type Cell struct {
	Result Result
	Err    error
}

// Labeled returns rule under another name, for tables that hold one rule
// with several parameters ("trimmed_mean f=2").
func Labeled(rule aggregate.Rule, label string) aggregate.Rule { return labeled{rule, label} }

type labeled struct {
	aggregate.Rule
	label string
}

func (l labeled) Name() string { return l.label }

// Results is a table of every rule under every attack.
type Results struct {
	Config  Config
	Rules   []string // rule names, in the order given
	Attacks []string // attack names, in the order given
	Cells   [][]Cell // Cells[rule][attack]
}

// Table measures every rule under every attack in the setting cfg. Only an
// invalid cfg, or no rule or no attack, is an error; a rule or attack that
// cannot run is a cell holding its error. Each trial draws one honest set,
// each attack crafts its vectors once per trial, and every rule aggregates
// them, so the cells of a column see identical inputs. Rules are used one
// call at a time, as aggregate requires.
func Table(rules []aggregate.Rule, attacks []attack.Attack, cfg Config) (*Results, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(rules) == 0 || len(attacks) == 0 {
		return nil, fmt.Errorf("resilience: Table needs at least one rule and one attack, got %d and %d", len(rules), len(attacks))
	}
	res := &Results{Config: cfg, Rules: make([]string, len(rules)), Attacks: make([]string, len(attacks))}
	for i, r := range rules {
		res.Rules[i] = r.Name()
	}
	for j, a := range attacks {
		res.Attacks[j] = a.Name()
	}
	accs := make([][]acc, len(rules))
	for i := range accs {
		accs[i] = make([]acc, len(attacks))
	}
	attackErr := make([]error, len(attacks))
	for j, a := range attacks {
		if _, ok := a.(attack.DataAttack); ok {
			attackErr[j] = fmt.Errorf("attack %s: %w", a.Name(), ErrDataAttack)
		}
	}
	t := newTrial(cfg)
	out := make([]float32, cfg.D)
	for k := range cfg.Trials {
		t.draw(cfg, k)
		for j, atk := range attacks {
			if attackErr[j] != nil {
				continue
			}
			if err := t.attack(atk, cfg, k); err != nil {
				attackErr[j] = fmt.Errorf("trial %d: %w", k, err)
				continue
			}
			for i, rule := range rules {
				a := &accs[i][j]
				if a.err != nil {
					continue
				}
				if err := rule.Aggregate(out, t.x); err != nil {
					a.err = fmt.Errorf("trial %d: %w", k, err)
					continue
				}
				ratio, dist, err := t.score(rule.Name(), out)
				if err != nil {
					a.err = fmt.Errorf("trial %d: %w", k, err)
					continue
				}
				a.add(ratio, dist)
			}
		}
	}
	res.Cells = make([][]Cell, len(rules))
	for i := range rules {
		res.Cells[i] = make([]Cell, len(attacks))
		for j := range attacks {
			switch a := accs[i][j]; {
			case attackErr[j] != nil:
				res.Cells[i][j].Err = attackErr[j]
			case a.err != nil:
				res.Cells[i][j].Err = a.err
			default:
				res.Cells[i][j].Result = a.result()
			}
		}
	}
	return res, nil
}

// WriteMarkdown writes the table as Markdown: a line with the setting, one
// row per rule and one column per attack, each cell "κ̂ / dist" (dist the
// mean distance of the output to the honest mean), and a cell that could
// not run as "n/a [k]" with its error as footnote k below the table
// (identical errors share a footnote).
func (r *Results) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	c := r.Config
	fmt.Fprintf(bw, "Empirical κ-robustness: n = %d inputs of which f = %d attack vectors, d = %d, spread %g, %d trials, seed %d.\n", c.N, c.F, c.D, c.Spread, c.Trials, c.Seed)
	fmt.Fprintf(bw, "Each cell: κ̂ = max over trials of ||A(X) − mean(S)||² / mean_{i∈S} ||x_i − mean(S)||², then the mean distance ||A(X) − mean(S)||.\n\n")
	fmt.Fprintf(bw, "| rule \\ attack |")
	for _, a := range r.Attacks {
		fmt.Fprintf(bw, " %s |", cellText(a))
	}
	fmt.Fprintf(bw, "\n|---|")
	for range r.Attacks {
		fmt.Fprintf(bw, "---:|")
	}
	fmt.Fprintln(bw)
	var notes []string
	for i, rule := range r.Rules {
		fmt.Fprintf(bw, "| %s |", cellText(rule))
		for j := range r.Attacks {
			cell := r.Cells[i][j]
			if cell.Err != nil {
				msg := cellText(cell.Err.Error())
				k := indexOf(notes, msg)
				if k < 0 {
					notes = append(notes, msg)
					k = len(notes) - 1
				}
				fmt.Fprintf(bw, " n/a [%d] |", k+1)
				continue
			}
			fmt.Fprintf(bw, " %s / %s |", num(cell.Result.Kappa), num(cell.Result.Dist))
		}
		fmt.Fprintln(bw)
	}
	if len(notes) > 0 {
		fmt.Fprintln(bw)
		for k, n := range notes {
			fmt.Fprintf(bw, "[%d] %s\n", k+1, n)
		}
	}
	return bw.Flush()
}

// num formats a value with 3 significant digits.
func num(x float64) string { return fmt.Sprintf("%.3g", x) }

// cellText makes s safe inside a Markdown table cell: one line, pipes
// escaped.
func cellText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

// StandardAttacks returns the attacks `trellis bench rules` compares by
// default, every attack of attack.Names() that acts on vectors alone, with
// the spec's defaults: none, gaussian (σ_n = 10·Spread, the spec leaving
// it to the experiment), sign_flip, scaling (s = 10), ana_proportional
// (s = 100 percent), alie (z_max), ipm (ε = 0.1), min_max and min_sum
// (unit_vec, γ_init = 10), fang_trim (b = 2) and gaussian_norm (noise at
// the honest mean's norm). random and dynamic need a
// model architecture and label_flip is a data attack, so they are left
// out, as are ana and sfa, LIGHTYEAR's names for gaussian and sign_flip,
// and adaptive and adaptive_receiver, which need the previous round's
// honest vectors (and the latter each receiver's neighbourhood).
func StandardAttacks(cfg Config) ([]attack.Attack, error) {
	p := attack.Params{Sigma: 10 * cfg.Spread, Percent: 100}
	var out []attack.Attack
	var errs []error
	for _, name := range attack.Names() {
		switch name {
		case "random", "label_flip", "dynamic", "ana", "sfa", "adaptive", "adaptive_receiver":
			continue
		}
		a, err := attack.New(name, p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, a)
	}
	return out, errors.Join(errs...)
}
