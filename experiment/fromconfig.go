package experiment

import (
	"errors"
	"fmt"
	"strings"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// LoadData loads the configured dataset.
func (c Config) LoadData() (data.TrainTest, error) {
	switch c.Data.Dataset {
	case "mnist":
		if c.Data.Dir != "" {
			return data.LoadMNIST(c.Data.Dir)
		}
		return data.MNIST()
	case "fashion_mnist":
		return data.LoadFashionMNIST(c.Data.Dir)
	case "cifar10":
		return data.LoadCIFAR10(c.Data.Dir)
	case "har":
		return data.LoadHAR(c.Data.Dir)
	case "femnist":
		return data.LoadFEMNIST(c.Data.Dir)
	case "pamap2":
		// PAMAP2 has no official test set: the nodes' local test splits
		// are the test data, and there is no global test set.
		d, err := data.LoadPAMAP2(c.Data.Dir, data.PAMAP2Options{})
		return data.TrainTest{Train: d}, err
	}
	return data.TrainTest{}, fmt.Errorf("data.dataset = %q: want one of %v", c.Data.Dataset, datasets)
}

// modelSpec is the configured model for the dataset's samples (MNIST's
// shape when d is nil).
func (c Config) modelSpec(d *data.Dataset) nn.Spec {
	input, classes := []int{1, 28, 28}, 10
	if d != nil {
		input, classes = d.Shape, d.NumClasses()
	}
	return nn.Spec{Kind: c.Model.Kind, Input: input, Classes: classes, Hidden: c.Model.Hidden,
		Dropout: c.Model.Dropout, BatchNorm: c.Model.BatchNorm, Head: c.Model.Head}
}

// Setup turns a validated config and its dataset into a runnable setup.
func (c Config) Setup(tt data.TrainTest) (Setup, error) {
	atk, err := c.attack()
	if err != nil {
		return Setup{}, err
	}
	params, err := c.strategyParams()
	if err != nil {
		return Setup{}, err
	}
	if c.Data.Samples > 0 && tt.Train != nil && c.Data.Samples > tt.Train.Len() {
		return Setup{}, fmt.Errorf("data.samples = %d: %s has %d training samples: allowed range 0 (all) to %d", c.Data.Samples, c.Data.Dataset, tt.Train.Len(), tt.Train.Len())
	}
	if c.Partition.Method == "natural" && tt.Train != nil && len(tt.Train.GroupNames) > 0 && c.Nodes > len(tt.Train.GroupNames) {
		return Setup{}, fmt.Errorf("nodes = %d: partition.method = \"natural\" gives one node per writer or subject, and %s has %d; use at most %d nodes or another partition.method",
			c.Nodes, c.Data.Dataset, len(tt.Train.GroupNames), len(tt.Train.GroupNames))
	}
	s := Setup{
		Data: tt, Pool: c.Data.Samples, Nodes: c.Nodes, Rounds: c.Rounds, EvalEvery: c.EvalEvery,
		Partition: data.PartitionConfig{Method: data.Method(c.Partition.Method), Alpha: c.Partition.Alpha,
			ClassesPerClient: c.Partition.ClassesPerClient},
		Shift:      data.ShiftConfig{Kind: data.ShiftKind(c.Partition.Shift), MaxDegrees: c.Partition.ShiftDegrees, Seed: c.Seed},
		SameForAll: c.Adversary.SameForAll,
		Model:      c.modelSpec(tt.Train),
		Optimizer: nn.OptimizerSpec{Name: c.Training.Optimizer, LR: c.Training.LR, Momentum: c.Training.Momentum,
			Nesterov: c.Training.Nesterov, WeightDecay: c.Training.WeightDecay},
		Batch:             c.Training.Batch,
		Local:             nn.TrainConfig{Epochs: c.Training.Epochs, Steps: c.Training.Steps, ClipNorm: c.Training.ClipNorm},
		Graph:             c.graph,
		ByzantineFraction: c.Adversary.Fraction, ByzantineIDs: c.Adversary.IDs, Attack: atk,
		Drop: c.Topology.Drop, GlobalTest: c.Evaluation.GlobalTest,
		WireRoundTrip: c.Run.WireRoundTrip, Seed: c.Seed, Workers: c.Run.Workers,
		InitPerNode: c.Init == "per_node",
	}
	if s.Trust, err = c.trustConfig(); err != nil {
		return Setup{}, err
	}
	s.ByzantineIdle, s.Claims = c.Adversary.Idle, c.claimAttack()
	s.Privacy = c.privacySetup()
	if err := c.checkSecAggGroups(); err != nil {
		return Setup{}, err
	}
	s.SecAgg = c.secAggSetup()
	if s.Paillier, err = c.paillierSetup(); err != nil {
		return Setup{}, err
	}
	if c.SecAgg.Mode == "ckks" {
		s.CKKS = c.SecAgg.CKKSCiphertexts
	}
	name := c.Strategy.Name
	if sp := c.Partition.Split; len(sp) == 3 {
		s.Fractions = data.Fractions{Train: sp[0], Val: sp[1], Test: sp[2]}
	}
	s.Strategy = func() strategy.Strategy {
		st, _ := strategy.New(name, params) // checked by strategyParams
		return st
	}
	return s, nil
}

// ruleParams are robust's rule parameters but f, for the rule s.
func (c Config) ruleParams(s aggregate.Spec) aggregate.Params {
	st := c.Strategy
	p := aggregate.Params{M: st.M, Tau: st.Tau, Iterations: st.Iterations, FromPrevious: st.FromPrevious,
		Bucket: st.Bucket, Clip: st.Clip}
	if s.Uses("bucketing") {
		p.Seed = c.Seed // the bucketing permutation stream
	}
	return p
}

// strategyParams turns the strategy keys into strategy.New's parameters,
// checking them by building one strategy: every check of every strategy is
// strategy.New's (its registry row's), with its errors naming the config
// key.
func (c Config) strategyParams() (strategy.Params, error) {
	st := c.Strategy
	w, err := strategy.ParseWeighting(st.Weighting)
	if err != nil {
		return strategy.Params{}, fmt.Errorf("strategy.weighting: %w", err)
	}
	if st.Exchange != "" && st.Exchange != "model" && st.Exchange != "update" {
		return strategy.Params{}, fmt.Errorf("strategy.exchange = %q: valid values are \"model\" and \"update\"", st.Exchange)
	}
	p := strategy.Params{Weighting: w, Options: st.Options, Score: st.Score, Declared: c.declaredFraction(),
		Updates: st.Exchange == "update"}
	if f, ok := c.explicitF(); ok {
		p.F = &f
	}
	if st.Name == "robust" || st.Name == "rdpfl" {
		p.Rule = st.Rule // another strategy's rule is refused by validateSet when the file sets it
	}
	sp, err := aggregate.ParseSpec(st.Rule)
	if st.Name != "robust" || err != nil {
		sp = aggregate.Spec{} // no bucketing seed: it would be a parameter set
	}
	p.RuleParams = c.ruleParams(sp)
	p.NoPrediction = st.Prediction != nil && !*st.Prediction
	p.NoClipping = st.Clipping != nil && !*st.Clipping
	if _, err := strategy.New(st.Name, p); err != nil {
		return p, configKeyErr(err)
	}
	return p, nil
}

// configKeyErr names the config key of a strategy parameter strategy.New
// refused (strategy.ParamError), so that the message says what to change.
func configKeyErr(err error) error {
	var pe *strategy.ParamError
	if !errors.As(err, &pe) {
		return err
	}
	switch pe.Key {
	case "m, tau, iterations, from_previous, bucket, clip":
		return fmt.Errorf("strategy: m, tau, iterations, from_previous, bucket and clip are parameters of strategy.name = \"robust\"'s rule, not of %q", pe.Strategy)
	case "prediction, clipping":
		return fmt.Errorf("strategy: prediction and clipping are switches of strategy.name = \"rdpfl\", not of %q", pe.Strategy)
	}
	return fmt.Errorf("strategy.%s = %v: %s (strategy.name = %q)", pe.Key, pe.Value, pe.Problem, pe.Strategy)
}

// topologyErr prefixes an error of package topology with the config
// section, unless it already names it.
func topologyErr(err error) error {
	if strings.HasPrefix(err.Error(), "topology") {
		return err
	}
	return fmt.Errorf("topology: %w", err)
}

// graph builds the configured topology for n nodes.
func (c Config) graph(n int, seed uint64) (topology.Dynamic, error) {
	t := c.Topology
	static := func(g *topology.Graph, err error) (topology.Dynamic, error) {
		if err != nil {
			return nil, topologyErr(err)
		}
		return topology.Static(g), nil
	}
	switch t.Kind {
	case "complete":
		return static(topology.Complete(n))
	case "ring":
		return static(topology.Ring(n))
	case "kregular":
		return static(topology.KRegular(n, t.K, seed))
	case "erdos_renyi":
		return static(topology.ErdosRenyi(n, t.P, seed))
	case "small_world":
		return static(topology.SmallWorld(n, t.K, t.Beta, seed))
	case "star":
		return static(topology.Star(n, 0))
	case "edge_list":
		return static(topology.LoadEdgeList(t.File, n, false))
	case "trace":
		tr, err := topology.LoadTrace(t.File, n)
		if err != nil {
			return nil, topologyErr(err)
		}
		return tr, nil
	case "mobility":
		mc := topology.DefaultMobility(n, seed)
		mc.Connect = t.Connect
		m, err := topology.NewMobility(mc)
		if err != nil {
			return nil, topologyErr(err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("topology.kind = %q: want one of %v", t.Kind, topologies)
}

// BuildNode builds node i of the experiment c describes, as one node
// process of a deployment does: it loads the data and derives the same
// split, graph and adversary as the simulation (all from the seed), takes
// the node's key and its peers' from keys, and its randomness from random
// (nil: seeded, as in simulation).
func (c Config) BuildNode(i int, keys wire.KeySource, random seed.Source) (*node.Node, error) {
	tt, err := c.LoadData()
	if err != nil {
		return nil, err
	}
	s, err := c.Setup(tt)
	if err != nil {
		return nil, err
	}
	s.Random = random
	return s.BuildNode(i, keys)
}
