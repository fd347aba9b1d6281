package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/data"
)

// groupedDatasets are the datasets whose samples carry a writer or
// subject, which partition.method = "natural" splits by.
var groupedDatasets = []string{"femnist", "har", "pamap2"}

// embeddedTrainSize is the training-set size of the datasets whose size is
// known without loading them.
var embeddedTrainSize = map[string]int{"mnist": 60000, "fashion_mnist": 60000}

// validateMore holds the checks of Validate that the first version lacked
// (each a silent misbehaviour before): settings that name paths, leave no
// honest node, or are ignored by the strategy, rule or dataset they sit
// next to.
func (c Config) validateMore(bad func(key string, val any, allowed string)) {
	if c.Name == "" || c.Name == "." || c.Name == ".." || SafeName(c.Name) != c.Name {
		bad("name", fmt.Sprintf("%q", c.Name), "a run's name is its directory under the output directory: use only letters, digits and . = - _ (not \".\" or \"..\")")
	}
	if c.Nodes >= 1 && c.Adversary.Fraction >= 0 && c.Adversary.Fraction < 1 {
		if k := c.byzantineCount(); k >= c.Nodes {
			key, val := "adversary.fraction", any(c.Adversary.Fraction)
			if len(c.Adversary.IDs) > 0 {
				key, val = "adversary.ids", c.Adversary.IDs
			}
			bad(key, val, fmt.Sprintf("with nodes = %d this makes all %d nodes Byzantine (k = max(1, round(nodes·fraction))): no honest node is left to learn or to measure; lower it or add nodes", c.Nodes, k))
		}
	}
	st := c.Strategy
	if sp := c.Partition.Split; st.Name == "lightyear" && len(sp) == 3 && sp[1] == 0 {
		bad("partition.split", sp, "strategy lightyear scores peers on the validation split: its fraction (the second value) must be > 0")
	}
	if c.Partition.Method == "natural" && slices.Contains(Datasets, c.Data.Dataset) && !slices.Contains(groupedDatasets, c.Data.Dataset) {
		bad("partition.method", `"natural"`, fmt.Sprintf("splits by writer or subject, which data.dataset = %s does not record (natural works with %s); use iid, dirichlet or shards", c.Data.Dataset, strings.Join(groupedDatasets, ", ")))
	}
	if c.Topology.Kind == "kregular" && c.Topology.K >= 1 && c.Topology.K < c.Nodes && c.Nodes*c.Topology.K%2 == 1 {
		bad("topology.k", c.Topology.K, fmt.Sprintf("with nodes = %d: a k-regular graph needs nodes·k even; change k or nodes", c.Nodes))
	}
	if c.Data.Samples > 0 && c.Data.Samples < c.Nodes && c.Partition.Method != "sampled" {
		bad("data.samples", c.Data.Samples, fmt.Sprintf("with nodes = %d every node needs at least one sample of its own: use 0 (all) or at least %d, or partition.method = \"sampled\" (each node draws partition.per_node samples; nodes may share them)", c.Nodes, c.Nodes))
	}
	if size, ok := embeddedTrainSize[c.Data.Dataset]; ok && c.Data.Samples == 0 && c.Nodes > size && c.Partition.Method != "sampled" {
		bad("nodes", c.Nodes, fmt.Sprintf("%s has %d training samples and every node needs at least one of its own: use at most %d nodes, or partition.method = \"sampled\" (each node draws partition.per_node samples; nodes may share them)", c.Data.Dataset, size, size))
	}
	if size, ok := embeddedTrainSize[c.Data.Dataset]; ok && c.Data.Samples > size {
		bad("data.samples", c.Data.Samples, fmt.Sprintf("%s has %d training samples: allowed range 0 (all) to %d", c.Data.Dataset, size, size))
	}
}

// embeddedTestSize is the global test set size of the datasets whose size
// is known without loading them.
var embeddedTestSize = map[string]int{"mnist": 10000, "fashion_mnist": 10000}

