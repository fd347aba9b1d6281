package experiment

import (
	"fmt"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/sim"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// LoadData loads the configured dataset.
func LoadData(c config.Config) (data.TrainTest, error) {
	switch c.Data.Dataset {
	case "mnist":
		if c.Data.Dir != "" {
			return data.LoadMNISTShard(c.Data.Dir, everySample)
		}
		return data.MNISTShard(everySample)
	case "fashion_mnist":
		return data.LoadFashionMNISTShard(c.Data.Dir, everySample)
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
	return data.TrainTest{}, fmt.Errorf("data.dataset = %q: want one of %v", c.Data.Dataset, config.Datasets)
}

// everySample keeps every sample of an MNIST-family dataset, which the
// shard loaders then hold as bytes (data.Dataset.Codes): the same float32
// values, a quarter of the memory (MNIST: 55 MiB instead of 210), which at
// 1,000 simulated nodes is a tenth of the run.
func everySample(labels *data.Dataset) ([]int32, error) { return labels.All(), nil }

// SetupOf turns a validated config and its dataset into a runnable setup.
func SetupOf(c config.Config, tt data.TrainTest) (Setup, error) {
	if c.Consensus != nil {
		return Setup{}, ErrConsensusTask
	}
	atk, err := c.Attack()
	if err != nil {
		return Setup{}, err
	}
	params, err := c.StrategyParams()
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
			ClassesPerClient: c.Partition.ClassesPerClient, PerClient: c.Partition.PerNode},
		Shift:      data.ShiftConfig{Kind: data.ShiftKind(c.Partition.Shift), MaxDegrees: c.Partition.ShiftDegrees, Seed: c.Seed},
		SameForAll: c.Adversary.SameForAll,
		Model:      c.ModelSpec(tt.Train),
		Optimizer: nn.OptimizerSpec{Name: c.Training.Optimizer, LR: c.Training.LR, Momentum: c.Training.Momentum,
			Nesterov: c.Training.Nesterov, WeightDecay: c.Training.WeightDecay},
		Batch:             c.Training.Batch,
		Local:             nn.TrainConfig{Epochs: c.Training.Epochs, Steps: c.Training.Steps, ClipNorm: c.Training.ClipNorm},
		Graph:             graphOf(c),
		ByzantineFraction: c.Adversary.Fraction, ByzantineIDs: c.Adversary.IDs, Attack: atk,
		Drop: c.Topology.Drop, GlobalTest: c.Evaluation.GlobalTest, GlobalSample: c.Evaluation.GlobalSample,
		WireRoundTrip: c.Run.WireRoundTrip, Seed: c.Seed, Workers: c.Run.Workers,
		InitPerNode: c.Init == "per_node",
	}
	if s.Trust, err = c.TrustLayer(); err != nil {
		return Setup{}, err
	}
	s.ByzantineIdle, s.Claims = c.Adversary.Idle, ClaimAttack(c)
	if c.Async() {
		s.Async, s.MaxStaleness, s.LatestInputs = asyncOf(c.Timing), c.Timing.MaxStaleness, c.Timing.Inputs == "latest"
		s.Inflate = c.Timing.Inflate
	}
	s.Privacy = privacySetup(c)
	if err := c.CheckSecAggGroups(); err != nil {
		return Setup{}, err
	}
	s.SecAgg = secAggSetup(c)
	if s.Paillier, err = paillierSetup(c); err != nil {
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

// BuildNode builds node i of the experiment c describes, as one node
// process of a deployment does: it loads its shard of the data
// (LoadNodeData) and derives the same split, graph and adversary as the
// simulation (all from the seed), takes the node's key and its peers'
// from keys, and its randomness from random (nil: seeded, as in
// simulation).
func BuildNode(c config.Config, i int, keys wire.KeySource, random seed.Source) (*node.Node, error) {
	tt, err := LoadNodeData(c, i)
	if err != nil {
		return nil, err
	}
	s, err := SetupOf(c, tt)
	if err != nil {
		return nil, err
	}
	s.Random = random
	return s.BuildNode(i, keys)
}

// asyncOf is the simulator's asynchronous timing of [timing] t.
func asyncOf(t *config.Timing) *sim.Async {
	return &sim.Async{Compute: sim.Dist{Kind: t.Compute, A: t.ComputeA, B: t.ComputeB},
		Latency: sim.Dist{Kind: t.Latency, A: t.LatencyA, B: t.LatencyB}, Stragglers: t.Stragglers, Slowdown: t.Slowdown,
		Window: t.Window, Horizon: t.Horizon, Flood: t.Flood, Stale: adversary.Stale{On: t.Stale > 0, Step: t.Stale}}
}

// graphOf is c's topology as Setup.Graph builds it: for n nodes from the
// seed given (the config's own, except where a setup changes them).
func graphOf(c config.Config) func(n int, seed uint64) (topology.Dynamic, error) {
	return func(n int, seed uint64) (topology.Dynamic, error) {
		c.Nodes, c.Seed = n, seed
		return c.Graph()
	}
}

// ByzantineIDs are the adversary's nodes of c, as every driver picks them
// (adversary.Choose; none when the adversary settings are invalid:
// Validate says why).
func ByzantineIDs(c config.Config) []int {
	ids, _ := adversary.Choose(c.Nodes, c.Adversary.IDs, c.Adversary.Fraction, c.Seed)
	return ids
}

// ClaimAttack is what c's Byzantine nodes do with their topology claims.
func ClaimAttack(c config.Config) adversary.ClaimAttack {
	a := c.Adversary
	return adversary.ClaimAttack{Liar: a.Liar, Forge: a.ClaimForgery, Replay: a.ClaimReplay, Flood: a.ClaimFlood}
}
