package sim

import (
	"context"
	"sync"
	"testing"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

var (
	mnistOnce sync.Once
	mnist     data.TrainTest
	mnistErr  error
)

func loadMNIST(t testing.TB) data.TrainTest {
	mnistOnce.Do(func() { mnist, mnistErr = data.MNIST() })
	if mnistErr != nil {
		t.Fatal(mnistErr)
	}
	return mnist
}

// setup is a small MNIST experiment for end-to-end tests.
type setup struct {
	nodes      int
	pool       int     // training images used, split across nodes
	alpha      float64 // Dirichlet concentration
	hidden     []int
	rounds     int
	graph      func(n int) topology.Dynamic
	strategy   func() strategy.Strategy
	byzantine  float64
	attack     attack.Attack
	wire       bool
	globalTest int
	seed       uint64
	workers    int
	drop       float64
	steps      int // local SGD steps per round; 0 means one epoch
}

func (s setup) withDefaults() setup {
	if s.nodes == 0 {
		s.nodes = 10
	}
	if s.pool == 0 {
		s.pool = 6000
	}
	if s.alpha == 0 {
		s.alpha = 0.1
	}
	if s.hidden == nil {
		s.hidden = []int{64}
	}
	if s.rounds == 0 {
		s.rounds = 5
	}
	if s.graph == nil {
		s.graph = func(n int) topology.Dynamic {
			g, _ := topology.Complete(n)
			return topology.Static(g)
		}
	}
	if s.globalTest == 0 {
		s.globalTest = 2000
	}
	if s.seed == 0 {
		s.seed = 1
	}
	return s
}

// run builds the nodes and runs the simulation, returning every round.
func (s setup) run(t testing.TB) []*Round {
	t.Helper()
	var rounds []*Round
	if err := s.runCtx(t, context.Background(), SinkFunc(func(r *Round) error { rounds = append(rounds, r); return nil })); err != nil {
		t.Fatal(err)
	}
	return rounds
}

// runCtx builds the nodes and runs the simulation into sink.
func (s setup) runCtx(t testing.TB, ctx context.Context, sink Sink) error {
	t.Helper()
	s = s.withDefaults()
	tt := loadMNIST(t)
	pool := tt.Train.All()[:s.pool]
	part, err := data.NewPartition(tt.Train, data.PartitionConfig{Method: data.Dirichlet, Clients: s.nodes, Alpha: s.alpha, Pool: pool, Seed: s.seed})
	if err != nil {
		t.Fatal(err)
	}
	splits, err := data.SplitClients(tt.Train, part, data.Fractions{}, s.seed)
	if err != nil {
		t.Fatal(err)
	}
	ids, dir := wire.SimIdentities(s.seed, s.nodes)
	spec := nn.Spec{Kind: "mlp", Input: []int{1, 28, 28}, Hidden: s.hidden, Classes: 10}
	nodes := make([]*node.Node, s.nodes)
	globalIdx := tt.Test.All()[:s.globalTest]
	for i := range nodes {
		m, err := nn.Build(spec, seed.Derive(s.seed, seed.Init), nn.Options{Batch: 32})
		if err != nil {
			t.Fatal(err)
		}
		opt, _ := nn.NewOptimizer(nn.OptimizerSpec{Name: "sgd", LR: 0.05, Momentum: 0.5}, m.NumParams())
		st := strategy.Strategy(strategy.Local{})
		if s.strategy != nil {
			st = s.strategy()
		}
		nodes[i], err = node.New(node.Config{
			ID: i, Model: m, Optimizer: opt, Train: nn.TrainConfig{Epochs: 1, Steps: s.steps}, Strategy: st,
			TrainData:  data.NewBatcher(tt.Train, splits[i].Train, seed.Stream(s.seed, seed.Train, uint64(i)), nil),
			Test:       data.NewBatcher(tt.Train, splits[i].Test, nil, nil),
			GlobalTest: data.NewBatcher(tt.Test, globalIdx, nil, nil),
			Identity:   ids[i], Directory: dir, Seed: s.seed, Rounds: s.rounds,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	byz, err := ChooseByzantine(s.nodes, s.byzantine, s.seed)
	if err != nil {
		t.Fatal(err)
	}
	drops, err := topology.NewDrops(s.drop, s.seed)
	if err != nil {
		t.Fatal(err)
	}
	return Run(ctx, Config{
		Rounds: s.rounds, Global: true, Graph: s.graph(s.nodes), Drops: drops,
		Byzantine: byz, Attack: s.attack, Identities: ids, WireRoundTrip: s.wire,
		Seed: s.seed, Workers: s.workers,
	}, nodes, sink)
}

func last(rs []*Round) *Round { return rs[len(rs)-1] }
