package sim

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// Async is the virtual clock of asynchronous timing (Config.Async): each
// node's time per step and each link's delay, drawn from the seed. The
// nodes must be built in asynchronous timing (node.Config.Async).
type Async struct {
	// Compute is a node's time per step (virtual seconds), drawn once per
	// node; Latency a directed link's delay, drawn once per link.
	Compute, Latency Dist
	// Stragglers is the fraction of nodes (rounded to nearest, chosen from
	// the seed) whose step takes Slowdown times their drawn time.
	Stragglers float64
	Slowdown   float64
	// Window is the virtual time each summary record (metrics.Round, its
	// Round the window's index) covers; 0 takes the compute distribution's
	// median times max(1, EvalEvery), known from the config alone.
	Window float64
	// Horizon, if positive, is the virtual time the run stops at: no node
	// begins a step that would end after it (otherwise each node takes
	// Config.Rounds steps, the fast ones finishing first).
	Horizon float64
	// Steps, if set, receives every node step's record, in virtual-time
	// order.
	Steps func(StepRecord) error
	// Log, if set, receives each node's events in the arrival log format
	// (ReplayEvent; T the virtual time): what Replay replays.
	Log func(node int, e ReplayEvent)
	// Flood and Stale are the Byzantine nodes' attacks of asynchrony
	// (asyncbyz.go).
	Flood float64
	Stale adversary.Stale
	// mailPeak, if set (tests), receives each mailbox's length when a
	// message joins it.
	mailPeak func(int)
}

// Dist is a distribution of a positive time: "constant" (A), "uniform"
// (on [A, B]) or "lognormal" (median A, log-scale spread B: A·e^{B·Z}).
type Dist struct {
	Kind string
	A, B float64
}

// DistKinds are the distributions Dist takes.
var DistKinds = []string{"constant", "uniform", "lognormal"}

// Check reports a distribution that is not one of DistKinds with positive
// times.
func (d Dist) Check() error {
	ok := d.A > 0 && !math.IsInf(d.A, 0)
	switch d.Kind {
	case "constant":
	case "uniform":
		ok = ok && d.B >= d.A && !math.IsInf(d.B, 0)
	case "lognormal":
		ok = ok && d.B >= 0 && d.B <= 10
	default:
		return fmt.Errorf("distribution %q (valid: constant, uniform, lognormal)", d.Kind)
	}
	if !ok {
		return fmt.Errorf("%s distribution with a = %v, b = %v: need 0 < a (uniform: a ≤ b; lognormal: 0 ≤ b ≤ 10), finite", d.Kind, d.A, d.B)
	}
	return nil
}

// Median is the distribution's median.
func (d Dist) Median() float64 {
	if d.Kind == "uniform" {
		return (d.A + d.B) / 2
	}
	return d.A
}

func (d Dist) draw(r *rand.Rand) float64 {
	switch d.Kind {
	case "uniform":
		return d.A + (d.B-d.A)*r.Float64()
	case "lognormal":
		return d.A * math.Exp(d.B*r.NormFloat64())
	}
	return d.A
}

// StepRecord is one node step of an asynchronous run: the node's record
// (metrics.NodeRound, its evaluation if the step evaluated), the virtual
// time the step ended, and how many inputs the strategy combined and how
// stale they were.
type StepRecord struct {
	Time float64 `json:"time"`
	Step int     `json:"step"`
	metrics.NodeRound
	Inputs int `json:"inputs"`
	// MaxStaleness and MeanStaleness are over the inputs combined (0
	// without any).
	MaxStaleness  int     `json:"max_staleness"`
	MeanStaleness float64 `json:"mean_staleness"`
	// Refused counts the step's refusals by reason (stale, superseded,
	// duplicate, ...), summed over senders (nil without any).
	Refused map[string]int `json:"refused,omitempty"`
}

