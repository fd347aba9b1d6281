package strategy

import (
	"fmt"
	"strings"

	"github.com/trellis-fl/trellis/aggregate"
)

// Params are the settings New may apply. Fields a strategy does not use
// must be left at their zero value (New reports them otherwise; each
// strategy's Row says what it takes), except Declared, which describes the
// run rather than the strategy.
type Params struct {
	// Weighting is for the strategies whose row has Weighting.
	Weighting Weighting
	// Rule is the aggregate rule string of robust (aggregate.ParseSpec) and
	// of rdpfl (RDPFLRules).
	Rule string
	// RuleParams are robust's rule parameters but f (aggregate.Params; its
	// F must be 0: f is F's, or resolved from Declared).
	RuleParams aggregate.Params
	// Updates makes robust exchange the round's updates (RobustRule).
	Updates bool
	// F is the number of faulty inputs tolerated, for the strategies whose
	// row has F; nil means the row's DefaultF, and for robust with a rule
	// that has an f, f resolved at every aggregation from Declared
	// (aggregate.Auto).
	F *int
	// Declared is the fraction of nodes declared Byzantine in the run: the
	// fraction robust's f = "auto" resolves from, and robust's f_fraction
	// when its option f_expected is 1. Other strategies ignore it.
	Declared float64
	// Options holds the real-valued parameters by name; an absent key
	// takes the default of the strategy's row (Row.Options).
	Options map[string]float64
	// NoPrediction and NoClipping are rdpfl's ablations (RDPFL).
	NoPrediction, NoClipping bool
	// Score is lightyear's agreement score, one of ScoreKinds (ntk for "").
	Score string
}

// New builds a fresh strategy value (each node needs its own) from its
// config name and parameters, through its registry row. Unknown names,
// parameters and options the strategy does not take, and values out of
// range are errors naming the valid choices (*ParamError for a parameter).
func New(name string, p Params) (Strategy, error) {
	r, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("strategy: unknown name %q (valid: %s)", name, strings.Join(Names(), ", "))
	}
	only := func(key string, value any, what string, has func(*Row) bool) error {
		takers, verb := namesWith(has), "take"
		if !strings.Contains(takers, ",") {
			verb = "takes"
		}
		return paramErr(name, key, value, fmt.Sprintf("not used: only %s %s %s", takers, verb, what))
	}
	switch {
	case p.Weighting != Uniform && !r.Weighting:
		return nil, only("weighting", p.Weighting, "a weighting", func(r *Row) bool { return r.Weighting })
	case p.Rule != "" && !r.Rule:
		return nil, only("rule", fmt.Sprintf("%q", p.Rule), "a rule", func(r *Row) bool { return r.Rule })
	case (p.RuleParams != aggregate.Params{}) && !r.RuleParams:
		return nil, only("m, tau, iterations, from_previous, bucket, clip", "set", "the rule's parameters", func(r *Row) bool { return r.RuleParams })
	case p.Updates && !r.RuleParams:
		return nil, only("exchange", `"update"`, "an exchange", func(r *Row) bool { return r.RuleParams })
	case (p.NoPrediction || p.NoClipping) && !r.Ablations:
		return nil, only("prediction, clipping", false, "the prediction and clipping switches", func(r *Row) bool { return r.Ablations })
	case p.Score != "" && !r.Score:
		return nil, only("score", fmt.Sprintf("%q", p.Score), "a score", func(r *Row) bool { return r.Score })
	case p.F != nil && !r.F:
		return nil, only("f", *p.F, "f", func(r *Row) bool { return r.F })
	case p.F != nil && *p.F < 0:
		return nil, paramErr(name, "f", *p.F, "allowed range [0, ∞)")
	}
	o, err := r.resolve(p.Options)
	if err != nil {
		return nil, err
	}
	return r.build(p, o)
}

// fOr is p.F, or def when it is nil.
func fOr(p Params, def int) int {
	if p.F != nil {
		return *p.F
	}
	return def
}
