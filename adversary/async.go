package adversary

import (
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// Asynchronous timing (sim.Async) has no round in which every node sends:
// each Byzantine node's outbox is rewritten at its own step (RewriteAt),
// against the honest payloads known at that virtual time, which the
// driver hands in (each honest node's last sent vectors, in sender-id
// order: the omniscient adversary of asynchrony), or, for the adversary
// of one node process (Alone, whose attack is local), none. The attack's
// stream is (seed, sender, step, recipient), as in rounds with the step as
// round, so a node process crafts what the simulator's replay of its steps
// crafts.

// Stale makes each Byzantine node send, from step Step on, the vectors it
// sent at step Step (as the attack crafted them then), under fresh step
// numbers, sequence numbers and signatures: old models that pass every
// check of freshness (a node cannot tell an old model from a new one).
type Stale struct {
	On   bool
	Step int
}

// asyncState is what RewriteAt keeps between steps: each Byzantine node's
// step of its last numbering and its snapshot (Stale).
type asyncState struct {
	step []int
	snap [][]snapVec
}

// snapVec is one vector a Byzantine node sent at the snapshot step.
type snapVec struct {
	to   uint32
	tag  string
	data []float32
}

// RewriteAt rewrites Byzantine node b's outbox msgs of its asynchronous
// step, crafting against known (indexed by sender id: each honest node's
// newest vector messages known at this time; Byzantine entries are
// ignored). The view's Attackers and Senders are the coalition's size and
// the number of nodes, times b's vector messages of the tag (every node
// sends once per step), so alie's z_max is the synchronous one whatever
// number of honest vectors is known yet. A history-using
// attack reads as Previous the view of the Byzantine step before. It
// returns what b sends instead. Only vector messages are rewritten: the
// layers (claims, events, DP, secure aggregation) are not defined in
// asynchronous timing, and a message of another kind is an error. Before
// any honest vector of a tag is known (a Byzantine step that ends before
// every honest one), the node's own vectors of the tag go out as made, one
// per out-neighbour — except from an adversary of one node process
// (Alone): its attack needs no honest vector, and known holds none.
func (a *Adversary) RewriteAt(step int, g *topology.Graph, b int, msgs []*wire.Message, known [][]*wire.Message, stale Stale) ([]*wire.Message, error) {
	if b < 0 || b >= a.cfg.Nodes || !a.byz[b] || a.keys[b] == nil {
		return nil, fmt.Errorf("adversary: node %d is not a Byzantine node spoken for", b)
	}
	if a.lazy != nil {
		return nil, fmt.Errorf("adversary: RewriteAt while a round's lazy phase is open")
	}
	if len(known) != a.cfg.Nodes {
		return nil, fmt.Errorf("adversary: known messages of %d nodes, want %d", len(known), a.cfg.Nodes)
	}
	for _, m := range msgs {
		if m.Kind != wire.KindVector {
			return nil, fmt.Errorf("adversary: node %d step %d: a message of kind %v in asynchronous timing (only vectors are)", b, step, m.Kind)
		}
	}
	if a.async == nil {
		a.async = &asyncState{step: make([]int, a.cfg.Nodes), snap: make([][]snapVec, a.cfg.Nodes)}
		for i := range a.async.step {
			a.async.step[i] = -1
		}
	}
	var out []*wire.Message
	if a.cfg.Attack == nil {
		for _, m := range msgs {
			c := *m
			out = append(out, &c)
		}
	} else {
		honest, senders := a.honestByTag(known)
		own := map[string]int{}
		for _, m := range msgs {
			own[m.Payload.Tag]++
		}
		views := map[string]*attack.View{}
		viewOf := func(tag string) *attack.View {
			if v := views[tag]; v != nil {
				return v
			}
			v := &attack.View{Round: step, Honest: honest[tag], Attackers: own[tag] * len(a.cfg.Byzantine), Tag: tag,
				Senders: own[tag] * a.cfg.Nodes,
				From:    senders[tag], In: g.In}
			if a.prevViews != nil {
				v.Previous = a.prevViews[tag]
			}
			views[tag] = v
			return v
		}
		for _, l := range plannedAs(a.cfg.SameForAll, step, g, b, msgs, viewOf) {
			if len(honest[l.Tag]) == 0 && !a.alone {
				// No honest vector of the tag known yet (the Byzantine
				// node's step ended before any honest one): nothing to
				// craft against, the node's own vector goes out.
				out = append(out, &wire.Message{Header: l.Header, Payload: wire.Payload{Tag: l.Tag, Data: l.honest}})
				continue
			}
			var dst []float32
			if l.shared == nil {
				dst = make([]float32, l.Len)
			}
			data, err := a.craft(l, dst)
			if err != nil {
				return nil, err
			}
			out = append(out, &wire.Message{Header: l.Header, Payload: wire.Payload{Tag: l.Tag, Data: data}})
		}
		// Only views with honest payloads are history (as in rounds).
		for tag := range views {
			if len(honest[tag]) == 0 {
				delete(views, tag)
			}
		}
		a.settle(views)
	}
	if stale.On {
		a.staleAt(step, b, out, stale)
	}
	st := a.async
	if st.step[b] != step {
		st.step[b], a.seq[b] = step, 0
	}
	for _, m := range out {
		m.Round = uint64(step + a.cfg.Inflate)
		a.seq[b]++
		m.Seq = a.seq[b]
		if err := wire.SignNoted(m, a.keys[b], a.memo); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// staleAt keeps b's vectors of the snapshot step, and from then on puts
// them in place of the ones of the same recipient and tag (in order); a
// vector with none to match (another graph's recipient) goes out as made.
func (a *Adversary) staleAt(step, b int, out []*wire.Message, stale Stale) {
	st := a.async
	switch {
	case step == stale.Step:
		st.snap[b] = st.snap[b][:0]
		for _, m := range out {
			st.snap[b] = append(st.snap[b], snapVec{m.To, m.Payload.Tag, slices.Clone(m.Payload.Data)})
		}
	case step > stale.Step:
		used := make([]bool, len(st.snap[b]))
		for _, m := range out {
			for k, v := range st.snap[b] {
				if !used[k] && v.to == m.To && v.tag == m.Payload.Tag && len(v.data) == len(m.Payload.Data) {
					used[k] = true
					m.Payload.Data = v.data // read-only, like a broadcast payload
					break
				}
			}
		}
	}
}