// stepRecord is node step s's record, ended at time t: the node's record
// nr and, from its Ready, the inputs' staleness and the refusals by
// reason. The virtual clock and the replay of a log both make it.
func stepRecord(t float64, s int, nr metrics.NodeRound, rd node.Ready) StepRecord {
	sr := StepRecord{Time: t, Step: s, NodeRound: nr, Inputs: len(rd.Ages)}
	for _, a := range rd.Ages {
		sr.MaxStaleness = max(sr.MaxStaleness, a.Staleness)
		sr.MeanStaleness += float64(a.Staleness)
	}
	if len(rd.Ages) > 0 {
		sr.MeanStaleness /= float64(len(rd.Ages))
	}
	for _, r := range rd.Rejections {
		if sr.Refused == nil {
			sr.Refused = map[string]int{}
		}
		sr.Refused[r.Reason] += r.Count
	}
	return sr
}

// Schedule is the virtual clock an Async config and seed give n nodes:
// each node's step time and which nodes straggle. It depends on nothing
// else, so a run's order of events is fixed before any node computes.
type Schedule struct {
	Step      []float64
	Straggler []bool
	seed      uint64
	latency   Dist
}

// Stream tags of the clock's draws (mixed with the seed).
const (
	tagCompute   = 0x636f6d70 // "comp"
	tagStraggler = 0x73747267 // "strg"
	tagLatency   = 0x6c617465 // "late"
)

// NewSchedule draws the clock of n nodes.
func NewSchedule(a Async, n int, seed uint64) (*Schedule, error) {
	if err := a.Compute.Check(); err != nil {
		return nil, fmt.Errorf("sim: compute time: %w", err)
	}
	if err := a.Latency.Check(); err != nil {
		return nil, fmt.Errorf("sim: latency: %w", err)
	}
	if !(a.Stragglers >= 0 && a.Stragglers <= 1) || !(a.Slowdown >= 1) || math.IsInf(a.Slowdown, 0) {
		return nil, fmt.Errorf("sim: stragglers = %v, slowdown = %v: need 0 ≤ stragglers ≤ 1 and a finite slowdown ≥ 1", a.Stragglers, a.Slowdown)
	}
	s := &Schedule{Step: make([]float64, n), Straggler: make([]bool, n), seed: seed, latency: a.Latency}
	for i := range n {
		s.Step[i] = a.Compute.draw(stream(seed, tagCompute, uint64(i)))
	}
	k := int(math.Round(a.Stragglers * float64(n)))
	for _, i := range stream(seed, tagStraggler, 0).Perm(n)[:k] {
		s.Straggler[i] = true
		s.Step[i] *= a.Slowdown
	}
	return s, nil
}

// Latency is link j → i's delay: one draw of its own per link, so that it
// does not depend on which links are used first.
func (s *Schedule) Latency(j, i int) float64 {
	return s.latency.draw(stream(s.seed, tagLatency, uint64(j)<<32|uint64(uint32(i))))
}

// SyncRound is the virtual time a synchronous round takes on this clock
// over graph g: it ends when the slowest node has trained and its last
// message has arrived, so it is the largest step time plus out-link
// delay (a node without out-links counts its step alone).
func (s *Schedule) SyncRound(g *topology.Graph) float64 {
	round := 0.0
	for i := range g.N() {
		round = max(round, s.Step[i])
		for _, j := range g.Out(i) {
			round = max(round, s.Step[i]+s.Latency(i, j))
		}
	}
	return round
}

// Drift is how the step counters of nodes of different step times drift
// past a staleness bound (Schedule.Drift): staleness counts the
// receiver's steps, so a receiver faster than its in-neighbour sees the
// neighbour's models older by the step after step.
type Drift struct {
	// Slower is the number of links j → i whose sender is slower than
	// its receiver (and gets a model to it within its steps); Cut those
	// whose staleness passes the bound within the receiver's steps (from
	// then on it drops the sender's models).
	Slower, Cut int
	// Receiver, Sender, At and Steps are the link cut first, in its
	// receiver's steps: after about At of its Steps.
	Receiver, Sender, At, Steps int
	// Keep is the smallest bound that cuts no link.
	Keep int
}

