package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// LabelKeys are the keys that make a run's label rather than a sweep point
// (strategy.options.* and strategy.score are part of the label too).
func LabelKeys() []string {
	return []string{"strategy.name", "strategy.rule", "strategy.f", "strategy.weighting", "strategy.score", "consensus.method"}
}

// Label names a run's strategy as plots and tables show it: its explicit
// label (sweep variants) if it has one, else a consensus run's method, or
// the strategy's name (or robust's rule, with its explicit f when the
// rule takes one), then its score and options in brackets when set.
func (c Config) Label() string {
	if c.RunLabel != "" {
		return c.RunLabel
	}
	if c.Consensus != nil {
		return c.Consensus.Method // task type consensus: the method is the label
	}
	var extra []string
	if c.Strategy.Score != "" {
		extra = append(extra, c.Strategy.Score)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Strategy.Options)) {
		extra = append(extra, fmt.Sprintf("%s=%g", k, c.Strategy.Options[k]))
	}
	if len(extra) == 0 {
		return c.baseLabel()
	}
	return c.baseLabel() + "[" + strings.Join(extra, ",") + "]"
}

func (c Config) baseLabel() string {
	switch c.Strategy.Name {
	case "robust":
		// A sweep over rules with one f gives it to the rules that take
		// one (validateSet): the others ignore it, and their label must
		// not say otherwise.
		if f, ok := c.ExplicitF(); ok && f > 0 && c.RobustTakesF() {
			return fmt.Sprintf("%s(f=%d)", c.Strategy.Rule, f)
		}
		return c.Strategy.Rule
	case "fedavg", "dpsgd", "gradient_tracking", "clipped_gossip", "function_sharing":
		if c.Strategy.Weighting == "mh" {
			return c.Strategy.Name + "(mh)"
		}
	}
	if f, ok := c.ExplicitF(); ok && (c.Strategy.Name == "scclip" || c.Strategy.Name == "clipped_gossip") {
		return fmt.Sprintf("%s(f=%d)", c.Strategy.Name, f)
	}
	return c.Strategy.Name
}
