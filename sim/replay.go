package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/wire"
)

// Replay is the asynchronous simulator with the order of events taken
// from recorded arrival logs instead of the virtual clock: the logs a
// deployed asynchronous run's node processes wrote (the cluster's
// arrival log, one JSON object a line, ReplayEvent). Node i's log says
// when its steps began and ended and which messages (sender, sender's
// step, sequence number) it Stepped in between, in order; Replay drives
// the nodes through exactly that: Begin and Train at "begin", Step of
// the sender's message at "take", Outbox and End at "end" — the calls the
// cluster's driver made, in its order. A Byzantine node's outbox is
// rewritten as its process rewrote it: by an adversary of its own
// (adversary.Alone, a local attack whose stream comes from the seed,
// with the stale attack of cfg.Async.Stale).
//
// A node's calls depend only on its own log and on the messages it is
// handed, and a message is its sender's Outbox of that step; so the
// nodes are advanced one after the other, each as far as the messages
// already produced let it, and the order in which they are advanced
// changes nothing. A log that takes a message its sender never sent (or
// a cycle of waits) is an error.

// ReplayEvent is one line of an arrival log: Ev "begin" or "end" of the
// node's step Step, or "take" of node From's message of its step Step with
// sequence number Seq. T (wall time) is read and ignored.
type ReplayEvent struct {
	Ev   string  `json:"ev"`
	From int     `json:"from,omitempty"`
	Step int     `json:"step"`
	Seq  uint64  `json:"seq,omitempty"`
	T    float64 `json:"t"`
}

