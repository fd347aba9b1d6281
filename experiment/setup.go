package experiment

import (
	"context"
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/secagg"
	"github.com/trellis-fl/trellis/node/trustlayer"
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
	// neighbors (adversary.Config.SameForAll).
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
	// ByzantineFraction is the share of adversarial nodes, who send what
	// Attack crafts; ByzantineIDs, when set, names them instead (one or
	// the other: adversary.Choose, through ByzantineSet).
	ByzantineFraction float64
	ByzantineIDs      []int
	Attack            attack.Attack
	Drop              float64
	Rounds            int
	EvalEvery         int
	// GlobalTest, when positive, evaluates every node on the first
	// GlobalTest samples of the global test set (-1: all of them; 0: none).
	GlobalTest int
	// GlobalSample "rotating" evaluates node i in round r on GlobalTest
	// samples of the global test set drawn from (Seed, i, r) instead
	// (data.Rotating); "" or "first" is the first GlobalTest.
	GlobalSample  string
	WireRoundTrip bool
	// InitPerNode draws each node's initial parameters from its own stream
	// instead of giving every node the same ones.
	InitPerNode bool
	Seed        uint64
	Workers     int
	Timings     func(metrics.Timing)
	// Trust, if set, gives every node DMTT's topology-trust layer
	// (trustlayer.Layer), its first; the nodes share one
	// signature-verification cache.
	Trust *trust.Config
	// Privacy, if set, gives every node a DP layer (experiment/privacy.go).
	Privacy *Privacy
	// SecAgg, if set, gives every node a secure-aggregation layer after
	// it (experiment/secagg.go).
	SecAgg *secagg.Config
	// Paillier, if set, gives every node the Paillier-relay layer instead
	// (experiment/secagg.go).
	Paillier *secagg.PaillierConfig
	// CKKS, if positive, gives every node the threshold-CKKS layer, with
	// at most that many ciphertexts a model.
	CKKS int
	// ByzantineIdle is sim.Config's; Claims is adversary.Config's.
	ByzantineIdle bool
	Claims        adversary.ClaimAttack
	// Random is the nodes' randomness (node.Config.Random); nil: every
	// stream from the seed.
	Random seed.Source
	// Async, if set, runs the nodes in asynchronous timing on the
	// simulator's virtual clock (sim.Async), each node keeping inputs
	// at most MaxStaleness of its steps old, and with LatestInputs every
	// in-neighbour's newest model each step (node.Async).
	Async        *sim.Async
	MaxStaleness int
	LatestInputs bool
	// Inflate is the Byzantine nodes' step inflation in asynchronous
	// timing (adversary.Config.Inflate).
	Inflate int
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

// Build creates the nodes and the simulator configuration, the nodes'
// keys derived from the seed.
func (s Setup) Build() (*Built, error) {
	p, err := s.plan()
	if err != nil {
		return nil, err
	}
	// The simulator computes with a few nodes at a time: their models
	// share one pool of gradients, activation buffers and matrix
	// workspace, which grows to that number, and each holds its
	// parameters and state only.
	if p.pool, err = nn.NewPool(p.s.Model, nn.Options{Batch: p.s.Batch}); err != nil {
		return nil, err
	}
	// Every node evaluates on the same global test samples each evaluated
	// round: decoded once here (a byte-coded set, data.Dataset.Decoded),
	// they are copied instead of decoded each time, which was a fifth of
	// the CPU time of a quickstart round.
	if p.global > 0 {
		p.globalTest = p.globalTest.Decoded()
	}
	keys := wire.NewSeedKeys(p.s.Seed, p.s.Nodes)
	nodes := make([]*node.Node, p.s.Nodes)
	for i := range nodes {
		if nodes[i], err = p.node(i, keys); err != nil {
			return nil, err
		}
	}
	drops, err := topology.NewDrops(p.s.Drop, p.s.Seed)
	if err != nil {
		return nil, err
	}
	cfg := sim.Config{
		Rounds: p.s.Rounds, EvalEvery: p.s.EvalEvery, Global: p.global > 0, GlobalPerNode: p.evalOrder != nil,
		Graph: p.graph, Drops: drops, Adversary: p.s.adversaryOf(p.byz),
		Identities: keys.All(), WireRoundTrip: p.s.WireRoundTrip, Seed: p.s.Seed,
		Workers: p.s.Workers, Timings: p.s.Timings,
		ByzantineIdle: p.s.ByzantineIdle, Async: p.s.Async,
	}
	return &Built{Config: cfg, Nodes: nodes, Splits: p.splits}, nil
}

// BuildNode creates node i alone, with its key from keys: what one node
// process of a deployment does. The data split, graph and adversary are
// the same as Build's (all derived from the seed), so node i here is node
// i of the simulation.
func (s Setup) BuildNode(i int, keys wire.KeySource) (*node.Node, error) {
	p, err := s.plan()
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= p.s.Nodes {
		return nil, fmt.Errorf("experiment: node %d outside [0, %d)", i, p.s.Nodes)
	}
	return p.node(i, keys)
}

// plan is what every node of an experiment is built from.
type plan struct {
	s      Setup
	splits []data.ClientSplit
	shift  []data.Transform
	graph  topology.Dynamic
	// global is the global test samples a node evaluates on per evaluated
	// round (0: none): the first ones, in the set's order, which needs no
	// index list, or with evalOrder a rotating window of that shared
	// order.
	global    int
	evalOrder []int32
	// globalTest is the global test set the nodes evaluate on: the
	// data's, or Build's decoded copy of it.
	globalTest *data.Dataset
	byz        []int
	flip       attack.DataAttack
	// pool lends the nodes' models their scratch (Build); nil: each model
	// owns its own (BuildNode, a node process).
	pool *nn.Pool
}

func (s Setup) plan() (*plan, error) {
	s = s.Defaults()
	if s.Data.Train == nil {
		return nil, fmt.Errorf("experiment: no dataset")
	}
	if s.Nodes < 1 {
		return nil, fmt.Errorf("experiment: nodes = %d, need ≥ 1", s.Nodes)
	}
	tt := s.Data
	pc := s.Partition
	pc.Clients, pc.Seed = s.Nodes, s.Seed
	if s.Pool > 0 {
		pc.Pool = tt.Train.All()[:min(s.Pool, tt.Train.Len())]
	}
	part, err := data.NewPartition(tt.Train, pc)
	if err != nil {
		return nil, err
	}
	p := &plan{s: s, globalTest: tt.Test}
	if p.splits, err = data.SplitClients(tt.Train, part, s.Fractions, s.Seed); err != nil {
		return nil, err
	}
	if p.shift, err = data.FeatureShift(tt.Train.Shape, s.Nodes, s.Shift); err != nil {
		return nil, err
	}
	if p.graph, err = s.Graph(s.Nodes, s.Seed); err != nil {
		return nil, err
	}
	switch {
	case tt.Test == nil || tt.Test.Len() == 0:
	case s.GlobalTest < 0:
		p.global = tt.Test.Len()
	case s.GlobalTest > 0:
		p.global = min(s.GlobalTest, tt.Test.Len())
	}
	switch s.GlobalSample {
	case "", "first":
	case "rotating":
		if p.global > 0 && p.global < tt.Test.Len() {
			p.evalOrder = data.EvalOrder(tt.Test.Len(), s.Seed)
		}
	default:
		return nil, fmt.Errorf("experiment: global sample %q: want \"first\" or \"rotating\"", s.GlobalSample)
	}
	if p.byz, err = s.ByzantineSet(); err != nil {
		return nil, err
	}
	p.flip, _ = s.Attack.(attack.DataAttack)
	return p, nil
}

// ByzantineSet is the experiment's Byzantine nodes (adversary.Choose of
// ByzantineIDs or ByzantineFraction), for a setup with its defaults.
func (s Setup) ByzantineSet() ([]int, error) {
	return adversary.Choose(s.Nodes, s.ByzantineIDs, s.ByzantineFraction, s.Seed)
}

// Adversary is the experiment's adversary: its Byzantine set and what
// they send, for every driver (the simulator's Build, each node process,
// the monitor's ground truth).
func (s Setup) Adversary() (adversary.Config, error) {
	s = s.Defaults()
	byz, err := s.ByzantineSet()
	if err != nil {
		return adversary.Config{}, err
	}
	return s.adversaryOf(byz), nil
}

// AsyncStale is the Byzantine nodes' stale attack in asynchronous timing
// (none in rounds).
func (s Setup) AsyncStale() adversary.Stale {
	if s.Async == nil {
		return adversary.Stale{}
	}
	return s.Async.Stale
}

// adversaryOf is the adversary of the Byzantine set byz.
func (s Setup) adversaryOf(byz []int) adversary.Config {
	return adversary.Config{Nodes: s.Nodes, Byzantine: byz, Attack: s.Attack, SameForAll: s.SameForAll,
		Claims: s.Claims, Inflate: s.Inflate, Seed: s.Seed}
}

// node builds node i.
func (p *plan) node(i int, keys wire.KeySource) (*node.Node, error) {
	s, tt := p.s, p.s.Data
	id, err := keys.Identity(i)
	if err != nil {
		return nil, err
	}
	dir, err := keys.Directory()
	if err != nil {
		return nil, err
	}
	initSeed := seed.Derive(s.Seed, seed.Init)
	if s.InitPerNode {
		initSeed = seed.Derive(s.Seed, seed.Init, uint64(i))
	}
	m, err := nn.Build(s.Model, initSeed, nn.Options{Batch: s.Batch, Pool: p.pool})
	if err != nil {
		return nil, err
	}
	opt, err := nn.NewOptimizer(s.Optimizer, m.NumParams())
	if err != nil {
		return nil, err
	}
	var train nn.Batches = data.NewBatcher(tt.Train, p.splits[i].Train, seed.Stream(s.Seed, seed.Train, uint64(i)), p.shift[i])
	if p.flip != nil && slices.Contains(p.byz, i) {
		// A data attack poisons the attacker's own training labels
		// (attack.DataAttack); the node then runs the honest code.
		train = &flippedLabels{Batches: train, flip: p.flip, classes: tt.Train.NumClasses()}
	}
	optSpec, params := s.Optimizer, m.NumParams()
	cfg := node.Config{
		ID: i, Model: m, Optimizer: opt, Train: s.Local, Strategy: s.Strategy(),
		NewOptimizer: func() (nn.Optimizer, error) { return nn.NewOptimizer(optSpec, params) },
		TrainData:    train,
		Test:         data.NewEvalBatcher(tt.Train, p.splits[i].Test, p.shift[i]),
		Identity:     id, Directory: dir, Seed: s.Seed, Random: s.Random, Rounds: s.Rounds,
	}
	if s.Async != nil {
		cfg.Async = &node.Async{MaxStaleness: s.MaxStaleness, Latest: s.LatestInputs}
	}
	if s.Trust != nil {
		tl, err := trustlayer.New(id, dir, *s.Trust)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		cfg.Layers = append(cfg.Layers, tl)
	}
	if err := p.addPrivacy(i, &cfg); err != nil {
		return nil, err
	}
	if err := p.addSecAgg(i, &cfg); err != nil {
		return nil, err
	}
	if len(p.splits[i].Val) > 0 {
		cfg.Val = data.NewEvalBatcher(tt.Train, p.splits[i].Val, p.shift[i])
	}
	switch {
	case p.evalOrder != nil:
		r, err := data.NewRotating(p.globalTest, p.evalOrder, p.global, s.Seed, i)
		if err != nil {
			return nil, err
		}
		cfg.GlobalTest = r
		cfg.Layers = append(cfg.Layers, &evalRound{sample: r})
	case p.global > 0:
		// The first samples in the set's order: the same samples and
		// order as a list of them, without one per node.
		cfg.GlobalTest = data.NewPrefixBatcher(p.globalTest, p.global, nil)
	}
	return node.New(cfg)
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
func (s Setup) Run(ctx context.Context, sink metrics.Sink) error {
	b, err := s.Build()
	if err != nil {
		return err
	}
	return sim.Run(ctx, b.Config, b.Nodes, sink)
}
