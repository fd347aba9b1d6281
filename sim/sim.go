package sim

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// Config is what the simulator needs besides the nodes.
type Config struct {
	Rounds int
	// EvalEvery evaluates every k-th round (0-based rounds k-1, 2k-1, …) and
	// always the last; 0 means every round.
	EvalEvery int
	// Global also evaluates every node on its global test set.
	Global bool
	Graph  topology.Dynamic
	Drops  topology.Drops
	// Adversary is the Byzantine coalition and what it sends
	// (adversary.Config; its Nodes and Seed are the run's). Its
	// Byzantine lists the nodes by id (adversary.Choose).
	Adversary adversary.Config
	// Identities are every node's keys, indexed by id: nodes hold their
	// own; the driver signs the adversary's messages with the Byzantine ones.
	Identities []*wire.Identity
	// WireRoundTrip encodes and decodes every message on every link, as a
	// network would; results must not change.
	WireRoundTrip bool
	Seed          uint64
	// Workers is the number of nodes processed in parallel (default
	// GOMAXPROCS).
	Workers int
	// Timings, if set, receives each round's wall-clock timing.
	Timings func(metrics.Timing)
	// ByzantineIdle: Byzantine nodes neither train nor combine (the DMTT paper,
	// §V-E: "Byzantine nodes do not train"); what they send is their
	// initial model as the attack crafts it, plus their claims.
	ByzantineIdle bool
	// NoMemos runs the nodes without the simulator's shared memos
	// (node.Memos: a signature-verification cache, a digest memo, a memo
	// of global-test evaluations), so every node hashes every message,
	// verifies every signature and evaluates its global test itself, as
	// over a network. Results are the same, only slower: for measurements
	// and for the tests that show it.
	NoMemos bool
	// GlobalPerNode says the nodes' global test samples differ (a
	// rotating sample per node and round): the global evaluations then go
	// without the memo of node.EvalMemo, whose key is the model alone.
	GlobalPerNode bool
	// Async, if not nil, runs the nodes in asynchronous timing on a
	// virtual clock (async.go): Rounds is then each node's number of
	// steps, and the sink receives one summary per window of virtual time.
	Async *Async
}

// Run drives the nodes (indexed by id) for cfg.Rounds rounds, sending each
// round's record to sink. It stops between rounds when ctx is cancelled,
// returning ctx's error; the rounds already sent to the sink are complete.
// The nodes are driven through their round interface alone (Begin, Train,
// Outbox, Step, End) and read through the Ready values End returns.
func Run(ctx context.Context, cfg Config, nodes []*node.Node, sink metrics.Sink) error {
	r, err := newRunner(cfg, nodes)
	if err != nil {
		return err
	}
	if cfg.Async != nil {
		r.ctx = context.WithoutCancel(ctx)
		return r.runAsync(ctx, sink)
	}
	return r.run(ctx, sink)
}

func (r *runner) run(ctx context.Context, sink metrics.Sink) error {
	r.ctx = context.WithoutCancel(ctx) // a round, once begun, finishes
	for round := 0; round < r.cfg.Rounds; round++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := r.round(round)
		if err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		if err := sink.Round(rec); err != nil {
			return fmt.Errorf("round %d: metrics sink: %w", round, err)
		}
	}
	return nil
}

type runner struct {
	ctx     context.Context
	cfg     Config
	nodes   []*node.Node
	byz     []bool
	workers int
	adv     *adversary.Adversary
	// memos are shared by every node (Config.NoMemos: none).
	memos node.Memos
	// crafts are each worker's buffers for the adversary's lazily made
	// vectors.
	crafts []craftBufs
	// eagerCrafts makes every phase's crafted vectors up front, each in a
	// buffer of its own (Adversary.Rewrite), as the simulator did before
	// it made them lazily: for the tests that compare the two.
	eagerCrafts bool
	// trainCost is each node's expected training time, for scheduling
	// only: its training samples before the first round, then the time
	// its last round's training took.
	trainCost []float64
}

