package config

import (
	"math"

	"github.com/trellis-fl/trellis/strategy"
)

// StrategyDoc is one strategy's registry row as `trellis config defaults
// --json` prints it under "strategies": what the TOML defaults list as
// comments, as data.
type StrategyDoc struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	// Takes says which [strategy] keys besides options the strategy reads.
	Takes StrategyTakes `json:"takes"`
	// DefaultF is its f when none is given (only for strategies taking f).
	DefaultF *int `json:"default_f,omitempty"`
	// Options are its [strategy.options], in the registry's order (empty,
	// not null, when it has none).
	Options []OptionDoc `json:"options"`
}

// StrategyTakes are a strategy's capabilities: the [strategy] keys it reads.
type StrategyTakes struct {
	Weighting  bool `json:"weighting"`
	Rule       bool `json:"rule"`
	RuleParams bool `json:"rule_params"` // exchange, m, tau, iterations, from_previous, bucket, clip
	F          bool `json:"f"`
	Score      bool `json:"score"`
	Ablations  bool `json:"ablations"` // prediction, clipping
}

// OptionDoc is one real-valued option: its default and allowed range. JSON
// has no infinity, so an unbounded end is null; Range is the range as the
// docs write it ("(0, ∞)").
type OptionDoc struct {
	Name    string   `json:"name"`
	Default float64  `json:"default"`
	Min     *float64 `json:"min"`
	Max     *float64 `json:"max"`
	MinOpen bool     `json:"min_open"`
	MaxOpen bool     `json:"max_open"`
	Whole   bool     `json:"whole"`
	Range   string   `json:"range"`
}

// StrategiesDoc is the strategy registry (strategy.Registry), in its order.
func StrategiesDoc() []StrategyDoc {
	finite := func(x float64) *float64 {
		if math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	var out []StrategyDoc
	for _, r := range strategy.Registry() {
		d := StrategyDoc{Name: r.Name, Summary: r.Summary, Options: []OptionDoc{},
			Takes: StrategyTakes{Weighting: r.Weighting, Rule: r.Rule, RuleParams: r.RuleParams, F: r.F, Score: r.Score, Ablations: r.Ablations}}
		if r.F {
			d.DefaultF = &r.DefaultF
		}
		for _, o := range r.Options {
			d.Options = append(d.Options, OptionDoc{Name: o.Name, Default: o.Default, Min: finite(o.Lo), Max: finite(o.Hi),
				MinOpen: o.LoOpen, MaxOpen: o.HiOpen, Whole: o.Whole, Range: o.Range()})
		}
		out = append(out, d)
	}
	return out
}

// DefaultsJSON is what `trellis config defaults --json` prints: every
// config key with its default (DefaultsMap); under "optional_sections",
// the sections a config has only when it uses them ([consensus], [timing],
// [worst_case]), each with its keys' defaults (a config that leaves such a
// section out does not run with these values: it runs without it); and
// under "strategies" the strategy registry (StrategiesDoc). Neither of the
// last two is a config key.
func DefaultsJSON() map[string]any {
	m := DefaultsMap()
	wc := WorstCase{Grid: WorstCaseGrid, Tolerance: WorstCaseTolerance, Refine: WorstCaseRefine, Confirm: WorstCaseConfirm}
	m["optional_sections"] = map[string]any{
		"consensus":  tomlMap(ConsensusDefault()),
		"timing":     tomlMap(TimingDefault()),
		"worst_case": tomlMap(wc),
	}
	m["strategies"] = StrategiesDoc()
	return m
}
