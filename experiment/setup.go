package experiment

import (
	"context"
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/sim"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

// Setup describes one simulated experiment. Zero fields take the defaults
// of Defaults.
type Setup struct {
	// Data is the dataset split across nodes (with its global test set).
	Data data.TrainTest
	// Pool, when positive, uses only the first Pool training samples.
	Pool int
	// Partition says how samples are split; its Clients and Seed are set
	// from Nodes and Seed.
	Partition data.PartitionConfig
	// Shift is the per-client feature shift, applied to each client's
	// train, validation and test samples (none by default).
	Shift data.ShiftConfig
	// Fractions are each client's train / validation / test fractions
	// (zero: the defaults 0.7 / 0.1 / 0.2).
	Fractions data.Fractions
	// SameForAll makes a Byzantine node send one crafted vector to all its
	// neighbors (sim.Config.SameForAll).
	SameForAll bool
	Nodes      int
	Model      nn.Spec
	Optimizer  nn.OptimizerSpec
	Batch      int
	// Local is the local training per round (epochs or steps).
	Local nn.TrainConfig
	// Graph builds the round graphs for n nodes (default: complete).
	Graph func(n int, seed uint64) (topology.Dynamic, error)
	// Strategy makes each node's strategy (default: local-only).
	Strategy func() strategy.Strategy
	// Byzantine is the fraction of adversarial nodes, who send what Attack
	// crafts.
	Byzantine float64
	// ByzantineIDs, when set, names the adversary's nodes instead.
	ByzantineIDs []int
	Attack       attack.Attack
	Drop         float64
	Rounds       int
	EvalEvery    int
	// GlobalTest, when positive, evaluates every node on the first
	// GlobalTest samples of the global test set (-1: all of them; 0: none).
	GlobalTest    int
	WireRoundTrip bool
	// InitPerNode draws each node's initial parameters from its own stream
	// instead of giving every node the same ones.
	InitPerNode bool
	Seed        uint64
	Workers     int
	Timings     func(sim.Timing)
	// Trust, if set, gives every node DMTT's topology-trust layer
	// (node.Config.Trust); the nodes share one signature-verification
	// cache.
	Trust *trust.Config
	// ByzantineIdle and Claims are sim.Config's.
	ByzantineIdle bool
	Claims        sim.ClaimAttack
	// NoVerifyCache gives the nodes no shared verification cache (every
	// node verifies every signature itself, as over a network); results
	// are the same, only slower. For measurements.
	NoVerifyCache bool
}

// Defaults fills the zero fields of s: a complete graph, local-only nodes,
// Dirichlet 0.5, batch 32, SGD lr 0.01, one local epoch, 10 rounds, seed 1.
func (s Setup) Defaults() Setup {
	if s.Partition.Method == "" {
		s.Partition.Method, s.Partition.Alpha = data.Dirichlet, 0.5
	}
	if s.Optimizer.Name == "" && s.Optimizer.LR == 0 {
		s.Optimizer = nn.OptimizerSpec{Name: "sgd", LR: 0.01}
	}
	if s.Batch == 0 {
		s.Batch = 32
	}
	if s.Local.Epochs == 0 && s.Local.Steps == 0 {
		s.Local.Epochs = 1
	}
	if s.Graph == nil {
		s.Graph = func(n int, _ uint64) (topology.Dynamic, error) {
			g, err := topology.Complete(n)
			return topology.Static(g), err
		}
	}
	if s.Strategy == nil {
		s.Strategy = func() strategy.Strategy { return strategy.Local{} }
	}
	if s.Rounds == 0 {
		s.Rounds = 10
	}
	if s.Seed == 0 {
		s.Seed = 1
	}
	return s
}

// Built is an experiment ready to run: the simulator configuration, the
// nodes, and each node's split of the data (for reports and baselines that
// must see the same samples).
type Built struct {
	Config sim.Config
	Nodes  []*node.Node
	Splits []data.ClientSplit
}

// Build creates the nodes and the simulator configuration.
func (s Setup) Build() (*Built, error) {
	cfg, nodes, splits, err := s.build()
	if err != nil {
		return nil, err
	}
	return &Built{Config: cfg, Nodes: nodes, Splits: splits}, nil
}

func (s Setup) build() (sim.Config, []*node.Node, []data.ClientSplit, error) {
	s = s.Defaults()
	if s.Data.Train == nil {
		return sim.Config{}, nil, nil, fmt.Errorf("experiment: no dataset")
	}
	if s.Nodes < 1 {
		return sim.Config{}, nil, nil, fmt.Errorf("experiment: nodes = %d, need ≥ 1", s.Nodes)
	}
	tt := s.Data
	pc := s.Partition
	pc.Clients, pc.Seed = s.Nodes, s.Seed
	if s.Pool > 0 {
		pc.Pool = tt.Train.All()[:min(s.Pool, tt.Train.Len())]
	}
	part, err := data.NewPartition(tt.Train, pc)
	if err != nil {
		return sim.Config{}, nil, nil, err
	}
	splits, err := data.SplitClients(tt.Train, part, s.Fractions, s.Seed)
	if err != nil {
		return sim.Config{}, nil, nil, err
	}
	shift, err := data.FeatureShift(tt.Train.Shape, s.Nodes, s.Shift)
	if err != nil {
		return sim.Config{}, nil, nil, err
	}
	graph, err := s.Graph(s.Nodes, s.Seed)
	if err != nil {
		return sim.Config{}, nil, nil, err
	}
	ids, dir := wire.SimIdentities(s.Seed, s.Nodes)
	var globalIdx []int32
	switch {
	case s.GlobalTest < 0 && tt.Test != nil:
		globalIdx = tt.Test.All()
	case s.GlobalTest > 0 && tt.Test != nil:
		globalIdx = tt.Test.All()[:min(s.GlobalTest, tt.Test.Len())]
	}
	byz, err := sim.ChooseByzantine(s.Nodes, s.Byzantine, s.Seed)
	if err != nil {
		return sim.Config{}, nil, nil, err
	}
	if len(s.ByzantineIDs) > 0 {
		byz = s.ByzantineIDs
	}
	flip, _ := s.Attack.(attack.DataAttack)
	var cache *wire.VerifyCache
	if !s.NoVerifyCache {
		cache = wire.NewVerifyCache(0)
	}
	nodes := make([]*node.Node, s.Nodes)
	for i := range nodes {
		initSeed := seed.Derive(s.Seed, seed.Init)
		if s.InitPerNode {
			initSeed = seed.Derive(s.Seed, seed.Init, uint64(i))
		}
		m, err := nn.Build(s.Model, initSeed, nn.Options{Batch: s.Batch})
		if err != nil {
			return sim.Config{}, nil, nil, err
		}
		opt, err := nn.NewOptimizer(s.Optimizer, m.NumParams())
		if err != nil {
			return sim.Config{}, nil, nil, err
		}
		var train nn.Batches = data.NewBatcher(tt.Train, splits[i].Train, seed.Stream(s.Seed, seed.Train, uint64(i)), shift[i])
		if flip != nil && slices.Contains(byz, i) {
			// A data attack poisons the attacker's own training labels
			// (attack.DataAttack); the node then runs the honest code.
			train = &flippedLabels{Batches: train, flip: flip, classes: tt.Train.NumClasses()}
		}
		optSpec, params := s.Optimizer, m.NumParams()
		cfg := node.Config{
			ID: i, Model: m, Optimizer: opt, Train: s.Local, Strategy: s.Strategy(),
			NewOptimizer: func() (nn.Optimizer, error) { return nn.NewOptimizer(optSpec, params) },
			TrainData:    train,
			Test:         data.NewBatcher(tt.Train, splits[i].Test, nil, shift[i]),
			Identity:     ids[i], Directory: dir, Seed: s.Seed, Rounds: s.Rounds,
			VerifyCache: cache,
		}
		if s.Trust != nil {
			tc := *s.Trust
			tc.Cache = cache
			cfg.Trust = &tc
		}
		if len(splits[i].Val) > 0 {
			cfg.Val = data.NewBatcher(tt.Train, splits[i].Val, nil, shift[i])
		}
		if globalIdx != nil {
			cfg.GlobalTest = data.NewBatcher(tt.Test, globalIdx, nil, nil)
		}
		if nodes[i], err = node.New(cfg); err != nil {
			return sim.Config{}, nil, nil, err
		}
	}
	drops, err := topology.NewDrops(s.Drop, s.Seed)
	if err != nil {
		return sim.Config{}, nil, nil, err
	}
	return sim.Config{
		Rounds: s.Rounds, EvalEvery: s.EvalEvery, Global: globalIdx != nil,
		Graph: graph, Drops: drops, Byzantine: byz, Attack: s.Attack, SameForAll: s.SameForAll,
		Identities: ids, WireRoundTrip: s.WireRoundTrip, Seed: s.Seed,
		Workers: s.Workers, Timings: s.Timings,
		ByzantineIdle: s.ByzantineIdle, Claims: s.Claims,
	}, nodes, splits, nil
}

// flippedLabels replaces every label a batch source yields by the data
// attack's choice.
type flippedLabels struct {
	nn.Batches
	flip    attack.DataAttack
	classes int
}

func (f *flippedLabels) Next(x []float32, y []int) int {
	n := f.Batches.Next(x, y)
	for i := range y[:n] {
		y[i] = f.flip.FlipLabel(y[i], f.classes)
	}
	return n
}

// Run builds the experiment and runs it into sink.
func (s Setup) Run(ctx context.Context, sink sim.Sink) error {
	b, err := s.Build()
	if err != nil {
		return err
	}
	return sim.Run(ctx, b.Config, b.Nodes, sink)
}