func newRunner(cfg Config, nodes []*node.Node) (*runner, error) {
	n := len(nodes)
	switch {
	case n == 0:
		return nil, fmt.Errorf("sim: no nodes")
	case cfg.Rounds < 1:
		return nil, fmt.Errorf("sim: rounds = %d, need ≥ 1", cfg.Rounds)
	case cfg.EvalEvery < 0:
		return nil, fmt.Errorf("sim: eval_every = %d, need ≥ 0", cfg.EvalEvery)
	case cfg.Graph == nil || cfg.Graph.N() != n:
		return nil, fmt.Errorf("sim: the graph must have one vertex per node (%d nodes)", n)
	case len(cfg.Identities) != n:
		return nil, fmt.Errorf("sim: %d identities for %d nodes", len(cfg.Identities), n)
	}
	for i, nd := range nodes {
		if nd.ID() != i {
			return nil, fmt.Errorf("sim: node at index %d has id %d", i, nd.ID())
		}
	}
	// The memos: work done for one node is not redone for the next, with
	// the same results.
	var memos node.Memos
	if !cfg.NoMemos && cfg.Async != nil {
		// Only the verification cache: a digest memo lives for one
		// delivery phase and the evaluation memo for one round.
		memos = node.Memos{Verify: wire.NewVerifyCache(0)}
		for _, nd := range nodes {
			if err := nd.ShareMemos(memos); err != nil {
				return nil, fmt.Errorf("sim: %w", err)
			}
		}
	} else if !cfg.NoMemos {
		memos = node.Memos{Verify: wire.NewVerifyCache(0), Digests: wire.NewDigestMemo()}
		if cfg.Global && !cfg.GlobalPerNode {
			memos.Global = node.NewEvalMemo(n)
		}
		for _, nd := range nodes {
			if err := nd.ShareMemos(memos); err != nil {
				return nil, fmt.Errorf("sim: %w", err)
			}
		}
	}
	ac := cfg.Adversary
	ac.Nodes, ac.Seed = n, cfg.Seed
	adv, err := adversary.New(ac, cfg.Identities, memos.Digests)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	byz := make([]bool, n)
	for _, b := range ac.Byzantine {
		byz[b] = true
	}
	w := cfg.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	cost := make([]float64, n)
	for i, nd := range nodes {
		if d := nd.TrainData(); d != nil {
			cost[i] = float64(d.Len())
		}
	}
	return &runner{cfg: cfg, nodes: nodes, byz: byz, adv: adv, memos: memos, workers: w, trainCost: cost,
		crafts: make([]craftBufs, w)}, nil
}

func (r *runner) evaluated(round int) bool {
	return metrics.Evaluated(round, r.cfg.Rounds, r.cfg.EvalEvery)
}

