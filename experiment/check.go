package experiment

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/aggregate"
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
	if c.Name == "" || c.Name == "." || c.Name == ".." || safeName(c.Name) != c.Name {
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
	if c.Partition.Method == "natural" && slices.Contains(datasets, c.Data.Dataset) && !slices.Contains(groupedDatasets, c.Data.Dataset) {
		bad("partition.method", `"natural"`, fmt.Sprintf("splits by writer or subject, which data.dataset = %s does not record (natural works with %s); use iid, dirichlet or shards", c.Data.Dataset, strings.Join(groupedDatasets, ", ")))
	}
	if c.Topology.Kind == "kregular" && c.Topology.K >= 1 && c.Topology.K < c.Nodes && c.Nodes*c.Topology.K%2 == 1 {
		bad("topology.k", c.Topology.K, fmt.Sprintf("with nodes = %d: a k-regular graph needs nodes·k even; change k or nodes", c.Nodes))
	}
	if c.Data.Samples > 0 && c.Data.Samples < c.Nodes {
		bad("data.samples", c.Data.Samples, fmt.Sprintf("with nodes = %d every node needs at least one sample: use 0 (all) or at least %d", c.Nodes, c.Nodes))
	}
	if size, ok := embeddedTrainSize[c.Data.Dataset]; ok && c.Data.Samples > size {
		bad("data.samples", c.Data.Samples, fmt.Sprintf("%s has %d training samples: allowed range 0 (all) to %d", c.Data.Dataset, size, size))
	}
}

// optionsText is an options table as TOML-like text ({lambda = 1, tau = 0.5}),
// not Go's map syntax.
func optionsText(o map[string]float64) string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s = %g", k, o[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// byzantineCount is how many nodes the adversary holds.
func (c Config) byzantineCount() int { return len(c.byzantineIDs()) }

// adversaryKeys are the attack parameters of [adversary].
var adversaryKeys = []string{"attack", "sigma", "replace", "scale", "percent", "z", "minus", "epsilon",
	"perturbation", "gamma_init", "b", "same_for_all", "idle", "liar", "claim_forgery", "claim_replay", "claim_flood"}

// validateFile checks what only the file can tell: keys set that the run
// ignores. A key a sweep varies is judged per run instead.
func (c Config) validateFile(md toml.MetaData) error {
	return c.validateSet(func(section, key string) bool { return md.IsDefined(section, key) })
}

// CheckSet applies the checks of keys a file sets but the run ignores to
// keys set another way (`--set`), given as dotted keys.
func (c Config) CheckSet(keys []string) error {
	return c.validateSet(func(section, key string) bool { return slices.Contains(keys, section+"."+key) })
}

