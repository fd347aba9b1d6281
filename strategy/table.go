package strategy

import (
	"fmt"
	"strings"
)

// OptionsText is a row's options as "name = default in range" joined by
// "; " ("gamma = 0.3 in (0, ∞); kappa = 1 in [0, ∞)"); empty without
// options.
func (r Row) OptionsText() string {
	parts := make([]string, len(r.Options))
	for i, o := range r.Options {
		in := " in "
		if o.Range() == "0 or 1" {
			in = ": "
		}
		parts[i] = o.Name + " = " + number(o.Default) + in + o.Range()
	}
	return strings.Join(parts, "; ")
}

// Takes lists what a row takes besides its options, as config keys.
func (r Row) Takes() []string {
	var out []string
	if r.Weighting {
		out = append(out, "weighting")
	}
	if r.Rule {
		out = append(out, "rule")
	}
	if r.RuleParams {
		out = append(out, "exchange, m, tau, iterations, from_previous, bucket, clip")
	}
	if r.F {
		out = append(out, "f")
	}
	if r.Score {
		out = append(out, "score")
	}
	if r.Ablations {
		out = append(out, "prediction, clipping")
	}
	return out
}

// MarkdownTable is the registry as the docs' table of strategies: one row
// per strategy with what it does, the [strategy] keys it takes and its
// options with defaults and allowed ranges.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| `strategy.name` | what it does | also takes | `strategy.options` (default, allowed range) |\n")
	b.WriteString("|---|---|---|---|\n")
	for _, r := range registry {
		takes := strings.Join(r.Takes(), "; ")
		if r.F && r.DefaultF != 0 {
			takes += fmt.Sprintf(" (default f %d)", r.DefaultF)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.Name, r.Summary, takes, r.OptionsText())
	}
	return b.String()
}
