package config

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/trellis-fl/trellis/consensus/task"
)

// Consensus is the [consensus] section: its presence makes the run task
// type consensus, the survey's private average consensus (package
// consensus, run by package consensus/task): nodes nodes on the
// [topology] graph, each with a private vector of dim values, run method
// for rounds iterations, from seed. It is nil, and left out of the TOML,
// in every other config, so a config without it keeps its hash. A key the
// file leaves out takes its default (ConsensusDefault, filled in by
// Parse).
type Consensus struct {
	// Method is one of task.Names(): plain, state_decomposition, offsets,
	// paillier, dp_laplace_huang, dp_laplace_nozari, dp_gossip, push_sum,
	// push_sum_decomposition, and the dynamic ones dynamic_plain,
	// dynamic_dp_laplace, dynamic_state_decomposition.
	Method string `toml:"method"`
	// Dim is the length of every node's vector; each coordinate is an
	// independent scalar run.
	Dim int `toml:"dim"`
	// Init is how x_i(0) is drawn from the seed: "uniform" on [lo, hi) or
	// "normal" with mean and std.
	Init string  `toml:"init"`
	Lo   float64 `toml:"lo"`
	Hi   float64 `toml:"hi"`
	Mean float64 `toml:"mean"`
	Std  float64 `toml:"std"`
	// Epsilon and Sensitivity are the DP methods' ε and adjacency bound
	// (inputs adjacent when x_i(0) differ by at most sensitivity, per
	// coordinate). dp_laplace_*: ε-DP of x_i(0) against an adversary that
	// sees every message; dp_gossip: the mean pairwise Rényi-DP ε of order
	// 2 over the run's rounds.
	Epsilon     float64 `toml:"epsilon"`
	Sensitivity float64 `toml:"sensitivity"`
	// Decay is the Laplace methods' q: the noise scale is c·q^k.
	Decay float64 `toml:"decay"`
	// Randomized runs dp_gossip's Alg. 2 (random edge activations)
	// instead of Alg. 1 (synchronous gossip).
	Randomized bool `toml:"randomized"`
	// PaillierBits is paillier's modulus size (512: tests and tables
	// only; 2048 for real use).
	PaillierBits int `toml:"paillier_bits"`
	// Signal is the dynamic methods' reference signals, starting at each
	// node's drawn value (task.Signals): "converging" (r_i(k) settles
	// geometrically, ratio signal_decay) or "ramp" (r_i(k) drifts with a
	// slope of signal_slope times the initial values' spread).
	Signal      string  `toml:"signal"`
	SignalDecay float64 `toml:"signal_decay"`
	SignalSlope float64 `toml:"signal_slope"`
	// Colluders > 0 reports how well that many curious neighbours of
	// node target (its first ones) reconstruct its x_i(0).
	Colluders int `toml:"colluders"`
	Target    int `toml:"target"`
}

// ConsensusDefault is [consensus] with every key at its default (the
// package consensus defaults for the methods' parameters).
func ConsensusDefault() Consensus {
	return Consensus{Method: "plain", Dim: 1, Init: "uniform", Lo: 0, Hi: 1, Mean: 0, Std: 1,
		Epsilon: 1, Sensitivity: 1, Decay: 0.5, PaillierBits: 512,
		Signal: "converging", SignalDecay: 0.9, SignalSlope: 0.01}
}

// IsConsensus reports whether c is task type consensus.
func (c Config) IsConsensus() bool { return c.Consensus != nil }

// ConsensusParams are the method parameters of c's [consensus].
func (c Config) ConsensusParams() task.Params {
	s := c.Consensus
	return task.Params{Epsilon: s.Epsilon, Sensitivity: s.Sensitivity, Decay: s.Decay, Randomized: s.Randomized, Bits: s.PaillierBits,
		Signal: s.Signal, SignalDecay: s.SignalDecay, SignalSlope: s.SignalSlope}
}

// ConsensusInit is how c's initial values are drawn.
func (c Config) ConsensusInit() task.Init {
	s := c.Consensus
	if s.Init == "normal" {
		return task.Init{Dist: "normal", A: s.Mean, B: s.Std}
	}
	return task.Init{Dist: s.Init, A: s.Lo, B: s.Hi}
}

// fillConsensus gives the keys of [consensus] a file leaves out their
// defaults.
func (c *Config) fillConsensus(md toml.MetaData) {
	if c.Consensus != nil {
		fillSection(c.Consensus, ConsensusDefault(), md, "consensus")
	}
}

// consensusUses are the keys outside [consensus] a consensus run reads
// (or that never change results, or name it); every other key must keep
// its default.
func consensusUses(key string) bool {
	switch {
	case key == "name" || key == "label" || key == "seed" || key == "rounds" || key == "nodes":
		return true
	case strings.HasPrefix(key, "consensus.") || strings.HasPrefix(key, "run."):
		return true
	case strings.HasPrefix(key, "topology.") && key != "topology.drop":
		return true
	}
	return false
}