func (c Config) validateSet(defined func(section, key string) bool) error {
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
	// A key counts as set when the file sets it to something other than
	// its default (a copy of `trellis config defaults` sets every key).
	flat, defaults := flatten(c), flatten(DefaultConfig())
	set := func(section, key string) bool {
		k := section + "." + key
		return defined(section, key) && flat[k] != defaults[k]
	}
	st := c.Strategy
	if set("strategy", "rule") && st.Name != "robust" && st.Name != "rdpfl" && !swept("strategy.name") {
		errs = append(errs, fmt.Errorf("strategy.rule = %q: only strategy.name = \"robust\" and \"rdpfl\" take a rule, and this run is %q; remove strategy.rule or set strategy.name = \"robust\"", st.Rule, st.Name))
	}
	// A sweep over rules with one f gives it to the rules that take one.
	if sp, ok := c.robustSpec(); ok && !sp.TakesF() && !swept("strategy.rule") {
		if f, ok := c.explicitF(); ok {
			errs = append(errs, fmt.Errorf("strategy.f = %d: rule %q takes no f (rules and pre-aggregators with one: %s); remove strategy.f", f, st.Rule, strings.Join(aggregate.FRules(), ", ")))
		}
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

// Warnings lists what is allowed but probably not meant: an explicit f =
// 0 against a declared adversary, and f = "auto" capped below the declared
// fraction by what the rule tolerates at a node's in-degree.
func (c Config) Warnings() []string {
	var out []string
	st := c.Strategy
	beta := c.declaredFraction()
	if f, ok := c.explicitF(); ok && f == 0 && beta > 0 && (st.Name != "robust" || c.robustTakesF()) {
		out = append(out, fmt.Sprintf("strategy.f = 0 with %.0f %% of the nodes declared Byzantine: the rule tolerates no faulty input (it is then the plain rule); remove strategy.f for f = \"auto\"", 100*beta))
	}
	if !c.robustTakesF() || beta == 0 {
		return out
	}
	if _, explicit := c.explicitF(); explicit {
		return out
	}
	rec, err := c.FRecord()
	if err != nil || rec == nil {
		return out
	}
	capped := 0
	first := -1
	for _, n := range rec.Nodes {
		if n.F < n.Wanted {
			capped++
			if first < 0 {
				first = n.Node
			}
		}
	}
	if capped > 0 {
		n := rec.Nodes[first]
		out = append(out, fmt.Sprintf("strategy.f = auto: %s tolerates at most f = %d with node %d's %d inputs, below the ⌈%g·%d⌉ = %d the declared fraction asks for (%d of %d nodes capped); use a rule that tolerates more, or more neighbours",
			st.Rule, n.F, n.Node, n.InDegree+1, beta, n.InDegree, n.Wanted, capped, len(rec.Nodes)))
	}
	return out
}

// FRecord is strategy.f as a run resolved it, node by node (manifest.json
// "f"): the setting, the declared Byzantine fraction, and per node its
// in-degree, the f it asked for, the f it uses and how many of its
// in-neighbours really are Byzantine. For a dynamic topology the degrees
// are those of round 0 (robust resolves "auto" again at every
// aggregation from the inputs it has).
type FRecord struct {
	Setting          string      `json:"setting"`
	Rule             string      `json:"rule"`
	DeclaredFraction float64     `json:"declared_fraction"`
	Dynamic          bool        `json:"dynamic_topology,omitempty"`
	Nodes            []FNodeInfo `json:"nodes"`
}

// FNodeInfo is one node's f.
type FNodeInfo struct {
	Node     int `json:"node"`
	InDegree int `json:"in_degree"`
	// Wanted is ⌈declared fraction · in-degree⌉ (auto) or the explicit f.
	Wanted int `json:"wanted"`
	// F is what the rule uses: Wanted capped at what it tolerates (auto).
	F int `json:"f"`
	// ByzantineNeighbours is the real number of Byzantine in-neighbours.
	ByzantineNeighbours int  `json:"byzantine_neighbours"`
	Byzantine           bool `json:"byzantine,omitempty"`
}

// FRecord resolves strategy.f for every node (nil when the run has no
// robust rule with an f).
func (c Config) FRecord() (*FRecord, error) {
	st := c.Strategy
	sp, ok := c.robustSpec()
	if !ok || !sp.TakesF() {
		return nil, nil
	}
	d, err := c.graph(c.Nodes, c.Seed)
	if err != nil {
		return nil, err
	}
	g := d.At(0)
	byz := c.byzantineIDs()
	rec := &FRecord{Setting: "auto", Rule: st.Rule, DeclaredFraction: c.declaredFraction(), Dynamic: !isStatic(c.Topology.Kind)}
	explicit, isExplicit := c.explicitF()
	if isExplicit {
		rec.Setting = fmt.Sprint(explicit)
	}
	fmax := map[int]int{}
	for i := range c.Nodes {
		in := g.In(i)
		n := len(in) + 1
		fm, ok := fmax[n]
		if !ok {
			fm = sp.MaxF(c.ruleParams(sp), n)
			fmax[n] = fm
		}
		info := FNodeInfo{Node: i, InDegree: len(in), Byzantine: slices.Contains(byz, i)}
		for _, j := range in {
			if slices.Contains(byz, j) {
				info.ByzantineNeighbours++
			}
		}
		if isExplicit {
			info.Wanted, info.F = explicit, explicit
		} else {
			info.Wanted = aggregate.FFor(rec.DeclaredFraction, n, n, aggregate.Up)
			info.F = aggregate.FFor(rec.DeclaredFraction, n, fm, aggregate.Up)
		}
		rec.Nodes = append(rec.Nodes, info)
	}
	return rec, nil
}

func isStatic(kind string) bool { return kind != "mobility" && kind != "trace" }

// Check is Validate plus what needs the topology: the graph can be built,
// and an explicit strategy.f is within what the rule tolerates at every
// node's in-degree (every round of a dynamic topology). A sweep checks
// every run with it before the first starts.
func (c Config) Check() error {
	if err := c.Validate(); err != nil {
		return err
	}
	if _, err := c.graph(c.Nodes, c.Seed); err != nil {
		return err
	}
	f, explicit := c.explicitF()
	sp, ok := c.robustSpec()
	if !ok || !sp.TakesF() {
		return nil
	}
	if !explicit {
		f = 0 // auto: at least the rule must run
	}
	d, err := c.graph(c.Nodes, c.Seed)
	if err != nil {
		return err
	}
	byz := map[int]bool{}
	for _, n := range c.byzantineIDs() {
		byz[n] = true
	}
	rounds := 1 // a static graph is the same every round
	if !isStatic(c.Topology.Kind) {
		rounds = c.Rounds
	}
	fmax := map[int]int{}
	for r := range rounds {
		g := d.At(r)
		for i := range c.Nodes {
			if byz[i] && c.Adversary.Idle {
				continue // idle Byzantine nodes do not aggregate
			}
			in := len(g.In(i))
			fm, ok := fmax[in+1]
			if !ok {
				fm = sp.MaxF(c.ruleParams(sp), in+1)
				fmax[in+1] = fm
			}
			if f > fm {
				where := fmt.Sprintf("node %d's", i)
				if rounds > 1 {
					where = fmt.Sprintf("node %d's (round %d)", i, r)
				}
				if fm < 0 {
					return fmt.Errorf("strategy.rule = %q cannot aggregate %s %d inputs (itself and %d in-neighbours) even with f = 0; use another rule, or give the nodes more neighbours (topology.connect, a denser graph)",
						c.Strategy.Rule, where, in+1, in)
				}
				return fmt.Errorf("strategy.f = %d: %s over %s %d inputs (itself and %d in-neighbours) tolerates at most f = %d; lower strategy.f, use f = \"auto\", or give the nodes more neighbours",
					f, c.Strategy.Rule, where, in+1, in, max(fm, 0))
			}
		}
	}
	return nil
}

// byzantineIDs are the adversary's nodes, as every driver picks them
// (none when the adversary settings are invalid: Validate says why).
func (c Config) byzantineIDs() []int {
	ids, _ := adversary.Choose(c.Nodes, c.Adversary.IDs, c.Adversary.Fraction, c.Seed)
	return ids
}
