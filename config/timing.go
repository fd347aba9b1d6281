package config

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/trellis-fl/trellis/strategy"
)

// Timing is the [timing] section: mode = "async" runs the simulation in
// asynchronous timing (docs/methods/async.md): no global round, each node
// trains, sends and combines on its own virtual clock, rounds is each
// node's number of steps. It is nil, and left out of the TOML, in every
// other config (lock-step rounds), so a config without it keeps its hash.
// A key the file leaves out takes its default (TimingDefault, filled in
// by Parse).
type Timing struct {
	// Mode is "lockstep" (the synchronous rounds of a config without
	// [timing]) or "async".
	Mode string `toml:"mode"`
	// MaxStaleness is the largest staleness, in a receiver's steps, of an
	// input its strategy sees; older ones are dropped and counted.
	MaxStaleness int `toml:"max_staleness"`
	// Inputs is what a step combines: "new" (or left out), what arrived
	// since the node's last combine; "latest", every in-neighbour's newest
	// model, again each step until a newer one replaces it or it passes
	// max_staleness (node.Async.Latest).
	Inputs string `toml:"inputs,omitempty"`
	// Compute is the distribution of a node's time per step (drawn once
	// per node), Latency that of a link's delay (once per link):
	// "constant" (a), "uniform" (on [a, b]) or "lognormal" (median a,
	// log-scale spread b), in virtual seconds.
	Compute  string  `toml:"compute"`
	ComputeA float64 `toml:"compute_a"`
	ComputeB float64 `toml:"compute_b"`
	Latency  string  `toml:"latency"`
	LatencyA float64 `toml:"latency_a"`
	LatencyB float64 `toml:"latency_b"`
	// Stragglers is the fraction of nodes whose steps take Slowdown times
	// their drawn time.
	Stragglers float64 `toml:"stragglers"`
	Slowdown   float64 `toml:"slowdown"`
	// Window is the virtual time one summary record covers; 0 is the
	// median step time times max(1, eval_every).
	Window float64 `toml:"window"`
	// Horizon, if positive, is the time the run stops at: in the
	// simulator virtual seconds (no node begins a step that would end
	// after it), in a cluster wall-clock seconds from the common start;
	// 0: each node takes rounds steps.
	Horizon float64 `toml:"horizon"`
	// Flood, if positive, is the Byzantine nodes' time per step (virtual
	// seconds): they step that fast until every honest node is done,
	// sending crafted models of ever newer steps (sim.Async.Flood).
	Flood float64 `toml:"flood,omitempty"`
	// Stale, if positive, makes the Byzantine nodes send, from their step
	// Stale on, the vectors of that step again under fresh step numbers
	// (adversary.Stale).
	Stale int `toml:"stale,omitempty"`
	// Inflate, if positive, makes the Byzantine nodes number their
	// messages this many steps ahead of their own step, so that they look
	// fresh to every receiver (adversary.Config.Inflate).
	Inflate int `toml:"inflate,omitempty"`
}

// TimingDefault is [timing] with every key at its default.
func TimingDefault() Timing {
	return Timing{Mode: "async", MaxStaleness: 8, Compute: "constant", ComputeA: 1, Latency: "constant", LatencyA: 0.1,
		Slowdown: 1}
}

// Async reports whether c runs in asynchronous timing.
func (c Config) Async() bool { return c.Timing != nil && c.Timing.Mode == "async" }

func (c *Config) fillTiming(md toml.MetaData) {
	if c.Timing != nil {
		fillSection(c.Timing, TimingDefault(), md, "timing")
	}
}

// timingDefaultsText is [timing]'s defaults as TOML comments.
func timingDefaultsText() string {
	explain := map[string]string{
		"flood":   "> 0: the Byzantine nodes' time per step (flooding)",
		"stale":   "> 0: from that step on they resend its vectors",
		"inflate": "> 0: they number their messages this many steps ahead",
	}
	lines := strings.Split(tomlComments(TimingDefault()), "\n")
	for i, l := range lines {
		key, _, _ := strings.Cut(strings.TrimPrefix(l, "# "), " =")
		if e, ok := explain[key]; ok {
			lines[i] = fmt.Sprintf("%-24s # %s", l, e)
		}
	}
	// inputs is empty by default ("new"), which the encoder leaves out.
	lines = append(lines, `# inputs = "new"         # "latest": every in-neighbour's newest model each step`)
	return strings.Join(lines, "\n")
}

// distKinds are the distributions of compute and latency.
var distKinds = []string{"constant", "uniform", "lognormal"}

