package node

import (
	"fmt"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// Config sets up a node.
type Config struct {
	ID        int
	Model     *nn.Model
	Optimizer nn.Optimizer
	// NewOptimizer, if set, makes a second optimizer of the same kind for
	// strategies that train a second model on the node's data
	// (View.TrainCopy; Ditto's global model).
	NewOptimizer func() (nn.Optimizer, error)
	// Train says how much local training a round does (epochs or steps).
	Train    nn.TrainConfig
	Strategy strategy.Strategy
	// TrainData is the node's training split; Test its local test split;
	// GlobalTest, if not nil, the dataset's global test set.
	TrainData nn.Batches
	// Val, if not nil, is the node's validation split, in a fixed order
	// (View.Validate reads its first samples).
	Val        nn.Batches
	Test       nn.Batches
	GlobalTest nn.Batches
	Identity   *wire.Identity
	Directory  *wire.Directory
	// Seed is the experiment seed. Random, if nil, is seed.Seeded(Seed):
	// every stream of the node derives from the seed. A deployment passes
	// a source that draws its private purposes from crypto/rand.
	Seed   uint64
	Random seed.Source
	Rounds int
	// Layers are the protocol layers (Layer), called in this order: DMTT's
	// topology trust (package trustlayer) first, so that the layers after
	// it and the strategy see the round's trust, then DP (dplayer), then
	// secure aggregation (secagg).
	Layers []Layer
	// Trainer, if not nil, trains the model in place of Model.Train
	// (sample-level DP: dplayer.Sample).
	Trainer Trainer
	// Async, if not nil, runs the node in asynchronous timing (async.go):
	// its steps are its rounds, messages carry the sender's step, and End
	// combines the newest message of each sender with its staleness.
	Async *Async
}

// Neighborhood is what a node knows of the round's graph: whom it may hear
// from (sorted), their degrees, and its own degree. Every node can rebuild
// it from the experiment seed (a mobility graph is seeded too).
type Neighborhood struct {
	In       []int
	InDegree []int
	Degree   int
}

// Node is one participant. It is not safe for concurrent use; a driver runs
// one goroutine per node at a time.
type Node struct {
	cfg       Config
	random    seed.Source
	validator *wire.Validator
	layers    []Layer
	// start is the round's start parameters (View.Start), nil for a
	// strategy that never reads them (strategy.ReadsStart).
	start []float32

	// memos are a simulator's shared memos (ShareMemos); none on a
	// network.
	memos Memos
	// async is the asynchronous timing's state, nil in rounds.
	async *asyncState

	rs       roundState
	trainRes nn.TrainResult
	// sendBufs back the vector payloads of Outbox, reused every round so
	// that a round allocates no model-sized buffers.
	sendBufs [][]float32
	// rng is the strategy's stream of the round, one for Share and Combine
	// alike, so their draws continue each other rather than repeat.
	rng *rand.Rand

	// The hooks of strategy.View (hooks.go).
	probe      oneBatch
	probeRound int
	saved      []float32
	copyOpt    nn.Optimizer
	valLabels  []int
	valX       []float32
}

// New checks the configuration and returns a node before its first round.
func New(cfg Config) (*Node, error) {
	switch {
	case cfg.Model == nil || cfg.Optimizer == nil || cfg.Strategy == nil:
		return nil, fmt.Errorf("node %d: model, optimizer and strategy are required", cfg.ID)
	case cfg.TrainData == nil || cfg.Test == nil:
		return nil, fmt.Errorf("node %d: training and test data are required", cfg.ID)
	case cfg.Identity == nil || cfg.Directory == nil:
		return nil, fmt.Errorf("node %d: identity and peer directory are required", cfg.ID)
	case int(cfg.Identity.ID()) != cfg.ID:
		return nil, fmt.Errorf("node %d: identity is for node %d", cfg.ID, cfg.Identity.ID())
	}
	v, err := newValidator(cfg, Memos{})
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", cfg.ID, err)
	}
	n := &Node{cfg: cfg, random: cfg.Random, validator: v}
	if cfg.Async != nil {
		if n.async, err = newAsync(cfg); err != nil {
			return nil, err
		}
	}
	if _, local := cfg.Strategy.(strategy.Local); !local {
		// The send buffer of the model most strategies share, made and
		// its pages written now: a round allocates nothing model-sized,
		// and the first one does not pay the page faults (on a virtual
		// machine microseconds each: 10,000 MLP nodes fault 4 GB).
		buf := make([]float32, cfg.Model.NumParams())
		clear(buf)
		n.sendBufs = [][]float32{buf[:0]}
	}
	if strategy.ReadsStart(cfg.Strategy) {
		// The round-start copy only for a strategy that reads it: at
		// 10,000 nodes it is a model-sized vector each (3.8 GiB for the
		// MNIST MLP).
		n.start = make([]float32, cfg.Model.NumParams())
		clear(n.start) // its pages now, as the send buffer's
	}
	if n.random == nil {
		n.random = seed.Seeded(cfg.Seed)
	}
	for _, l := range cfg.Layers {
		if l == nil {
			return nil, fmt.Errorf("node %d: a nil layer", cfg.ID)
		}
		n.layers = append(n.layers, l)
	}
	return n, nil
}

// ID is the node's id.
func (n *Node) ID() int { return n.cfg.ID }

// Model is the node's model (its parameters are the node's current state),
// for a driver that exports or evaluates it between rounds; the node owns
// it, and a checkpoint takes Snapshot.
func (n *Node) Model() *nn.Model { return n.cfg.Model }

// TrainData is the node's training split (a driver weighs its nodes'
// training cost by its length).
func (n *Node) TrainData() nn.Batches { return n.cfg.TrainData }

// view is what the strategy sees now; layers add their results.
func (n *Node) view() *strategy.View {
	v := &strategy.View{
		ID: n.cfg.ID, Round: n.rs.r, Rounds: n.cfg.Rounds,
		Model: n.cfg.Model, Start: n.start,
		Neighbors: n.rs.hood.In, NeighborDegree: n.rs.hood.InDegree, Degree: n.rs.hood.Degree,
		RNG:       n.rng,
		LR:        n.cfg.Optimizer.LR(),
		Steps:     n.trainRes.Steps,
		BatchLoss: n.batchLoss,
		TrainCopy: n.trainCopy,
		Validate:  n.validate,
	}
	for _, l := range n.layers {
		l.See(v)
	}
	return v
}
