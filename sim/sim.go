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
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
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
	Timings func(Timing)
	// ByzantineIdle: Byzantine nodes neither train nor combine (spec/dmtt.md,
	// "Attack": "Byzantine nodes do not train"); what they send is their
	// initial model as the attack crafts it, plus their claims.
	ByzantineIdle bool
	// Claims is what Byzantine nodes do with topology claims (nodes with a
	// trust layer only); the zero value sends them as the node made them.
	Claims ClaimAttack
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
func Run(ctx context.Context, cfg Config, nodes []*node.Node, sink Sink) error {
	r, err := newRunner(cfg, nodes)
	if err != nil {
		return err
	}
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
	return &runner{cfg: cfg, nodes: nodes, byz: byz, workers: w}, nil
}

func (r *runner) evaluated(round int) bool {
	k := r.cfg.EvalEvery
	return k <= 1 || (round+1)%k == 0 || round == r.cfg.Rounds-1
}

// Evaluations is how many of rounds rounds the simulator evaluates with
// Config.EvalEvery = every: every every-th round and the last.
func Evaluations(rounds, every int) int {
	if every <= 1 {
		return rounds
	}
	return (rounds + every - 1) / every
}

func (r *runner) round(round int) (*Round, error) {
	t0 := time.Now()
	n := len(r.nodes)
	g := r.cfg.Graph.At(round)
	rec := &Round{Round: round, Evaluated: r.evaluated(round), Nodes: make([]NodeRound, n)}
	trainDur, combineDur := make([]time.Duration, n), make([]time.Duration, n)

	// 1. Local training.
	err := forEach(n, r.workers, func(i int) error {
		defer func(t time.Time) { trainDur[i] = time.Since(t) }(time.Now())
		in := g.In(i)
		deg := make([]int, len(in))
		for k, j := range in {
			deg[k] = g.Degree(j)
		}
		hood := node.Neighborhood{In: in, InDegree: deg, Degree: g.Degree(i)}
		rec.Nodes[i] = NodeRound{Node: i, Byzantine: r.byz[i]}
		if r.byz[i] && r.cfg.ByzantineIdle {
			return r.nodes[i].Begin(round, hood)
		}
		res, err := r.nodes[i].Train(round, hood)
		rec.Nodes[i].TrainLoss, rec.Nodes[i].Steps = res.MeanLoss, res.Steps
		return err
	})
	if err != nil {
		return nil, err
	}
	trainSecs := time.Since(t0).Seconds()

	// 2. Share.
	outbox := make([][]*wire.Message, n)
	if err := forEach(n, r.workers, func(i int) (err error) {
		outbox[i], err = r.nodes[i].Outbox()
		return err
	}); err != nil {
		return nil, err
	}

	// 3. The adversary replaces its nodes' messages, per recipient.
	if err := r.adversary(round, g, outbox); err != nil {
		return nil, err
	}

	// 4. Traffic, per sender, in a fixed order.
	for j, msgs := range outbox {
		for _, m := range msgs {
			size, err := wire.EncodedSize(m)
			if err != nil {
				return nil, fmt.Errorf("node %d: %w", j, err)
			}
			links := 1
			if m.To == wire.Broadcast {
				links = len(g.Out(j))
			}
			rec.Nodes[j].BytesSent += size * links
			if m.Kind == wire.KindClaim {
				rec.Nodes[j].ClaimBytes += size * links
			}
		}
	}
	before := r.trustStats()

	// 5. Routing and validation, then combination, per receiver.
	weights := make([]map[int]float64, n)
	if err := forEach(n, r.workers, func(i int) error {
		rejected := 0
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
				if r.nodes[i].Deliver(m) != nil {
					rejected++
				}
			}
		}
		rec.Nodes[i].Rejected = rejected
		if r.byz[i] && r.cfg.ByzantineIdle {
			return r.nodes[i].Settle()
		}
		var err error
		tc := time.Now()
		weights[i], err = r.nodes[i].Combine()
		combineDur[i] = time.Since(tc)
		if sr, ok := r.nodes[i].Strategy().(strategy.ScoreReporter); ok && err == nil {
			for _, s := range sr.Scores() {
				byz := s.From >= 0 && s.From < n && r.byz[s.From]
				rec.Nodes[i].Scores = append(rec.Nodes[i].Scores, Score{From: s.From, Byzantine: byz, Kind: s.Kind, Value: s.Value})
			}
		}
		return err
	}); err != nil {
		return nil, err
	}
	for i, w := range weights {
		rec.Nodes[i].ByzWeight = byzWeight(w, r.byz)
	}
	rec.Trust = r.trustRound(g, before, rec)

	// 6. Evaluation.
	if rec.Evaluated {
		if err := forEach(n, r.workers, func(i int) error {
			ev, err := r.nodes[i].Evaluate(r.cfg.Global)
			nr := &rec.Nodes[i]
			nr.Evaluated = true
			nr.LocalAcc, nr.LocalLoss = ev.Local.Accuracy, ev.Local.Loss
			nr.GlobalAcc, nr.GlobalLoss = ev.Global.Accuracy, ev.Global.Loss
			return err
		}); err != nil {
			return nil, err
		}
	}
	rec.summarize()
	if r.cfg.Timings != nil {
		t := Timing{Round: round, Seconds: time.Since(t0).Seconds(), TrainSeconds: trainSecs}
		for i := range n {
			t.TrainNodeSeconds += trainDur[i].Seconds()
			t.CombineNodeSeconds += combineDur[i].Seconds()
		}
		r.cfg.Timings(t)
	}
	return rec, nil
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
