package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/wire"
)

// Asynchronous timing in the cluster (Timing.Mode Async; the node built
// with node.Config.Async): no epoch, no barrier, no phase markers. Each
// node process loops over its own steps as fast as it trains: Begin(k),
// Train, Step every message that arrived since the last Step (in arrival
// order), Outbox (a Byzantine node's rewritten by its adversary,
// adversary.Adversary.RewriteAt, with a local attack and the stale attack
// of Run.Stale), send to the step's out-neighbours, End (combine), and
// push the step's Record to the monitor (Round = the step). The node
// itself checks senders, steps and staleness (node.Config.Async).
//
// Why the messages are stepped in after training rather than at arrival:
// the node is driven from one goroutine and its training does not read
// what Step changes (the pending inputs), while Step reads only what Begin
// set; so stepping in after training what arrived during it is Step at
// arrival, and it is the simulator's rule too (sim.Async). A message that
// arrives after the step's Step calls waits for the next step's.
//
// What the node takes is written, with NodeConfig.Arrivals, to a JSON
// lines file, the node's arrival log (ArrivalEvent): the order of the
// node's steps and of the messages it took. Given every node's log,
// sim.Replay drives freshly built nodes in that order and gets the same
// records and models, bit for bit (TestAsyncClusterReplaysInSimulator).
//
// With NodeConfig.StateDir the node writes its checkpoint after every
// step; restarted with Resume it goes on from the step after it, from
// the common start's clock (its horizon does not restart), and nobody
// waits for it meanwhile. The checkpoint keeps the newest step taken
// from each sender (node.Snapshot.Senders: a copy of an earlier message
// is refused after the restart as before it), not the inputs pending when
// the process died (lost, as messages to a dead process are). Its arrival
// log goes on with a "resume" event, which sim.Replay refuses: the lost
// inputs cannot be replayed.

// Async is the asynchronous timing mode: each node on its own steps.
const Async Mode = "async"

// ArrivalEvent is one line of a node's arrival log (JSON lines, written
// as the node runs): {"ev":"begin","step":k} when step k begins,
// {"ev":"take","from":j,"step":s,"seq":q} for node j's message of its
// step s with sequence number q, Stepped into the node (taken or refused
// by it), {"ev":"end","step":k} when step k ended (its Outbox sent, End
// called). T is the wall time since the node started, in seconds, for
// reading only (a replay ignores it). sim.Replay reads the same format.
type ArrivalEvent struct {
	Ev   string  `json:"ev"`
	From int     `json:"from,omitempty"`
	Step int     `json:"step"`
	Seq  uint64  `json:"seq,omitempty"`
	T    float64 `json:"t"`
}

// Arrival log event kinds.
const (
	EvBegin = "begin"
	EvTake  = "take"
	EvEnd   = "end"
	// EvResume (step: the first step after the checkpoint) is a restart
	// with Resume.
	EvResume = "resume"
)

// arrivalLog writes a node's arrival log; a nil one writes nothing.
type arrivalLog struct {
	f     *os.File
	w     *bufio.Writer
	enc   *json.Encoder
	start time.Time
	err   error
}

