package experiment

import (
	"context"
	"sync"
	"testing"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
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

// setup is a small MNIST experiment for end-to-end tests: by default 10
// nodes, a Dirichlet 0.1 split of 6,000 images, an MLP 784-64-10, SGD lr
// 0.05 momentum 0.5, one local epoch, 5 rounds, complete graph, global
// accuracy on 2,000 test images.
type setup struct {
	nodes     int
	pool      int
	alpha     float64
	rounds    int
	graph     func(n int) topology.Dynamic
	strategy  func() strategy.Strategy
	byzantine float64
	attack    attack.Attack
	wire      bool
	seed      uint64
	workers   int
	drop      float64
	steps     int // local SGD steps per round; 0 means one epoch
}

func (s setup) experiment(t testing.TB) Setup {
	x := Setup{
		Data: loadMNIST(t), Pool: 6000, Nodes: 10, Rounds: 5, GlobalTest: 2000,
		Partition: data.PartitionConfig{Method: data.Dirichlet, Alpha: 0.1},
		Model:     nn.Spec{Kind: "mlp", Input: []int{1, 28, 28}, Hidden: []int{64}, Classes: 10},
		Optimizer: nn.OptimizerSpec{Name: "sgd", LR: 0.05, Momentum: 0.5},
		Local:     nn.TrainConfig{Epochs: 1, Steps: s.steps},
		Strategy:  s.strategy, ByzantineFraction: s.byzantine, Attack: s.attack,
		WireRoundTrip: s.wire, Seed: s.seed, Workers: s.workers, Drop: s.drop,
	}
	if s.nodes > 0 {
		x.Nodes = s.nodes
	}
	if s.pool > 0 {
		x.Pool = s.pool
	}
	if s.alpha > 0 {
		x.Partition.Alpha = s.alpha
	}
	if s.rounds > 0 {
		x.Rounds = s.rounds
	}
	if s.graph != nil {
		x.Graph = func(n int, _ uint64) (topology.Dynamic, error) { return s.graph(n), nil }
	}
	return x
}

// run runs the experiment and returns every round.
func (s setup) run(t testing.TB) []*metrics.Round {
	t.Helper()
	var rounds []*metrics.Round
	if err := s.runCtx(t, context.Background(), metrics.SinkFunc(func(r *metrics.Round) error { rounds = append(rounds, r); return nil })); err != nil {
		t.Fatal(err)
	}
	return rounds
}

func (s setup) runCtx(t testing.TB, ctx context.Context, sink metrics.Sink) error {
	t.Helper()
	return s.experiment(t).Run(ctx, sink)
}

func last(rs []*metrics.Round) *metrics.Round { return rs[len(rs)-1] }