// Drift estimates, on graph g (each node i taking steps[i] steps), which
// links a staleness bound cuts. A sender j slower than its receiver i
// (step times t_j > t_i) has its first model arrive at about i's step
// t_j/t_i, and link j → i's staleness at i's step k is then about
// k·(1 − t_i/t_j) + 1 (j's counter falls behind at the ratio of their
// step times, and its newest step is still in flight): the bound is
// passed after about max(t_j/t_i, (bound − 1)/(1 − t_i/t_j)) of i's
// steps. A sender none of whose models arrives within i's steps is not
// counted. Latencies are left out.
func (s *Schedule) Drift(g *topology.Graph, steps []int, bound int) Drift {
	var d Drift
	first := math.Inf(1)
	for i := range g.N() {
		for _, j := range g.In(i) {
			ti, tj := s.Step[i], s.Step[j]
			if j == i || !(tj > ti) || tj/ti >= float64(steps[i]) {
				continue
			}
			d.Slower++
			rate := 1 - ti/tj
			d.Keep = max(d.Keep, int(math.Ceil(float64(steps[i])*rate+1)))
			at := max(tj/ti, float64(bound-1)/rate)
			if at >= float64(steps[i]) {
				continue
			}
			d.Cut++
			if at < first {
				first = at
				d.Receiver, d.Sender, d.At, d.Steps = i, j, int(math.Ceil(at)), steps[i]
			}
		}
	}
	return d
}

// stream is a generator for (seed, tag, id), seeded through SplitMix64.
func stream(seed, tag, id uint64) *rand.Rand {
	a := mix(seed ^ mix(tag))
	return rand.New(rand.NewPCG(a, mix(a^mix(id+0x51ed2701))))
}

func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Events of the virtual clock: a message reaching its receiver, a node's
// local training done.
const (
	evArrive = iota
	evTrained
)