// validateTiming checks [timing] and refuses what asynchronous timing does
// not support yet: strategies not defined for asynchronous inputs, the
// protocol layers that need rounds (topology trust, secure aggregation;
// DP runs, a release per step), idle Byzantine nodes,
// task type consensus.
func (c Config) validateTiming(bad func(key string, val any, allowed string)) []error {
	t := c.Timing
	if t == nil {
		return nil
	}
	switch t.Mode {
	case "lockstep":
		if t.Flood != 0 || t.Stale != 0 || t.Inflate != 0 {
			bad("timing.flood/stale/inflate", fmt.Sprintf("%v/%d/%d", t.Flood, t.Stale, t.Inflate), `attacks of asynchrony: need mode = "async"`)
		}
		if t.Inputs != "" {
			bad("timing.inputs", fmt.Sprintf("%q", t.Inputs), `what an asynchronous step combines: need mode = "async"`)
		}
		return nil
	case "async":
	default:
		bad("timing.mode", fmt.Sprintf("%q", t.Mode), `want "lockstep" or "async"`)
		return nil
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if t.Inputs != "" && t.Inputs != "new" && t.Inputs != "latest" {
		bad("timing.inputs", fmt.Sprintf("%q", t.Inputs), `"new" (what arrived since the last combine) or "latest" (every in-neighbour's newest model)`)
	}
	if t.MaxStaleness < 0 || t.MaxStaleness > 100_000 {
		bad("timing.max_staleness", t.MaxStaleness, "allowed range 0 to 100000 (steps)")
	}
	for _, d := range []struct {
		key, kind string
		a, b      float64
	}{{"compute", t.Compute, t.ComputeA, t.ComputeB}, {"latency", t.Latency, t.LatencyA, t.LatencyB}} {
		switch {
		case !slices.Contains(distKinds, d.kind):
			bad("timing."+d.key, fmt.Sprintf("%q", d.kind), "want one of "+strings.Join(distKinds, ", "))
		case !(d.a > 0) || !finite(d.a):
			bad("timing."+d.key+"_a", d.a, "a positive finite time")
		case d.kind == "uniform" && !(d.b >= d.a && finite(d.b)):
			bad("timing."+d.key+"_b", d.b, fmt.Sprintf("uniform: a finite upper end ≥ %s_a = %v", d.key, d.a))
		case d.kind == "lognormal" && !(d.b >= 0 && d.b <= 10):
			bad("timing."+d.key+"_b", d.b, "lognormal: a log-scale spread in [0, 10]")
		}
	}
	if !(t.Stragglers >= 0 && t.Stragglers <= 1) {
		bad("timing.stragglers", t.Stragglers, "allowed range [0, 1] (a fraction of the nodes)")
	}
	if !(t.Slowdown >= 1) || !finite(t.Slowdown) {
		bad("timing.slowdown", t.Slowdown, "a finite factor ≥ 1")
	}
	if !(t.Horizon >= 0) || !finite(t.Horizon) {
		bad("timing.horizon", t.Horizon, "≥ 0 seconds, virtual in the simulator, wall-clock in a cluster (0: each node takes rounds steps)")
	}
	if !(t.Window >= 0) || !finite(t.Window) {
		bad("timing.window", t.Window, "≥ 0 virtual seconds (0: the median step time times max(1, eval_every))")
	}
	var errs []error
	refuse := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("[timing] mode = \"async\": "+format, a...))
	}
	if !strategy.AsyncInputs(c.Strategy.Name) {
		refuse("strategy %q is not defined for asynchronous inputs (those that are: %s)", c.Strategy.Name, strategy.AsyncNames())
	}
	if c.TrustOn() {
		refuse("topology trust (DMTT's trust layer) is not supported in asynchronous timing yet")
	}
	if c.SecAggOn() {
		refuse("secure aggregation is not supported in asynchronous timing yet")
	}
	if !(t.Flood >= 0) || !finite(t.Flood) {
		bad("timing.flood", t.Flood, "≥ 0 virtual seconds (a Byzantine node's time per step; 0: none)")
	}
	if t.Stale < 0 {
		bad("timing.stale", t.Stale, "≥ 0 (the step whose vectors the Byzantine nodes repeat; 0: none)")
	}
	if t.Inflate < 0 || t.Inflate > 1_000_000_000 {
		bad("timing.inflate", t.Inflate, "0 to 1000000000 (the steps the Byzantine nodes claim to be ahead; 0: none)")
	}
	// Byzantine nodes run (sim/asyncbyz.go), except what needs rounds or a
	// layer: idle nodes have no steps, topology lies need the trust layer.
	byz := c.byzantineCount() > 0
	if !byz && (t.Flood > 0 || t.Stale > 0 || t.Inflate > 0) {
		refuse("timing.flood, timing.stale and timing.inflate are attacks of the Byzantine nodes; set adversary.fraction or adversary.ids")
	}
	if byz && c.Adversary.Idle {
		refuse("adversary.idle: idle Byzantine nodes have no steps of their own in asynchronous timing")
	}
	if c.Consensus != nil {
		refuse("[consensus] runs its own iterations; asynchronous timing is for learning runs")
	}
	return errs
}