// validateEvalScale checks the settings that scale a run down to many
// nodes: the sampled partition and the rotating global test sample.
func (c Config) validateEvalScale(bad func(key string, val any, allowed string)) {
	p := c.Partition
	if p.PerNode < 0 {
		bad("partition.per_node", p.PerNode, "need ≥ 1 with partition.method = \"sampled\" (the samples each node draws), 0 otherwise")
	}
	if p.Method == "sampled" {
		pool, known := embeddedTrainSize[c.Data.Dataset]
		if c.Data.Samples > 0 {
			pool, known = c.Data.Samples, true
		}
		switch {
		case p.PerNode == 0:
			bad("partition.per_node", 0, "partition.method = \"sampled\" needs the number of distinct samples each node draws: set per_node ≥ 1 (with the split, a node needs about 1/test fraction samples to test on one)")
		case known && p.PerNode > pool:
			bad("partition.per_node", p.PerNode, fmt.Sprintf("each node draws distinct samples of the %d training samples used: allowed range 1 to %d", pool, pool))
		case c.Nodes > 0 && int64(c.Nodes)*int64(p.PerNode) > data.MaxSampledEntries:
			bad("partition.per_node", p.PerNode, fmt.Sprintf("with nodes = %d the nodes' index lists hold %d entries (4 bytes each), more than %d: lower per_node or nodes", c.Nodes, int64(c.Nodes)*int64(p.PerNode), int64(data.MaxSampledEntries)))
		}
	}
	e := c.Evaluation
	switch e.GlobalSample {
	case "", "first":
	case "rotating":
		size, known := embeddedTestSize[c.Data.Dataset]
		switch {
		case c.Data.Dataset == "pamap2":
			bad("evaluation.global_sample", `"rotating"`, "pamap2 has no global test set (its nodes' local test splits are the test data): remove global_sample")
		case e.GlobalTest == 0:
			bad("evaluation.global_sample", `"rotating"`, "evaluation.global_test = 0 evaluates on no global test sample: set global_test to the samples each node is evaluated on per evaluated round, or remove global_sample")
		case e.GlobalTest < 0:
			bad("evaluation.global_sample", `"rotating"`, "evaluation.global_test = −1 evaluates every node on the whole global test set, which leaves nothing to rotate: set global_test to the samples each node is evaluated on per evaluated round (for example 100)")
		case known && e.GlobalTest >= size:
			bad("evaluation.global_sample", `"rotating"`, fmt.Sprintf("evaluation.global_test = %d is the whole global test set of %s (%d samples), which leaves nothing to rotate: lower global_test or remove global_sample", e.GlobalTest, c.Data.Dataset, size))
		}
	default:
		bad("evaluation.global_sample", fmt.Sprintf("%q", e.GlobalSample), `want "first" (the first global_test samples, the same for every node; the default) or "rotating" (another window per node and evaluated round)`)
	}
}

// byzantineCount is how many nodes the adversary holds: the size of the
// set adversary.Choose picks (Choose only places them, by the seed), and 0
// where Choose refuses the settings (Validate says why). A test of
// experiment holds the two equal.
func (c Config) byzantineCount() int {
	a, n := c.Adversary, c.Nodes
	switch {
	case !(a.Fraction >= 0 && a.Fraction < 1):
		return 0
	case len(a.IDs) > 0:
		if a.Fraction != 0 || slices.ContainsFunc(a.IDs, func(b int) bool { return b < 0 || b >= n }) {
			return 0
		}
		return len(slices.Compact(slices.Sorted(slices.Values(a.IDs))))
	case a.Fraction == 0:
		return 0
	}
	return max(1, int(math.Round(float64(n)*a.Fraction)))
}

// adversaryKeys are the attack parameters of [adversary].
var adversaryKeys = []string{"attack", "sigma", "replace", "scale", "percent", "z", "minus", "epsilon",
	"perturbation", "gamma_init", "b", "same_for_all", "idle", "liar", "claim_forgery", "claim_replay", "claim_flood"}

