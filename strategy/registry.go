package strategy

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Row is a strategy's registry row, declared in the strategy's own file:
// its config name, what it takes besides its options, its options with
// defaults and ranges, and how New builds it. New, the config validation,
// `trellis config defaults` and the docs' table of options all read the
// rows (Registry).
type Row struct {
	Name string
	// Summary is one line saying what the strategy does.
	Summary string
	// Personalized: each node keeps a personal model that it evaluates on
	// its own data, so the method is judged by the honest nodes' local
	// accuracy; the others train one model per node towards a common one,
	// judged on the global test set.
	Personalized bool
	// Weighting: the strategy averages with a weighting (uniform or
	// Metropolis–Hastings, Params.Weighting); the others ignore it, so New
	// refuses one.
	Weighting bool
	// Rule: the strategy aggregates with an aggregate rule (Params.Rule).
	Rule bool
	// RuleParams: the rule's parameters (Params.RuleParams) and what the
	// nodes exchange (Params.Updates) can be set: robust.
	RuleParams bool
	// F: the strategy tolerates f faulty inputs (Params.F); DefaultF is
	// its f when none is given (robust: resolved from the declared
	// fraction, see Params.Declared).
	F        bool
	DefaultF int
	// Score: lightyear's agreement score (Params.Score).
	Score bool
	// Ablations: rdpfl's prediction and clipping switches.
	Ablations bool
	// Async: the strategy is defined for asynchronous inputs (timing mode
	// "async"): each input may be of another step than the node's, with
	// its Incoming.Staleness, some senders may be missing, and a sender's
	// input may be older than its last one was. The others assume a
	// synchronous round and are refused in asynchronous mode.
	Async bool
	// Options are the real-valued parameters (Params.Options).
	Options []Option
	// OptionsNote is added to the error about an unknown option: where a
	// parameter that is not an option goes.
	OptionsNote string

	build func(p Params, o Values) (Strategy, error)
}

// Option is a named real parameter with its default and its range from Lo
// to Hi, each end included unless marked open; Whole options take whole
// numbers only.
type Option struct {
	Name           string
	Default        float64
	Lo, Hi         float64
	LoOpen, HiOpen bool
	Whole          bool
}

// Range is the allowed range as text: "[0, 1]", "(0, ∞)", "0 or 1",
// "[1, 1048576], whole numbers".
func (o Option) Range() string {
	if o.Whole && o.Lo == 0 && o.Hi == 1 && !o.LoOpen && !o.HiOpen {
		return "0 or 1"
	}
	lb, rb := "[", "]"
	if o.LoOpen {
		lb = "("
	}
	if o.HiOpen {
		rb = ")"
	}
	r := lb + number(o.Lo) + ", " + number(o.Hi) + rb
	if o.Whole {
		r += ", whole numbers"
	}
	return r
}

// number formats a bound without exponents: 1048576, 0.25, ∞.
func number(v float64) string {
	if math.IsInf(v, 1) {
		return "∞"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// check reports whether v is allowed.
func (o Option) check(v float64) bool {
	okLo := v > o.Lo || (!o.LoOpen && v == o.Lo)
	okHi := v < o.Hi || (!o.HiOpen && v == o.Hi)
	return !math.IsNaN(v) && okLo && okHi && (!o.Whole || v == math.Trunc(v))
}

// Values are a strategy's options with the defaults filled in.
type Values map[string]float64

// registry lists every strategy's row, in the order Names gives them.
var registry = []*Row{
	&localRow, &fedavgRow, &dpsgdRow, &trackingRow, &admmRow, &robustRow,
	&balanceRow, &ubarRow, &scclipRow, &clippedGossipRow, &afaRow, &asmrRow, &cflRow,
	&fedproxRow, &dittoRow, &rdpflRow, &lightyearRow, &murmuraRow, &dmttRow,
	&trackingSDRow, &functionSharingRow, &asyncMeanRow,
}

// Registry returns every strategy's row, in the order of Names.
func Registry() []Row {
	out := make([]Row, len(registry))
	for i, r := range registry {
		out[i] = *r
		out[i].Options = slices.Clone(r.Options)
	}
	return out
}

// Lookup returns the row of the strategy called name.
func Lookup(name string) (Row, bool) {
	for _, r := range registry {
		if r.Name == name {
			return *r, true
		}
	}
	return Row{}, false
}

// Names returns the strategy names New accepts.
func Names() []string {
	out := make([]string, len(registry))
	for i, r := range registry {
		out[i] = r.Name
	}
	return out
}

// AsyncInputs reports whether strategy name is defined for asynchronous
// inputs (its row has Async).
func AsyncInputs(name string) bool {
	r, ok := Lookup(name)
	return ok && r.Async
}

// AsyncNames lists the strategies defined for asynchronous inputs, joined
// by ", ".
func AsyncNames() string { return namesWith(func(r *Row) bool { return r.Async }) }

// namesWith lists the strategies whose row has has.
func namesWith(has func(*Row) bool) string {
	var out []string
	for _, r := range registry {
		if has(r) {
			out = append(out, r.Name)
		}
	}
	return strings.Join(out, ", ")
}

// OptionNames returns the options strategy name takes, in the order of its
// row (none for a strategy without options or an unknown name).
func OptionNames(name string) []string {
	r, _ := Lookup(name)
	var out []string
	for _, o := range r.Options {
		out = append(out, o.Name)
	}
	return out
}

// AllOptionNames returns every option name some strategy takes, sorted.
func AllOptionNames() []string {
	var out []string
	for _, r := range registry {
		for _, o := range r.Options {
			out = append(out, o.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// resolve checks opts against the row's options and fills in the
// defaults.
func (r *Row) resolve(opts map[string]float64) (Values, error) {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys) // report the first unknown key deterministically
	valid := OptionNames(r.Name)
	for _, k := range keys {
		if !slices.Contains(valid, k) {
			if len(valid) == 0 {
				return nil, paramErr(r.Name, "options."+k, opts[k], fmt.Sprintf("unknown option %q (%s takes no options)", k, r.Name))
			}
			return nil, paramErr(r.Name, "options."+k, opts[k], fmt.Sprintf("unknown option %q (valid: %s)%s", k, strings.Join(valid, ", "), r.OptionsNote))
		}
	}
	out := make(Values, len(r.Options))
	for _, o := range r.Options {
		v, ok := opts[o.Name]
		if !ok {
			v = o.Default
		}
		if !o.check(v) {
			return nil, paramErr(r.Name, "options."+o.Name, v, "allowed range "+o.Range())
		}
		out[o.Name] = v
	}
	return out, nil
}

// ParamError is New's error about one parameter: Key is its name as a
// config spells it under [strategy] ("f", "rule", "options.f_fraction").
type ParamError struct {
	Strategy string
	Key      string
	Value    any
	Problem  string
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("strategy %s: %s = %v: %s", e.Strategy, e.Key, e.Value, e.Problem)
}

func paramErr(strategy, key string, value any, problem string) error {
	return &ParamError{Strategy: strategy, Key: key, Value: value, Problem: problem}
}

// AsyncCapable is a strategy written outside this package that is
// defined for asynchronous inputs (Asynchronous).
type AsyncCapable interface {
	Strategy
	AsyncInputs() bool
}

// Asynchronous reports whether the strategy value s is defined for
// asynchronous inputs: one of the rows with Async, or an AsyncCapable
// saying so. A node in asynchronous timing refuses the others.
func Asynchronous(s Strategy) bool {
	switch t := s.(type) {
	case Local, *Local, *RobustRule, *AsyncMean:
		return true
	case AsyncCapable:
		return t.AsyncInputs()
	}
	return false
}
