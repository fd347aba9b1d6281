package sim

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/internal/seed"
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
	// Byzantine lists the adversary's nodes (see ChooseByzantine); Attack
	// crafts what they send (nil: they send their honest payloads).
	Byzantine []int
	Attack    attack.Attack
	// SameForAll makes each Byzantine message one crafted vector sent to
	// every recipient, from the attack's stream for (seed, sender, round),
	// instead of one per recipient (LIGHTYEAR's malfunctions,
	// spec/lightyear.md).
	SameForAll bool
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
	// ByzantineIdle: Byzantine nodes neither train nor combine (spec/dmtt.md,
	// "Attack": "Byzantine nodes do not train"); what they send is their
	// initial model as the attack crafts it, plus their claims.
	ByzantineIdle bool
	// Claims is what Byzantine nodes do with topology claims (nodes with a
	// trust layer only); the zero value sends them as the node made them.
	Claims ClaimAttack
	// DigestMemo, if set, is the memo the nodes' validators share
	// (node.Config.DigestMemo): the driver opens it for each delivery phase,
	// after the adversary has replaced its messages, and closes it once
	// every node has taken the phase's messages, so a broadcast is hashed
	// once rather than once per receiver. Not with WireRoundTrip, where
	// every link decodes its own copy, as a network would. Senders note
	// the digests they sign in it (wire.SignNoted); the driver closes it
	// after every phase, with WireRoundTrip too, to drop those notes.
	// Results are the same without it.
	DigestMemo *wire.DigestMemo
}