func (r *runner) round(round int) (*metrics.Round, error) {
	t0 := time.Now()
	n := len(r.nodes)
	g := r.cfg.Graph.At(round)
	rec := &metrics.Round{Round: round, Evaluated: r.evaluated(round), Nodes: make([]metrics.NodeRound, n)}
	trainDur, combineDur := make([]time.Duration, n), make([]time.Duration, n)
	idle := func(i int) bool { return r.byz[i] && r.cfg.ByzantineIdle }

	// 1. Begin and local training (idle Byzantine nodes do not train),
	// longest first: nodes' shares of the data differ several-fold (a
	// Dirichlet split), and a long node started last runs alone on one core.
	err := forEachIn(longestFirst(r.trainCost), n, r.workers, func(i int) error {
		defer func(t time.Time) { trainDur[i] = time.Since(t) }(time.Now())
		in := g.In(i)
		deg := make([]int, len(in))
		for k, j := range in {
			deg[k] = g.Degree(j)
		}
		hood := node.Neighborhood{In: in, InDegree: deg, Degree: g.Degree(i)}
		rec.Nodes[i] = metrics.NodeRound{Node: i, Byzantine: r.byz[i]}
		if err := r.nodes[i].Begin(round, hood); err != nil || idle(i) {
			return err
		}
		_, err := r.nodes[i].Train(r.ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	trainSecs := time.Since(t0).Seconds()
	for i, d := range trainDur {
		r.trainCost[i] = d.Seconds()
	}

	// 2. The exchange phases: every node's outbox, the adversary's
	// replacements, traffic, delivery along the round's graph.
	ready := make([]node.Ready, n)
	for {
		outbox := make([][]*wire.Message, n)
		more := make([]bool, n)
		if err := forEach(n, r.workers, func(i int) (err error) {
			outbox[i], more[i], err = r.nodes[i].Outbox()
			return err
		}); err != nil {
			return nil, err
		}
		// All nodes run the same layers, so they agree on the phases.
		last := !slices.Contains(more, true)
		// The last phase's crafted vectors are made when their receiver
		// takes them, into its worker's buffers, and dropped after its
		// End (deliver and End run in one call for a node). An earlier
		// phase's vectors (a layer whose exchange goes on after the
		// release phase: the trust layer's events form) stay in the
		// receiver's inbox until a later call's End, so that phase keeps
		// the eager Rewrite, which makes each one in a buffer of its own.
		var lazy *adversary.Lazy
		var err error
		if last && !r.eagerCrafts {
			lazy, err = r.adv.RewriteLazy(round, g, outbox)
		} else {
			err = r.adv.Rewrite(round, g, outbox)
		}
		if err != nil {
			return nil, err
		}
		if err := traffic(g, outbox, lazy, rec); err != nil {
			if lazy != nil {
				_ = lazy.Close() // the run stops with err
			}
			return nil, err
		}
		memo := r.memos.Digests
		// With WireRoundTrip every link gets a new copy: nothing to share,
		// and an open memo would keep every copy alive until the phase ends.
		if memo != nil && !r.cfg.WireRoundTrip {
			memo.Open()
		}
		err = forEachWorker(n, r.workers, func(w, i int) error {
			if err := r.deliver(round, g, i, outbox, lazy, &r.crafts[w]); err != nil {
				return err
			}
			if !last {
				return nil
			}
			tc := time.Now()
			var err error
			ready[i], err = r.nodes[i].End(node.EndOptions{Keep: idle(i), Evaluate: rec.Evaluated, Global: r.cfg.Global})
			combineDur[i] = time.Since(tc)
			return err
		})
		if memo != nil {
			memo.Close() // also when not opened: it drops the senders' notes
		}
		if lazy != nil {
			// Every receiver has taken the phase: the adversary drops
			// what it kept for it (and settles a history-using attack's
			// views).
			if cerr := lazy.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return nil, err
		}
		if last {
			break
		}
	}

	// 3. The records: the nodes' Ready values with the ground truth.
	metrics.Record(rec, g, r.byz, ready)
	if r.cfg.Timings != nil {
		t := metrics.Timing{Round: round, Seconds: time.Since(t0).Seconds(), TrainSeconds: trainSecs}
		for i := range n {
			t.TrainNodeSeconds += trainDur[i].Seconds()
			t.CombineNodeSeconds += combineDur[i].Seconds()
		}
		r.cfg.Timings(t)
	}
	return rec, nil
}

// traffic adds each sender's bytes of the phase (metrics.Traffic), in a
// fixed order, with the adversary's vectors yet to be made (lazy may be
// nil): their sizes follow from their lengths.
func traffic(g *topology.Graph, outbox [][]*wire.Message, lazy *adversary.Lazy, rec *metrics.Round) error {
	for j, msgs := range outbox {
		bytes, claims, err := metrics.Traffic(g, j, msgs)
		if err != nil {
			return err
		}
		if lazy != nil {
			more, err := lazy.Bytes(j)
			if err != nil {
				return err
			}
			bytes += more
		}
		rec.Nodes[j].BytesSent += bytes
		rec.Nodes[j].ClaimBytes += claims
	}
	return nil
}

// deliver routes the phase's messages addressed to node i along its
// in-links, in sender order (each sender's in the order sent: the
// adversary's lazy vectors come last, as their numbers do), applying the
// link drops. A refused message is the node's business (its Ready counts
// it). The lazy vectors are made into bufs, the buffers of the worker
// delivering to i, which are free again once i has ended its round.
func (r *runner) deliver(round int, g *topology.Graph, i int, outbox [][]*wire.Message, lazy *adversary.Lazy, bufs *craftBufs) error {
	bufs.reset()
	for _, j := range g.In(i) {
		if r.cfg.Drops.Dropped(round, j, i) {
			continue
		}
		for _, m := range outbox[j] {
			if m.To != wire.Broadcast && m.To != uint32(i) {
				continue
			}
			if err := r.step(j, i, m); err != nil {
				return err
			}
		}
		if lazy == nil {
			continue
		}
		for _, p := range lazy.Links(j, i) {
			var buf []float32
			if !p.Shared() {
				buf = bufs.next(p.Len)
			}
			m, err := lazy.Make(p, buf)
			if err != nil {
				return err
			}
			if err := r.step(j, i, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// step hands node i message m from node j, through the wire with
// WireRoundTrip.
func (r *runner) step(j, i int, m *wire.Message) error {
	if r.cfg.WireRoundTrip {
		var err error
		if m, err = roundTrip(m); err != nil {
			return fmt.Errorf("wire round trip %d → %d: %w", j, i, err)
		}
	}
	_ = r.nodes[i].Step(m)
	return nil
}

// craftBufs are one worker's buffers for the adversary's lazily made
// vectors: one per crafted message the node it delivers to takes, reused
// for the next node (after the first's End), round after round. They grow
// to the most crafted messages one node takes in a phase (its Byzantine
// in-neighbours' vector messages), whatever the number of Byzantine nodes.
type craftBufs struct {
	bufs [][]float32
	used int
}

// reset makes every buffer free again.
func (c *craftBufs) reset() { c.used = 0 }

// next returns a free buffer of n values.
func (c *craftBufs) next(n int) []float32 {
	if c.used == len(c.bufs) {
		c.bufs = append(c.bufs, nil)
	}
	if cap(c.bufs[c.used]) < n {
		c.bufs[c.used] = make([]float32, n)
	}
	b := c.bufs[c.used][:n]
	c.used++
	return b
}

// roundTrip encodes and decodes a message as a network would.
func roundTrip(m *wire.Message) (*wire.Message, error) {
	b, err := wire.AppendEncode(nil, m)
	if err != nil {
		return nil, err
	}
	var out wire.Message
	if err := wire.Decode(b, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