// ReadReplayLog reads an arrival log, refusing unknown fields and kinds,
// and the log of a node restarted from a checkpoint.
func ReadReplayLog(r io.Reader) ([]ReplayEvent, error) {
	var out []ReplayEvent
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		var e ReplayEvent
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("arrival log line %d: %w", line, err)
		}
		if e.Ev == "resume" {
			return nil, fmt.Errorf("arrival log line %d: the node was restarted from its checkpoint before its step %d (--resume): the inputs it held when it stopped were lost with the process, so a run with a restart cannot be replayed", line, e.Step)
		}
		if e.Ev != "begin" && e.Ev != "take" && e.Ev != "end" {
			return nil, fmt.Errorf("arrival log line %d: event %q (want begin, take or end)", line, e.Ev)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// sentKey is a sender's step.
type sentKey struct{ from, step int }

// Replay drives nodes (built in asynchronous timing, as for Run) in the
// order of logs (logs[i] node i's), and sends every step's record to
// steps, each node's in its order (Time is the wall time the log gives
// the step's end). cfg's Graph, Drops, Rounds,
// EvalEvery, Global and Identities are used; every message goes through
// the wire encoding, as it did between the processes.
func Replay(ctx context.Context, cfg Config, nodes []*node.Node, logs [][]ReplayEvent, steps func(StepRecord) error) error {
	if cfg.Async == nil {
		return fmt.Errorf("sim: a replay is of asynchronous timing: cfg.Async must be set (its clock is not used)")
	}
	r, err := newRunner(cfg, nodes)
	if err != nil {
		return err
	}
	r.ctx = context.WithoutCancel(ctx)
	n := len(nodes)
	if len(logs) != n {
		return fmt.Errorf("sim: replay of %d logs for %d nodes", len(logs), n)
	}
	// A Byzantine node process rewrote its outbox with its own adversary
	// (adversary.Alone: a local attack, its stream from the seed); so does
	// the replay.
	advs := map[int]*adversary.Adversary{}
	for _, b := range cfg.Adversary.Byzantine {
		if cfg.Async.Flood > 0 {
			return fmt.Errorf("sim: a replay of flooding Byzantine nodes: a node process does not flood")
		}
		if advs[b], err = adversary.Alone(cfg.Adversary, b, cfg.Identities[b]); err != nil {
			return fmt.Errorf("sim: replay: %w", err)
		}
	}
	sent := map[sentKey][]*wire.Message{}
	pos := make([]int, n)
	cur := make([]int, n) // the step open at each node, -1 none
	for i := range cur {
		cur[i] = -1
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		progress, done := false, true
		for i := range n {
			for pos[i] < len(logs[i]) {
				e := logs[i][pos[i]]
				ok, err := r.replayEvent(i, e, cur, sent, advs[i], steps)
				if err != nil {
					return fmt.Errorf("sim: replay of node %d, event %d (%s of step %d): %w", i, pos[i]+1, e.Ev, e.Step, err)
				}
				if !ok {
					break // waits for a message not yet sent
				}
				pos[i]++
				progress = true
			}
			if pos[i] < len(logs[i]) {
				done = false
			}
		}
		if done {
			return nil
		}
		if !progress {
			for i := range n {
				if pos[i] < len(logs[i]) {
					e := logs[i][pos[i]]
					return fmt.Errorf("sim: replay stuck: node %d takes node %d's message of step %d, which no node's log sends before it", i, e.From, e.Step)
				}
			}
		}
	}
}

// replayEvent applies node i's event e (adv: node i's adversary, nil for
// an honest node); false if it must wait for a message not yet sent.
func (r *runner) replayEvent(i int, e ReplayEvent, cur []int, sent map[sentKey][]*wire.Message, adv *adversary.Adversary, steps func(StepRecord) error) (bool, error) {
	nd := r.nodes[i]
	switch e.Ev {
	case "begin":
		if cur[i] >= 0 || e.Step < 0 || e.Step >= r.cfg.Rounds {
			return false, fmt.Errorf("a step begins at step %d of %d (step %d open)", e.Step, r.cfg.Rounds, cur[i])
		}
		cur[i] = e.Step
		if err := nd.Begin(e.Step, hoodAt(r.cfg.Graph.At(e.Step), i)); err != nil {
			return false, err
		}
		_, err := nd.Train(r.ctx)
		return true, err
	case "take":
		if cur[i] < 0 {
			return false, fmt.Errorf("a message taken outside a step")
		}
		msgs, ok := sent[sentKey{e.From, e.Step}]
		if !ok {
			return false, nil
		}
		for _, m := range msgs {
			if m.Seq == e.Seq && (m.To == wire.Broadcast || m.To == uint32(i)) {
				c, err := roundTrip(m)
				if err != nil {
					return false, err
				}
				_ = nd.Step(c) // a refusal is counted in the node's Ready
				return true, nil
			}
		}
		return false, fmt.Errorf("node %d sent no message %d to node %d in its step %d", e.From, e.Seq, i, e.Step)
	case "end":
		s := cur[i]
		if s != e.Step {
			return false, fmt.Errorf("step %d ends while step %d is open", e.Step, s)
		}
		out, more, err := nd.Outbox()
		if err != nil {
			return false, err
		}
		if more {
			return false, fmt.Errorf("more than one exchange phase in asynchronous timing")
		}
		g := r.cfg.Graph.At(s)
		if adv != nil {
			if out, err = adv.RewriteAt(s, g, i, out, make([][]*wire.Message, len(r.nodes)), r.cfg.Async.Stale); err != nil {
				return false, err
			}
		}
		traffic, _, err := metrics.Traffic(g, i, out)
		if err != nil {
			return false, err
		}
		// Copies, as the wire carried them: the sender's buffers are its
		// own again after its next step.
		kept := make([]*wire.Message, len(out))
		for k, m := range out {
			if kept[k], err = roundTrip(m); err != nil {
				return false, err
			}
		}
		// Keyed by the step the messages carry: a Byzantine node's may
		// claim another (adversary.Config.Inflate), and the receivers'
		// logs name that one.
		for _, m := range kept {
			k := sentKey{i, int(m.Round)}
			sent[k] = append(sent[k], m)
		}
		evaluate := r.evaluated(s)
		rd, err := nd.End(node.EndOptions{Evaluate: evaluate, Global: r.cfg.Global})
		if err != nil {
			return false, err
		}
		one := &metrics.Round{Evaluated: evaluate, Nodes: []metrics.NodeRound{{Node: i}}}
		metrics.Record(one, g, r.byz, []node.Ready{rd})
		nr := one.Nodes[0]
		nr.Node, nr.Byzantine, nr.BytesSent = i, r.byz[i], traffic
		sr := stepRecord(e.T, s, nr, rd)
		cur[i] = -1
		if steps != nil {
			if err := steps(sr); err != nil {
				return false, fmt.Errorf("step records: %w", err)
			}
		}
		return true, nil
	}
	return false, fmt.Errorf("event %q", e.Ev)
}