// ChooseByzantine picks k = max(1, round(n·fraction)) nodes from the seed
// (none when fraction is 0), sorted (spec/dmtt.md, "Attack").
func ChooseByzantine(n int, fraction float64, s uint64) ([]int, error) {
	if !(fraction >= 0 && fraction < 1) {
		return nil, fmt.Errorf("byzantine fraction %v outside [0, 1)", fraction)
	}
	if fraction == 0 {
		return nil, nil
	}
	k := max(1, int(math.Round(float64(n)*fraction)))
	ids := seed.Stream(s, seed.Byzantine).Perm(n)[:k]
	slices.Sort(ids)
	return ids, nil
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
	r.ctx = context.WithoutCancel(ctx) // a round, once begun, finishes
	for round := 0; round < cfg.Rounds; round++ {
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
	// prevViews are last round's settled adversary views, by tag, for
	// attacks that read history (attack.UsesPrevious).
	prevViews map[string]*attack.View
	// lastClaims are the Byzantine nodes' own claims of the previous
	// round, for ClaimAttack.Replay.
	lastClaims map[int]wire.Claim
	// trainCost is each node's expected training time, for scheduling
	// only: its training samples before the first round, then the time
	// its last round's training took.
	trainCost []float64
	// seq is the last sequence number each Byzantine node's messages got
	// this round (over its exchange phases).
	seq []uint64
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
	if err := cfg.Claims.Validate(); err != nil {
		return nil, err
	}
	byz := make([]bool, n)
	for _, b := range cfg.Byzantine {
		if b < 0 || b >= n {
			return nil, fmt.Errorf("sim: Byzantine node %d outside [0, %d)", b, n)
		}
		byz[b] = true
	}
	for i, nd := range nodes {
		if nd.ID() != i {
			return nil, fmt.Errorf("sim: node at index %d has id %d", i, nd.ID())
		}
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
	return &runner{cfg: cfg, nodes: nodes, byz: byz, workers: w, trainCost: cost}, nil
}

func (r *runner) evaluated(round int) bool { return Evaluated(round, r.cfg.Rounds, r.cfg.EvalEvery) }

// Evaluated reports whether the simulator evaluates round (0-based) of
// rounds with Config.EvalEvery = every: every every-th round and the last.
func Evaluated(round, rounds, every int) bool {
	return every <= 1 || (round+1)%every == 0 || round == rounds-1
}

// Evaluations is how many of rounds rounds the simulator evaluates with
// Config.EvalEvery = every: every every-th round and the last.
func Evaluations(rounds, every int) int {
	if every <= 1 {
		return rounds
	}
	return (rounds + every - 1) / every
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
	clear(r.seq)
	for {
		outbox := make([][]*wire.Message, n)
		more := make([]bool, n)
		if err := forEach(n, r.workers, func(i int) (err error) {
			outbox[i], more[i], err = r.nodes[i].Outbox()
			return err
		}); err != nil {
			return nil, err
		}
		if err := r.adversary(round, g, outbox); err != nil {
			return nil, err
		}
		if err := traffic(g, outbox, rec); err != nil {
			return nil, err
		}
		// All nodes run the same layers, so they agree on the phases.
		last := !slices.Contains(more, true)
		memo := r.cfg.DigestMemo
		// With WireRoundTrip every link gets a new copy: nothing to share,
		// and an open memo would keep every copy alive until the phase ends.
		if memo != nil && !r.cfg.WireRoundTrip {
			memo.Open()
		}
		err := forEach(n, r.workers, func(i int) error {
			if err := r.deliver(round, g, i, outbox); err != nil {
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
		if err != nil {
			return nil, err
		}
		if last {
			break
		}
	}

	// 3. The records: the nodes' Ready values with the ground truth.
	Record(rec, g, r.byz, ready)
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

// traffic adds each sender's bytes of the phase (Traffic), in a fixed
// order.
func traffic(g *topology.Graph, outbox [][]*wire.Message, rec *metrics.Round) error {
	for j, msgs := range outbox {
		bytes, claims, err := Traffic(g, j, msgs)
		if err != nil {
			return err
		}
		rec.Nodes[j].BytesSent += bytes
		rec.Nodes[j].ClaimBytes += claims
	}
	return nil
}

// Traffic is what node j's messages msgs put on the links of the round's
// graph g: the encoded size of every message once per link it is put on,
// dropped or not, and the part of it that carried topology claims (whole
// lists, or edge events in the events claim form).
func Traffic(g *topology.Graph, j int, msgs []*wire.Message) (bytes, claimBytes int, err error) {
	for _, m := range msgs {
		size, err := wire.EncodedSize(m)
		if err != nil {
			return 0, 0, fmt.Errorf("node %d: %w", j, err)
		}
		links := 1
		if m.To == wire.Broadcast {
			links = len(g.Out(j))
		}
		bytes += size * links
		if m.Kind == wire.KindClaim || m.Kind == wire.KindEvent { // edge events are claims too
			claimBytes += size * links
		}
	}
	return bytes, claimBytes, nil
}

// deliver routes the phase's messages addressed to node i along its
// in-links, in sender order (each sender's in the order sent), applying
// the link drops. A refused message is the node's business (its Ready
// counts it).
func (r *runner) deliver(round int, g *topology.Graph, i int, outbox [][]*wire.Message) error {
	for _, j := range g.In(i) {
		if r.cfg.Drops.Dropped(round, j, i) {
			continue
		}
		for _, m := range outbox[j] {
			if m.To != wire.Broadcast && m.To != uint32(i) {
				continue
			}
			if r.cfg.WireRoundTrip {
				var err error
				if m, err = roundTrip(m); err != nil {
					return fmt.Errorf("wire round trip %d → %d: %w", j, i, err)
				}
			}
			_ = r.nodes[i].Step(m)
		}
	}
	return nil
}

// byzWeight sums the weights given to Byzantine senders in sender-id order,
// so the metric is bit-reproducible (map order is random); ids a strategy
// made up are ignored.
func byzWeight(w map[int]float64, byz []bool) float64 {
	ids := make([]int, 0, len(w))
	for id := range w {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var s float64
	for _, id := range ids {
		if id >= 0 && id < len(byz) && byz[id] {
			s += w[id]
		}
	}
	return s
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
