package experiment

import (
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/sim"
)

// Warnings lists what is allowed but probably not meant: an explicit f =
// 0 against a declared adversary, f = "auto" capped below the declared
// fraction by what the rule tolerates at a node's in-degree, and in
// asynchronous timing a staleness bound that cuts links within the run
// and a robust rule combining only the inputs since the last step.
func Warnings(c config.Config) []string {
	if c.Consensus != nil {
		return nil // task type consensus: no strategy, rule or adversary to warn about
	}
	var out []string
	st := c.Strategy
	beta := c.DeclaredFraction()
	if f, ok := c.ExplicitF(); ok && f == 0 && beta > 0 && (st.Name != "robust" || c.RobustTakesF()) {
		out = append(out, fmt.Sprintf("strategy.f = 0 with %.0f %% of the nodes declared Byzantine: the rule tolerates no faulty input (it is then the plain rule); remove strategy.f for f = \"auto\"", 100*beta))
	}
	if w := stalenessDrift(c); w != "" {
		out = append(out, w)
	}
	if c.Async() && c.Timing.Inputs != "latest" && st.Name == "robust" && beta > 0 {
		out = append(out, fmt.Sprintf("robust rule %s in asynchronous timing with %.0f %% of the nodes declared Byzantine: each step combines only what arrived since the last (timing.inputs = \"new\"), often one to five inputs, of which one Byzantine can take half the weight; timing.inputs = \"latest\" combines every neighbour's newest model (in docs/results/async.md it kept the median's and the trimmed mean's δ_max)", st.Rule, 100*beta))
	}
	if w := asyncFixedF(c); w != "" {
		out = append(out, w)
	}
	if !c.RobustTakesF() || beta == 0 {
		return out
	}
	if _, explicit := c.ExplicitF(); explicit {
		return out
	}
	rec, err := FRecordOf(c)
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

// FRecordOf resolves strategy.f for every node (nil when the run has no
// robust rule with an f).
func FRecordOf(c config.Config) (*FRecord, error) {
	st := c.Strategy
	sp, ok := c.RobustSpec()
	if !ok || !sp.TakesF() {
		return nil, nil
	}
	d, err := c.Graph()
	if err != nil {
		return nil, err
	}
	g := d.At(0)
	byz := ByzantineIDs(c)
	rec := &FRecord{Setting: "auto", Rule: st.Rule, DeclaredFraction: c.DeclaredFraction(), Dynamic: !c.StaticTopology()}
	explicit, isExplicit := c.ExplicitF()
	if isExplicit {
		rec.Setting = fmt.Sprint(explicit)
	}
	fmax := map[int]int{}
	for i := range c.Nodes {
		in := g.In(i)
		n := len(in) + 1
		fm, ok := fmax[n]
		if !ok {
			fm = sp.MaxF(c.RuleParams(sp), n)
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

// Check is Validate plus what needs the topology: the graph can be built,
// secure aggregation's groups can work (config.CheckSecAggGroups, as
// SetupOf refuses them), and an explicit strategy.f is within what the rule tolerates at every
// node's in-degree (every round of a dynamic topology). A sweep checks
// every run with it before the first starts.
func Check(c config.Config) error {
	if c.Consensus != nil {
		return checkConsensus(c)
	}
	if err := c.Validate(); err != nil {
		return err
	}
	if _, err := c.Graph(); err != nil {
		return err
	}
	if err := c.CheckSecAggGroups(); err != nil {
		return err
	}
	f, explicit := c.ExplicitF()
	sp, ok := c.RobustSpec()
	if !ok || !sp.TakesF() {
		return nil
	}
	if !explicit {
		f = 0 // auto: at least the rule must run
	}
	d, err := c.Graph()
	if err != nil {
		return err
	}
	byz := map[int]bool{}
	for _, n := range ByzantineIDs(c) {
		byz[n] = true
	}
	rounds := 1 // a static graph is the same every round
	if !c.StaticTopology() {
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
				fm = sp.MaxF(c.RuleParams(sp), in+1)
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

// asyncFixedF is the warning of an asynchronous robust config whose
// explicit f the rule cannot keep with the fewest inputs a step can have:
// a step combines what has arrived, at first often the node's own model
// alone, and a step with too few inputs keeps the node's model
// (strategy.ErrKeptOwn).
func asyncFixedF(c config.Config) string {
	f, explicit := c.ExplicitF()
	sp, ok := c.RobustSpec()
	if !c.Async() || !explicit || f == 0 || !ok || !sp.TakesF() {
		return ""
	}
	// The fewest inputs of a step that runs the rule: the own model alone,
	// or for a rule around the own model one neighbour's (with none,
	// robust runs no rule).
	n := 1
	for ; n <= c.Nodes; n++ {
		if sp.MaxF(c.RuleParams(sp), n) >= f {
			break
		}
	}
	if n == 1 {
		return ""
	}
	return fmt.Sprintf("strategy.f = %d in asynchronous timing: %s needs %d inputs for f = %d, and a step combines what has arrived (at the first steps often the node's own model alone); a step with fewer keeps the node's own model (kept_own, its inputs refused as too_few in steps.jsonl); f = \"auto\" resolves f at each step from the inputs it has",
		f, c.Strategy.Rule, n, f)
}

// stalenessDrift is the warning of an asynchronous config whose staleness
// bound cuts links within the run (sim.Schedule.Drift): nodes of
// different step times (the seed's draws of compute and stragglers)
// drift apart in steps, and staleness counts the receiver's steps.
func stalenessDrift(c config.Config) string {
	if !c.Async() {
		return ""
	}
	t := c.Timing
	sched, err := sim.NewSchedule(*asyncOf(t), c.Nodes, c.Seed)
	if err != nil {
		return "" // Validate says why
	}
	dyn, err := c.Graph()
	if err != nil {
		return ""
	}
	steps := make([]int, c.Nodes)
	for i := range steps {
		steps[i] = c.Rounds
		if t.Horizon > 0 {
			steps[i] = min(steps[i], int(t.Horizon/sched.Step[i]))
		}
	}
	d := sched.Drift(dyn.At(0), steps, t.MaxStaleness)
	if d.Cut == 0 {
		return ""
	}
	return fmt.Sprintf("timing.max_staleness = %d: the nodes' step times differ (compute and stragglers), so their step counters drift apart and staleness, counted in the receiver's steps, grows step after step; %d of the %d links from a slower node get cut within the run, the first after about %d of node %d's %d steps (%.3g s a step; its in-neighbour %d: %.3g s), and from then on the receiver drops that neighbour's models as stale. max_staleness = %d keeps every link (docs/methods/async.md)",
		t.MaxStaleness, d.Cut, d.Slower, d.At, d.Receiver, d.Steps, sched.Step[d.Receiver], d.Sender, sched.Step[d.Sender], d.Keep)
}
