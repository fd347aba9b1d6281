package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/strategy"
)

// Names a config may use, per key.
var (
	Datasets   = []string{"mnist", "fashion_mnist", "cifar10", "har", "femnist", "pamap2"}
	partitions = []string{"iid", "dirichlet", "shards", "natural", "sampled"}
	heads      = []string{"softmax", "evidential"}
	optimizers = []string{"sgd", "adam", "adamw"}
	Topologies = []string{"complete", "ring", "kregular", "erdos_renyi", "small_world", "star", "mobility", "edge_list", "trace"}
	weightings = []string{"uniform", "mh"}
)

// Validate checks every value against its allowed range before any work
// starts, reporting all problems at once, each naming the key, the value
// and what is allowed.
func (c Config) Validate() error {
	var errs []error
	bad := func(key string, val any, allowed string) {
		errs = append(errs, fmt.Errorf("%s = %v: %s", key, val, allowed))
	}
	oneOf := func(key, val string, names []string) {
		if !slices.Contains(names, val) {
			bad(key, fmt.Sprintf("%q", val), "want one of "+strings.Join(names, ", "))
		}
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

	if c.Rounds < 1 || c.Rounds > 1_000_000 {
		bad("rounds", c.Rounds, "allowed range 1 to 1000000")
	}
	if c.EvalEvery < 0 {
		bad("eval_every", c.EvalEvery, "need ≥ 0 (0 or 1: every round)")
	}
	if c.FinalRounds < 1 {
		bad("final_rounds", c.FinalRounds, "need ≥ 1")
	} else if n := Evaluations(c.Rounds, c.EvalEvery); c.Rounds >= 1 && c.EvalEvery > 1 && c.FinalRounds > n {
		// final_rounds counts evaluated rounds, not rounds: more than there
		// are would average the whole learning curve.
		bad("final_rounds", c.FinalRounds, fmt.Sprintf("counts evaluated rounds; with rounds = %d and eval_every = %d only %d are evaluated", c.Rounds, c.EvalEvery, n))
	}
	if c.Nodes < 2 || c.Nodes > 100_000 {
		bad("nodes", c.Nodes, "allowed range 2 to 100000 (a node learns with its peers: one node alone has none)")
	}
	oneOf("init", c.Init, []string{"same", "per_node"})
	oneOf("data.dataset", c.Data.Dataset, Datasets)
	if c.Data.Dataset != "mnist" && c.Data.Dataset != "fashion_mnist" && c.Data.Dir == "" && slices.Contains(Datasets, c.Data.Dataset) {
		bad("data.dir", `""`, "data.dataset = "+c.Data.Dataset+" needs the directory of its files (it is not embedded)")
	}
	if c.Data.Samples < 0 {
		bad("data.samples", c.Data.Samples, "need ≥ 0 (0: all)")
	}
	oneOf("partition.method", c.Partition.Method, partitions)
	if !(c.Partition.Alpha > 0) || !finite(c.Partition.Alpha) {
		bad("partition.alpha", c.Partition.Alpha, "need a finite value > 0")
	}
	if c.Partition.ClassesPerClient < 1 {
		bad("partition.classes_per_client", c.Partition.ClassesPerClient, "need ≥ 1")
	}
	oneOf("partition.shift", c.Partition.Shift, []string{"", "rotate", "permute"})
	if !(c.Partition.ShiftDegrees >= 0 && c.Partition.ShiftDegrees <= 360) {
		bad("partition.shift_degrees", c.Partition.ShiftDegrees, "allowed range [0, 360] (0: 360)")
	}
	if sp := c.Partition.Split; len(sp) != 3 || !(sp[0] > 0 && sp[0] <= 1 && sp[1] >= 0 && sp[2] >= 0) ||
		math.Abs(sp[0]+sp[1]+sp[2]-1) > 1e-9 {
		bad("partition.split", c.Partition.Split, "want [train, validation, test], train > 0, all ≥ 0, summing to 1")
	}
	oneOf("model.kind", c.Model.Kind, nn.Kinds)
	for _, h := range c.Model.Hidden {
		if h < 1 {
			bad("model.hidden", c.Model.Hidden, "every width must be ≥ 1")
			break
		}
	}
	if !(c.Model.Dropout >= 0 && c.Model.Dropout < 1) {
		bad("model.dropout", c.Model.Dropout, "allowed range [0, 1)")
	}
	oneOf("model.head", c.Model.Head, heads)
	oneOf("training.optimizer", c.Training.Optimizer, optimizers)
	if !(c.Training.LR > 0) || !finite(c.Training.LR) {
		bad("training.lr", c.Training.LR, "need a finite value > 0")
	}
	if !(c.Training.Momentum >= 0 && c.Training.Momentum < 1) {
		bad("training.momentum", c.Training.Momentum, "allowed range [0, 1)")
	}
	if c.Training.Nesterov && c.Training.Momentum == 0 {
		bad("training.nesterov", true, "needs training.momentum > 0")
	}
	if !(c.Training.WeightDecay >= 0) || !finite(c.Training.WeightDecay) {
		bad("training.weight_decay", c.Training.WeightDecay, "need a finite value ≥ 0")
	}
	if c.Training.Batch < 1 || c.Training.Batch > 65536 {
		bad("training.batch", c.Training.Batch, "allowed range 1 to 65536")
	}
	if c.Training.Epochs < 0 || c.Training.Steps < 0 || (c.Training.Epochs == 0 && c.Training.Steps == 0) {
		bad("training.epochs", c.Training.Epochs, fmt.Sprintf("with training.steps = %d: both ≥ 0 and one of them > 0", c.Training.Steps))
	}
	if !(c.Training.ClipNorm >= 0) || !finite(c.Training.ClipNorm) {
		bad("training.clip_norm", c.Training.ClipNorm, "need a finite value ≥ 0 (0: off)")
	}
	oneOf("topology.kind", c.Topology.Kind, Topologies)
	if c.Topology.Kind == "kregular" && (c.Topology.K < 1 || c.Topology.K >= c.Nodes) {
		bad("topology.k", c.Topology.K, fmt.Sprintf("allowed range 1 to nodes − 1 = %d", c.Nodes-1))
	}
	if c.Topology.Kind == "small_world" && (c.Topology.K < 2 || c.Topology.K >= c.Nodes) {
		bad("topology.k", c.Topology.K, fmt.Sprintf("allowed range 2 to nodes − 1 = %d", c.Nodes-1))
	}
	if !(c.Topology.P >= 0 && c.Topology.P <= 1) {
		bad("topology.p", c.Topology.P, "allowed range [0, 1]")
	}
	if !(c.Topology.Beta >= 0 && c.Topology.Beta <= 1) {
		bad("topology.beta", c.Topology.Beta, "allowed range [0, 1]")
	}
	if (c.Topology.Kind == "edge_list" || c.Topology.Kind == "trace") && c.Topology.File == "" {
		bad("topology.file", `""`, "topology.kind = "+c.Topology.Kind+" needs the file's path")
	}
	if !(c.Topology.Drop >= 0 && c.Topology.Drop <= 1) {
		bad("topology.drop", c.Topology.Drop, "allowed range [0, 1]")
	}
	if !(c.Adversary.Fraction >= 0 && c.Adversary.Fraction < 1) {
		bad("adversary.fraction", c.Adversary.Fraction, "allowed range [0, 1)")
	}
	if len(c.Adversary.IDs) > 0 && c.Adversary.Fraction > 0 {
		bad("adversary.ids", c.Adversary.IDs, "give either adversary.ids or adversary.fraction, not both")
	}
	for _, id := range c.Adversary.IDs {
		if id < 0 || id >= c.Nodes {
			bad("adversary.ids", c.Adversary.IDs, fmt.Sprintf("ids must be in [0, %d)", c.Nodes))
			break
		}
	}
	oneOf("adversary.attack", c.Adversary.Attack, attack.Names())
	if sr := c.Adversary.StartRound; sr != 0 {
		switch {
		case sr < 0 || (c.Rounds > 0 && sr >= c.Rounds):
			bad("adversary.start_round", sr, fmt.Sprintf("allowed range [0, rounds = %d): a later start would never attack", c.Rounds))
		case c.Adversary.Attack == "none":
			bad("adversary.start_round", sr, `schedules the attack, but adversary.attack = "none"`)
		}
	}
	if _, err := c.Attack(); err != nil && slices.Contains(attack.Names(), c.Adversary.Attack) {
		errs = append(errs, fmt.Errorf("adversary: %w", err))
	}
	oneOf("strategy.name", c.Strategy.Name, strategy.Names())
	oneOf("strategy.weighting", c.Strategy.Weighting, weightings)
	if f, ok := c.ExplicitF(); ok && f < 0 {
		bad("strategy.f", f, `need a whole number ≥ 0, or "auto"`)
	}
	if len(errs) == 0 {
		if _, err := c.StrategyParams(); err != nil {
			errs = append(errs, err)
		}
	}
	c.validateDMTT(bad, &errs)
	c.validateMore(bad)
	c.validatePrivacy(bad)
	c.validateSecAgg(bad)
	if c.Evaluation.GlobalTest < -1 {
		bad("evaluation.global_test", c.Evaluation.GlobalTest, "need ≥ −1 (−1: all, 0: none)")
	}
	c.validateEvalScale(bad)
	if c.Run.Workers < 0 {
		bad("run.workers", c.Run.Workers, "need ≥ 0 (0: GOMAXPROCS)")
	}
	keys := configKeys()
	for key, vals := range c.Sweep.Grid {
		table := slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, key+".") })
		if (!slices.Contains(keys, key) && !table) || strings.HasPrefix(key, "sweep") {
			errs = append(errs, fmt.Errorf("sweep.grid: %s", unknownKey(key)))
		} else if len(vals) == 0 {
			bad("sweep.grid."+key, "[]", "list at least one value")
		}
	}
	for name, set := range c.Sweep.Variants {
		if name == "" || SafeName(name) != name {
			bad("sweep.variants", name, "a variant's name may use only letters, digits and . = - _")
		}
		if len(set) == 0 {
			bad("sweep.variants."+name, "{}", "set at least one key")
		}
		for key := range set {
			if !slices.Contains(keys, key) || strings.HasPrefix(key, "sweep.") {
				errs = append(errs, fmt.Errorf("sweep.variants.%s: %s", name, unknownKey(key)))
			} else if _, ok := c.Sweep.Grid[key]; ok {
				bad("sweep.variants."+name+"."+key, set[key], "the grid sweeps this key too; a key is either swept or set by variants")
			}
		}
	}
	errs = append(errs, c.validateWorstCase()...)
	errs = append(errs, c.validateConsensus(bad)...)
	errs = append(errs, c.validateTiming(bad)...)
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// Attack builds the configured attack (nil for none).
func (c Config) Attack() (attack.Attack, error) {
	if c.Adversary.Attack == "none" && c.Adversary.Fraction == 0 && len(c.Adversary.IDs) == 0 {
		return nil, nil
	}
	spec := c.ModelSpec(nil)
	a := c.Adversary
	atk, err := attack.New(a.Attack, attack.Params{
		Sigma: a.Sigma, Replace: a.Replace, Scale: a.Scale, Model: &spec, Percent: a.Percent,
		Z: a.Z, Minus: a.Minus, Epsilon: a.Epsilon, Perturbation: a.Perturbation, GammaInit: a.GammaInit, B: a.B})
	if err != nil || a.StartRound <= 0 {
		return atk, err
	}
	return attack.NewScheduled(atk, a.StartRound)
}

// Evaluations is how many of rounds rounds a run evaluates with eval_every
// = every: every every-th round and the last (every ≤ 1: every round), the
// rounds metrics.Evaluated selects (a test of experiment holds them equal).
func Evaluations(rounds, every int) int {
	if every <= 1 {
		return rounds
	}
	return (rounds + every - 1) / every
}