// validateConsensus checks [consensus]: its values, that the topology is
// a static graph, and that no key the consensus run ignores differs from
// its default.
func (c Config) validateConsensus(bad func(key string, val any, allowed string)) []error {
	s := c.Consensus
	if s == nil {
		return nil
	}
	var errs []error
	if c.WorstCase != nil {
		errs = append(errs, fmt.Errorf("[consensus] and [worst_case] together: a worst-case search attacks a learning run, and task type consensus has no attack or learning; remove one of them"))
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if _, ok := task.Lookup(s.Method); !ok {
		bad("consensus.method", fmt.Sprintf("%q", s.Method), "want one of "+strings.Join(task.Names(), ", "))
	}
	if s.Dim < 1 || s.Dim > 100_000 {
		bad("consensus.dim", s.Dim, "allowed range 1 to 100000 (each coordinate is one run of the method)")
	}
	switch s.Init {
	case "uniform":
		if !finite(s.Lo) || !finite(s.Hi) || !(s.Lo < s.Hi) {
			bad("consensus.lo", s.Lo, fmt.Sprintf("with consensus.hi = %v: finite, lo < hi", s.Hi))
		}
	case "normal":
		if !finite(s.Mean) || !(s.Std > 0) || !finite(s.Std) {
			bad("consensus.std", s.Std, fmt.Sprintf("with consensus.mean = %v: finite values, std > 0", s.Mean))
		}
	default:
		bad("consensus.init", fmt.Sprintf("%q", s.Init), `want "uniform" (on [lo, hi)) or "normal" (mean, std)`)
	}
	if !(s.Epsilon > 0) || !finite(s.Epsilon) {
		bad("consensus.epsilon", s.Epsilon, "need a finite value > 0")
	}
	if !(s.Sensitivity > 0) || !finite(s.Sensitivity) {
		bad("consensus.sensitivity", s.Sensitivity, "need a finite value > 0")
	}
	if !(s.Decay > 0 && s.Decay < 1) {
		bad("consensus.decay", s.Decay, "allowed range (0, 1)")
	}
	if s.PaillierBits < 512 || s.PaillierBits > 4096 || s.PaillierBits%2 != 0 {
		bad("consensus.paillier_bits", s.PaillierBits, "an even size from 512 to 4096 (512 for tests and tables, 2048 for real use)")
	}
	if s.Signal != "converging" && s.Signal != "ramp" {
		bad("consensus.signal", fmt.Sprintf("%q", s.Signal), `want "converging" or "ramp"`)
	}
	if !(s.SignalDecay > 0 && s.SignalDecay < 1) {
		bad("consensus.signal_decay", s.SignalDecay, "allowed range (0, 1)")
	}
	if !(s.SignalSlope > 0) || !finite(s.SignalSlope) {
		bad("consensus.signal_slope", s.SignalSlope, "need a finite value > 0")
	}
	if s.Colluders < 0 || (c.Nodes >= 2 && s.Colluders > c.Nodes-1) {
		bad("consensus.colluders", s.Colluders, fmt.Sprintf("allowed range 0 to nodes − 1 = %d (0: no reconstruction)", c.Nodes-1))
	}
	if s.Target < 0 || s.Target >= max(c.Nodes, 1) {
		bad("consensus.target", s.Target, fmt.Sprintf("a node id in [0, nodes = %d)", c.Nodes))
	}
	if !c.StaticTopology() {
		bad("topology.kind", fmt.Sprintf("%q", c.Topology.Kind), "task type consensus runs on one static graph; use complete, ring, kregular, erdos_renyi, small_world, star or edge_list")
	}
	flat, defaults := flatten(c), flatten(Default())
	var ignored []string
	for _, k := range slices.Sorted(maps.Keys(flat)) {
		if !consensusUses(k) && !strings.HasPrefix(k, "sweep.") && !strings.HasPrefix(k, "worst_case.") && flat[k] != defaults[k] {
			ignored = append(ignored, k)
		}
	}
	for k := range defaults {
		if _, ok := flat[k]; !ok && !consensusUses(k) {
			ignored = append(ignored, k)
		}
	}
	if len(ignored) > 0 {
		slices.Sort(ignored)
		errs = append(errs, fmt.Errorf("%s set, but task type consensus ([consensus]) ignores them: a consensus run reads only name, label, seed, nodes, rounds (its iterations), [topology] (no drops), [run] and [consensus]; remove them, or remove [consensus] for a learning run", strings.Join(slices.Compact(ignored), ", ")))
	}
	return errs
}

// checkConsensusKeys refuses the method keys of [consensus] a file sets
// for a method that does not read them (unless a sweep varies the method).
func (c Config) checkConsensusKeys(set func(section, key string) bool, swept func(string) bool) error {
	s := c.Consensus
	if s == nil || swept("consensus.method") {
		return nil
	}
	m, ok := task.Lookup(s.Method)
	if !ok {
		return nil
	}
	var keys []string
	for _, k := range task.MethodKeys() {
		if set("consensus", k) && !slices.Contains(m.Takes, k) {
			keys = append(keys, "consensus."+k)
		}
	}
	if len(keys) > 0 {
		return fmt.Errorf("%s set, but consensus.method = %q does not read them, so they would be ignored; remove them, or choose a method that takes them", strings.Join(keys, ", "), s.Method)
	}
	return nil
}

// consensusDefaultsText lists [consensus]'s keys with their defaults, as
// TOML comments, and the methods with the keys each reads.
func consensusDefaultsText() string {
	var out strings.Builder
	out.WriteString(tomlComments(ConsensusDefault()) + "\n")
	out.WriteString("# methods and the keys each reads besides method, dim, the initial values,\n# colluders and target:\n")
	for _, n := range task.Names() {
		m, _ := task.Lookup(n)
		takes := "none"
		if len(m.Takes) > 0 {
			takes = strings.Join(m.Takes, ", ")
		}
		fmt.Fprintf(&out, "#   %s: %s\n", n, takes)
	}
	return strings.TrimSuffix(out.String(), "\n")
}