// validateFile checks what only the file can tell: keys set that the run
// ignores. A key counts as set when the file names it, whatever its value
// (a rule named next to a strategy without one is a mistake even when it
// names the default rule), except in a copy of `trellis config defaults`
// (defaultsCopy), which names every key: there a key counts as set when
// it differs from its default. A key a sweep varies is judged per run
// instead.
func (c Config) validateFile(md toml.MetaData, defaultsCopy bool) error {
	defined := func(section, key string) bool { return md.IsDefined(section, key) }
	if defaultsCopy {
		flat, defaults := flatten(c), flatten(Default())
		defined = func(section, key string) bool {
			k := section + "." + key
			return md.IsDefined(section, key) && flat[k] != defaults[k]
		}
	}
	return c.validateSet(defined)
}

// CheckSet applies the checks of keys a file sets but the run ignores to
// keys set another way (`--set`), given as dotted keys.
func (c Config) CheckSet(keys []string) error {
	return c.validateSet(func(section, key string) bool { return slices.Contains(keys, section+"."+key) })
}

func (c Config) validateSet(set func(section, key string) bool) error {
	var errs []error
	swept := func(key string) bool {
		if _, ok := c.Sweep.Grid[key]; ok {
			return true
		}
		if _, ok := c.Sweep.Grid[strings.Split(key, ".")[0]]; ok {
			return true // a grid over whole tables
		}
		for _, set := range c.Sweep.Variants {
			if _, ok := set[key]; ok {
				return true
			}
		}
		return false
	}
	if set("partition", "per_node") && c.Partition.Method != "sampled" && !swept("partition.method") {
		errs = append(errs, fmt.Errorf("partition.per_node = %d: only partition.method = \"sampled\" draws a number of samples per node, and this run's method is %q; remove per_node or set method = \"sampled\"", c.Partition.PerNode, c.Partition.Method))
	}
	st := c.Strategy
	if set("strategy", "rule") && st.Name != "robust" && st.Name != "rdpfl" && !swept("strategy.name") {
		errs = append(errs, fmt.Errorf("strategy.rule = %q: only strategy.name = \"robust\" and \"rdpfl\" take a rule, and this run is %q; remove strategy.rule or set strategy.name = \"robust\"", st.Rule, st.Name))
	}
	// A sweep over rules with one f gives it to the rules that take one.
	if sp, ok := c.RobustSpec(); ok && !sp.TakesF() && !swept("strategy.rule") {
		if f, ok := c.ExplicitF(); ok {
			errs = append(errs, fmt.Errorf("strategy.f = %d: rule %q takes no f (rules and pre-aggregators with one: %s); remove strategy.f", f, st.Rule, strings.Join(aggregate.FRules(), ", ")))
		}
	}
	// A rule for low-dimensional vectors would only fail at round 0, on
	// the first model it meets.
	if sp, ok := c.RobustSpec(); ok && slices.Contains(aggregate.LowDimNames(), sp.Rule) {
		errs = append(errs, fmt.Errorf("strategy.rule = %q: a rule for vectors of at most %d coordinates (linear programs over the hulls of subsets of the inputs, each round), and a node's model has thousands of parameters; use it on low-dimensional vectors through package aggregate, or choose a rule for models: %s", st.Rule, aggregate.SafeAreaMaxDim, strings.Join(aggregate.Names(), ", ")))
	}
	if err := c.checkConsensusKeys(set, swept); err != nil {
		errs = append(errs, err)
	}
	if c.Adversary.Fraction == 0 && len(c.Adversary.IDs) == 0 && !swept("adversary.fraction") && !swept("adversary.ids") {
		var keys []string
		for _, k := range adversaryKeys {
			if set("adversary", k) {
				keys = append(keys, "adversary."+k)
			}
		}
		if len(keys) > 0 {
			errs = append(errs, fmt.Errorf("%s set, but adversary.fraction = 0 and no adversary.ids: nobody attacks, so they would be ignored; set adversary.fraction (or ids), or remove them", strings.Join(keys, ", ")))
		}
	}
	return errors.Join(errs...)
}