// event is one event; seq, the order of scheduling, breaks the ties of
// time, node and kind.
type event struct {
	t    float64
	node int
	kind int
	seq  uint64
	m    *wire.Message
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(a, b int) bool {
	x, y := &q[a], &q[b]
	switch {
	case x.t != y.t:
		return x.t < y.t
	case x.node != y.node:
		return x.node < y.node
	case x.kind != y.kind:
		return x.kind < y.kind // a message arriving as training ends is combined
	}
	return x.seq < y.seq
}
func (q eventQueue) Swap(a, b int) { q[a], q[b] = q[b], q[a] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// asyncRun is one asynchronous run.
type asyncRun struct {
	*runner
	a     Async
	sched *Schedule
	q     eventQueue
	seq   uint64
	// mail are the messages that reached each node while it trained, in
	// arrival order, Stepped in when its training ends (the node's state
	// Step reads does not change while it trains, so this is Step at
	// arrival, while its training runs on a worker).
	mail [][]*wire.Message
	// trained is each node's training of its current step, running.
	trained []chan error
	step    []int
	sem     chan struct{}
	// The summary windows: each node's latest record, the current
	// window's counts.
	window  float64
	next    int // the next window to close
	latest  []metrics.NodeRound
	evalled []bool
	bytes   []int
	rej     []int
	steps   []int
	// The Byzantine side (asyncbyz.go): each honest node's last sent
	// messages, the nodes done, the honest nodes not done.
	lastSent   [][]*wire.Message
	done       []bool
	honestLeft int
}

func (r *runner) runAsync(ctx context.Context, sink metrics.Sink) error {
	n := len(r.nodes)
	sched, err := NewSchedule(*r.cfg.Async, n, r.cfg.Seed)
	if err != nil {
		return err
	}
	if err := r.asyncByzantine(sched); err != nil {
		return err
	}
	a := *r.cfg.Async
	w := a.Window
	if w == 0 {
		w = a.Compute.Median() * float64(max(1, r.cfg.EvalEvery))
	}
	if !(w > 0) || math.IsInf(w, 0) {
		return fmt.Errorf("sim: window = %v, need > 0", w)
	}
	ar := &asyncRun{runner: r, a: a, sched: sched, mail: make([][]*wire.Message, n), trained: make([]chan error, n),
		step: make([]int, n), sem: make(chan struct{}, r.workers), window: w,
		latest: make([]metrics.NodeRound, n), evalled: make([]bool, n), bytes: make([]int, n), rej: make([]int, n), steps: make([]int, n),
		lastSent: make([][]*wire.Message, n), done: make([]bool, n), honestLeft: n - len(r.cfg.Adversary.Byzantine)}
	if a.Horizon < 0 || math.IsNaN(a.Horizon) || math.IsInf(a.Horizon, 0) {
		return fmt.Errorf("sim: horizon = %v, need ≥ 0 (0: none)", a.Horizon)
	}
	for i := range n {
		ar.latest[i] = metrics.NodeRound{Node: i}
		if err := ar.begin(i, 0); err != nil {
			return err
		}
		ar.push(event{t: sched.Step[i], node: i, kind: evTrained})
	}
	defer ar.drain()
	last := 0.0
	for ar.q.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := heap.Pop(&ar.q).(event)
		last = e.t
		if err := ar.closeWindows(e.t, sink); err != nil {
			return err
		}
		if e.kind == evArrive {
			if !ar.done[e.node] { // a node done takes nothing
				ar.post(e.node, e.m)
			}
			continue
		}
		if err := ar.trainedAt(e); err != nil {
			return err
		}
	}
	// The window of the last event closes too.
	return ar.closeWindows((math.Floor(last/ar.window)+1)*ar.window, sink)
}

func (ar *asyncRun) push(e event) {
	e.seq = ar.seq
	ar.seq++
	heap.Push(&ar.q, e)
}

// hoodAt is node i's neighbourhood in g (the graph of its step).
func hoodAt(g *topology.Graph, i int) node.Neighborhood {
	in := g.In(i)
	deg := make([]int, len(in))
	for k, j := range in {
		deg[k] = g.Degree(j)
	}
	return node.Neighborhood{In: in, InDegree: deg, Degree: g.Degree(i)}
}

// begin opens node i's step s and starts its training on a worker.
func (ar *asyncRun) begin(i, s int) error {
	ar.step[i] = s
	if err := ar.nodes[i].Begin(s, hoodAt(ar.cfg.Graph.At(s), i)); err != nil {
		return err
	}
	ar.log(i, ReplayEvent{Ev: "begin", Step: s})
	done := make(chan error, 1)
	ar.trained[i] = done
	go func() {
		ar.sem <- struct{}{}
		_, err := ar.nodes[i].Train(ar.ctx)
		<-ar.sem
		done <- err
	}()
	return nil
}

// log passes node i's event to Async.Log.
func (ar *asyncRun) log(i int, e ReplayEvent) {
	if ar.a.Log != nil {
		ar.a.Log(i, e)
	}
}

// drain waits for the trainings still running (a run stopped early).
func (ar *asyncRun) drain() {
	for i, c := range ar.trained {
		if c != nil {
			<-c
			ar.trained[i] = nil
		}
	}
}

// trainedAt ends node i's step when its training is done: the messages
// that reached it are stepped in, its model goes to its out-neighbours,
// it combines, and its next step begins.
func (ar *asyncRun) trainedAt(e event) error {
	i, s := e.node, ar.step[e.node]
	nd := ar.nodes[i]
	err := <-ar.trained[i]
	ar.trained[i] = nil
	if err != nil {
		return fmt.Errorf("node %d step %d: %w", i, s, err)
	}
	for _, m := range ar.mail[i] {
		ar.log(i, ReplayEvent{Ev: "take", From: int(m.From), Step: int(m.Round), Seq: m.Seq, T: e.t})
		_ = nd.Step(m) // a refusal is counted in the node's Ready
	}
	clear(ar.mail[i])
	ar.mail[i] = ar.mail[i][:0]
	out, more, err := nd.Outbox()
	if err != nil {
		return fmt.Errorf("node %d step %d: %w", i, s, err)
	}
	if more {
		return fmt.Errorf("node %d step %d: more than one exchange phase in asynchronous timing", i, s)
	}
	g := ar.cfg.Graph.At(s)
	if out, err = ar.sent(i, s, g, out); err != nil {
		return err
	}
	bytes, _, err := metrics.Traffic(g, i, out)
	if err != nil {
		return err
	}
	for _, j := range g.Out(i) {
		if ar.cfg.Drops.Dropped(s, i, j) {
			continue
		}
		for _, m := range out {
			if m.To != wire.Broadcast && m.To != uint32(j) {
				continue
			}
			if ar.cfg.WireRoundTrip {
				if m, err = roundTrip(m); err != nil {
					return fmt.Errorf("wire round trip %d → %d: %w", i, j, err)
				}
			}
			ar.push(event{t: e.t + ar.sched.Latency(i, j), node: j, kind: evArrive, m: m})
		}
	}
	evaluate := ar.evaluated(s) && s < ar.cfg.Rounds // a flooding node's later steps are not
	rd, err := nd.End(node.EndOptions{Evaluate: evaluate, Global: ar.cfg.Global})
	if err != nil {
		return fmt.Errorf("node %d step %d: %w", i, s, err)
	}
	ar.log(i, ReplayEvent{Ev: "end", Step: s, T: e.t})
	one := &metrics.Round{Evaluated: evaluate, Nodes: []metrics.NodeRound{{Node: i}}}
	metrics.Record(one, g, ar.byz, []node.Ready{rd})
	nr := one.Nodes[0]
	nr.Node, nr.Byzantine, nr.BytesSent = i, ar.byz[i], bytes
	if ar.a.Steps != nil {
		if err := ar.a.Steps(stepRecord(e.t, s, nr, rd)); err != nil {
			return fmt.Errorf("step records: %w", err)
		}
	}
	ar.note(i, nr)
	if next := e.t + ar.sched.Step[i]; ar.goesOn(i, s) && (ar.a.Horizon <= 0 || next <= ar.a.Horizon) {
		if err := ar.begin(i, s+1); err != nil {
			return err
		}
		ar.push(event{t: next, node: i, kind: evTrained})
	} else {
		ar.finish(i)
	}
	return nil
}

// note adds a node step to the open window.
func (ar *asyncRun) note(i int, nr metrics.NodeRound) {
	l := &ar.latest[i]
	if nr.Evaluated {
		l.LocalAcc, l.LocalLoss, l.GlobalAcc, l.GlobalLoss = nr.LocalAcc, nr.LocalLoss, nr.GlobalAcc, nr.GlobalLoss
		ar.evalled[i] = true
	}
	l.TrainLoss, l.Diverged, l.ByzWeight = nr.TrainLoss, nr.Diverged, nr.ByzWeight
	if nr.Epsilon != nil { // a DP node's ε after the steps it took
		l.Epsilon, l.Delta, l.Accountant, l.AccountantFallback = nr.Epsilon, nr.Delta, nr.Accountant, nr.AccountantFallback
	}
	ar.bytes[i] += nr.BytesSent
	ar.rej[i] += nr.Rejected
	ar.steps[i] += nr.Steps
}

// closeWindows sends the summary of every window that ends at or before
// t: each node's latest record, with the window's traffic, refusals and
// training steps; evaluated once every node has been.
func (ar *asyncRun) closeWindows(t float64, sink metrics.Sink) error {
	for {
		if float64(ar.next+1)*ar.window > t {
			return nil
		}
		rec := &metrics.Round{Round: ar.next, Evaluated: !slices.Contains(ar.evalled, false), Nodes: slices.Clone(ar.latest)}
		for i := range rec.Nodes {
			nr := &rec.Nodes[i]
			nr.Byzantine = ar.byz[i]
			nr.Evaluated = ar.evalled[i]
			nr.BytesSent, nr.Rejected, nr.Steps = ar.bytes[i], ar.rej[i], ar.steps[i]
		}
		clear(ar.bytes)
		clear(ar.rej)
		clear(ar.steps)
		rec.Summarize()
		if err := sink.Round(rec); err != nil {
			return fmt.Errorf("window %d: metrics sink: %w", ar.next, err)
		}
		ar.next++
	}
}