// openArrivalLog opens the log at path; resumed, it appends to it.
func openArrivalLog(path string, resumed bool) (*arrivalLog, error) {
	if path == "" {
		return nil, nil
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if resumed {
		flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, fmt.Errorf("arrival log: %w", err)
	}
	w := bufio.NewWriter(f)
	return &arrivalLog{f: f, w: w, enc: json.NewEncoder(w), start: time.Now()}, nil
}

func (l *arrivalLog) add(e ArrivalEvent) {
	if l == nil || l.err != nil {
		return
	}
	e.T = time.Since(l.start).Seconds()
	l.err = l.enc.Encode(e)
}

// close flushes the log (after every step, so a stopped node's log holds
// its finished steps) and, with final, closes it.
func (l *arrivalLog) flush(final bool) error {
	if l == nil {
		return nil
	}
	if err := l.w.Flush(); err != nil && l.err == nil {
		l.err = err
	}
	if final {
		if err := l.f.Close(); err != nil && l.err == nil {
			l.err = err
		}
	}
	return l.err
}

// runAsync is RunNode in asynchronous timing.
func (d *driver) runAsync(ctx context.Context) error {
	first := 0
	if d.cfg.Resume {
		var err error
		if first, err = d.resume(); err != nil {
			return err
		}
	}
	alog, err := openArrivalLog(d.cfg.Arrivals, d.cfg.Resume)
	if err != nil {
		return err
	}
	defer alog.flush(true)
	stopped, last := false, first-1
	defer func() { d.leave(last) }()
	// A common start: with Timing.Epoch every node begins its first step
	// then, so that none runs alone while the others still load.
	if !d.cfg.Epoch.IsZero() {
		timer := time.NewTimer(d.until(d.cfg.Epoch))
		select {
		case <-timer.C:
		case <-ctx.Done():
			stopped = true
		case <-d.cfg.Abort:
			stopped = true
		}
		timer.Stop()
	}
	// The clock of the horizon and of the records' wall times: the common
	// start, also for a node restarted after it.
	start := time.Now()
	if !d.cfg.Epoch.IsZero() {
		start = d.cfg.Epoch
	}
	if alog != nil {
		alog.start = start
		if d.cfg.Resume {
			alog.add(ArrivalEvent{Ev: EvResume, Step: first})
		}
	}
	for k := first; k < d.run.Rounds && !stopped; k++ {
		if ctx.Err() != nil || d.aborted() {
			stopped = true
			break
		}
		if d.cfg.Horizon > 0 && time.Since(start) >= d.cfg.Horizon {
			d.log.Info("horizon reached", "steps", k)
			break
		}
		rec, err := d.step(k, alog)
		if errors.Is(err, errAborted) {
			d.log.Warn("stopped at once: step dropped", "step", k)
			stopped = true
			break
		}
		if err != nil {
			return fmt.Errorf("node %d step %d: %w", d.id, k, err)
		}
		rec.Wall = time.Since(start).Seconds()
		if d.cfg.Resume && k == first {
			rec.ResumedAfter = first // the checkpoint's step + 1
		}
		if err := alog.flush(false); err != nil {
			return fmt.Errorf("node %d: %w", d.id, err)
		}
		if err := d.push(rec); err != nil {
			return err
		}
		last = k
		if d.cfg.StateDir != "" {
			if err := d.checkpoint(k); err != nil {
				return fmt.Errorf("node %d step %d: checkpoint: %w", d.id, k, err)
			}
		}
	}
	if err := alog.flush(true); err != nil {
		return fmt.Errorf("node %d: %w", d.id, err)
	}
	if d.cfg.Export != "" && !d.aborted() {
		if err := d.export(); err != nil {
			return fmt.Errorf("node %d: exporting the model: %w", d.id, err)
		}
	}
	if err := d.push(&Record{Node: d.id, Round: -1, Done: true}); err != nil {
		return err
	}
	if stopped {
		d.log.Info("stopped: left the run", "after_step", last)
		return fmt.Errorf("node %d: %w (after step %d)", d.id, ErrStopped, last)
	}
	return nil
}

// step runs the node's step k.
func (d *driver) step(k int, alog *arrivalLog) (*Record, error) {
	t0 := time.Now()
	g := d.run.Graph.At(k)
	in := g.In(d.id)
	deg := make([]int, len(in))
	for i, j := range in {
		deg[i] = g.Degree(j)
	}
	rec := &Record{Node: d.id, Round: k}
	if err := d.n.Begin(k, node.Neighborhood{In: in, InDegree: deg, Degree: g.Degree(d.id)}); err != nil {
		return nil, err
	}
	alog.add(ArrivalEvent{Ev: EvBegin, Step: k})
	if _, err := d.n.Train(d.abortCtx); err != nil && !errors.Is(err, nn.ErrStopped) && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	if d.aborted() {
		return nil, errAborted
	}
	rec.TrainSeconds = time.Since(t0).Seconds()
	for _, m := range d.in.takeArrivals() {
		alog.add(ArrivalEvent{Ev: EvTake, From: int(m.From), Step: int(m.Round), Seq: m.Seq})
		_ = d.n.Step(m) // a refusal is counted in Ready
	}
	out, more, err := d.n.Outbox()
	if err != nil {
		return nil, err
	}
	if more {
		return nil, errors.New("more than one exchange phase in asynchronous timing")
	}
	if d.adv != nil {
		// A Byzantine node sends what its adversary crafts from its own
		// step (a local attack: no honest vector is known to it).
		if out, err = d.adv.RewriteAt(k, g, d.id, out, make([][]*wire.Message, d.run.Nodes), d.run.Stale); err != nil {
			return nil, err
		}
	}
	b, cb, err := metrics.Traffic(g, d.id, out)
	if err != nil {
		return nil, err
	}
	rec.BytesSent, rec.ClaimBytes = b, cb
	if err := d.sendAsync(k, g.Out(d.id), out); err != nil {
		return nil, err
	}
	rd, err := d.n.End(node.EndOptions{Evaluate: metrics.Evaluated(k, d.run.Rounds, d.run.EvalEvery), Global: d.cfg.Global})
	if err != nil {
		return nil, err
	}
	alog.add(ArrivalEvent{Ev: EvEnd, Step: k})
	rec.Ready = rd
	rec.RoundSeconds = time.Since(t0).Seconds()
	return rec, nil
}

// sendAsync puts step k's messages on its out-links (as send, without
// phase markers: nobody waits for them).
func (d *driver) sendAsync(k int, outs []int, out []*wire.Message) error {
	for _, m := range out {
		b, err := wire.AppendEncode(nil, m)
		if err != nil {
			return err
		}
		for _, to := range outs {
			if to == d.id || d.run.Drops.Dropped(k, d.id, to) || (m.To != wire.Broadcast && m.To != uint32(to)) {
				continue
			}
			p := d.peer(to)
			ok := p != nil && p.Send(b) // a full queue drops (counted by the Pusher)
			d.cfg.Metrics.sent(len(b), true, ok)
		}
	}
	return nil
}
