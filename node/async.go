package node

import (
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// Asynchronous timing (Config.Async): the third way to drive a node,
// besides the simulator's and the cluster's rounds. There is no global
// round. The node runs its own loop of steps, each the calls of a round —
// Begin(step, hood), Train, Outbox, End — with its step counter in place
// of the round: it trains, sends its model to its out-neighbours with the
// step in the messages' round field, and combines what arrived since its
// last combine (with Async.Latest, every in-neighbour's newest model).
// Step may come at any time, also between End and the next
// Begin. What the node checks itself, as in synchronous rounds and before
// any signature is verified: the sender is one of the current
// neighbourhood's in-neighbours, the kind and size are ones the node takes;
// then, per sender, the newest step wins:
//
//   - a message of an older step than the sender's newest one taken is
//     refused (ReasonSuperseded), one of the same step with a sequence
//     number not above the last taken is a copy (ReasonDuplicate);
//   - a message older than MaxStaleness of the node's own steps (its step
//     minus the sender's) is dropped (ReasonStale), on arrival and again
//     at End, so none ever reaches the strategy;
//   - the validator then checks signature, recipient, length and
//     finiteness, with the message's own step as its round;
//   - an accepted message of a newer step replaces the sender's pending
//     set; one of the same step joins it (a strategy sending several
//     vectors a step), within heldMessageBytes of the largest message.
//
// So a node holds at most one pending set per in-neighbour, each bounded
// in bytes, whatever a sender floods it with. End hands the strategy the
// pending sets, sorted by sender, each vector with its staleness
// (strategy.Incoming.Staleness: the node's step minus the sender's, never
// negative), and forgets them. Of the layers, only the Stepwise ones are
// defined for asynchronous steps (DP's: each step is one release, charged
// to the node's accountant, so a node's ε grows with the steps it takes);
// New refuses the others (topology trust, secure aggregation), as it
// refuses a strategy not defined for asynchronous inputs
// (strategy.Asynchronous).

// Async configures asynchronous timing.
type Async struct {
	// MaxStaleness is the largest staleness, in the node's own steps, of
	// an input the strategy may see.
	MaxStaleness int
	// Latest keeps each sender's newest set past the step that combined
	// it: every step combines every in-neighbour's newest model (AD-PSGD's
	// rule) with its staleness growing, until a newer step replaces it or
	// it passes MaxStaleness. Without it a step combines only what arrived
	// since the last (FedAsync's rule).
	Latest bool
}

// Reasons of the asynchronous checks' refusals (Ready.Rejections).
const (
	ReasonSuperseded = "superseded" // a step older than the sender's newest taken
	ReasonStale      = "stale"      // older than Async.MaxStaleness of the node's steps
)

// asyncState is what an asynchronous node keeps of its senders.
type asyncState struct {
	max     int
	latest  bool // Async.Latest
	senders map[uint32]*asyncSender
	ids     []uint32 // End's scratch
}

// asyncSender is the newest step taken from one sender and its pending
// messages (not yet combined).
type asyncSender struct {
	step, seq uint64
	set       []held
}

func newAsync(cfg Config) (*asyncState, error) {
	a := cfg.Async
	switch {
	case a.MaxStaleness < 0:
		return nil, fmt.Errorf("node %d: asynchronous max_staleness = %d, need ≥ 0", cfg.ID, a.MaxStaleness)
	case !strategy.Asynchronous(cfg.Strategy):
		return nil, fmt.Errorf("node %d: strategy %s is not defined for asynchronous inputs (those that are: %s)", cfg.ID, cfg.Strategy.Name(), strategy.AsyncNames())
	}
	for _, l := range cfg.Layers {
		if _, ok := l.(Stepwise); !ok {
			return nil, fmt.Errorf("node %d: layer %s in asynchronous timing: it needs its peers' messages of one round, and steps have none (the layers defined for asynchronous steps are DP's)", cfg.ID, l.Name())
		}
	}
	return &asyncState{max: a.MaxStaleness, latest: a.Latest, senders: map[uint32]*asyncSender{}}, nil
}

// age is how many of the node's steps a message of step s is behind.
func (n *Node) age(s uint64) int {
	if !n.rs.begun || s >= uint64(n.rs.r) {
		return 0
	}
	return int(min(uint64(n.rs.r)-s, 1<<31))
}

// stepAsync is Step in asynchronous timing.
func (n *Node) stepAsync(m *wire.Message) error {
	rs, in, a := &n.rs, &n.rs.in, n.async
	if !inHood(rs.hood, m.From) {
		n.reject(m.From, ReasonNotNeighbor)
		return fmt.Errorf("node %d step %d: a message from node %d, not an in-neighbour: dropped", n.cfg.ID, rs.r, m.From)
	}
	content, ok := n.measure(m)
	if !ok {
		return n.misfit(m, content, ReasonWrongSize)
	}
	if now, _, reason := in.fit(m.Kind, content, 0); !now {
		return n.misfit(m, content, reason)
	}
	s := a.senders[m.From]
	switch {
	case s != nil && m.Round < s.step:
		n.reject(m.From, ReasonSuperseded)
		return fmt.Errorf("node %d: node %d's message of step %d after its step %d: dropped", n.cfg.ID, m.From, m.Round, s.step)
	case s != nil && m.Round == s.step && m.Seq <= s.seq:
		n.reject(m.From, ReasonDuplicate)
		return fmt.Errorf("node %d: node %d's message %d of step %d, already taken: dropped", n.cfg.ID, m.From, m.Seq, m.Round)
	case n.age(m.Round) > a.max:
		n.reject(m.From, ReasonStale)
		return fmt.Errorf("node %d step %d: node %d's message of step %d, over %d steps old: dropped", n.cfg.ID, rs.r, m.From, m.Round, a.max)
	}
	n.validator.SetRound(m.Round)
	if err := n.validator.Check(m); err != nil {
		n.reject(m.From, wire.ReasonOf(err).String())
		return err
	}
	size, _ := wire.EncodedSize(m)
	if s == nil {
		s = &asyncSender{}
		a.senders[m.From] = s
	}
	if m.Round == s.step && len(s.set) > 0 {
		if len(s.set) >= heldPerSender || in.bytes[m.From]+size > in.perSenderBytes {
			n.reject(m.From, ReasonBufferFull)
			return fmt.Errorf("node %d: node %d's messages of step %d over the per-sender bound: dropped", n.cfg.ID, m.From, m.Round)
		}
	} else {
		n.forget(m.From, s) // a newer step replaces the pending set
	}
	s.step, s.seq = m.Round, m.Seq
	s.set = append(s.set, held{m, size})
	in.count[m.From]++
	in.bytes[m.From] += size
	in.totalBytes += size
	return nil
}

// forget drops sender id's pending set.
func (n *Node) forget(id uint32, s *asyncSender) {
	for _, h := range s.set {
		n.rs.in.release(h)
	}
	clear(s.set)
	s.set = s.set[:0]
}

// asyncInbox moves the pending sets into the round's inbox, in sender
// order, each vector with its staleness, dropping (and counting) those
// over the bound; with keep it only drops them. With Async.Latest a set
// within the bound stays the sender's, to be combined again next step.
func (n *Node) asyncInbox(keep bool) {
	a := n.async
	a.ids = a.ids[:0]
	for id, s := range a.senders {
		if len(s.set) > 0 {
			a.ids = append(a.ids, id)
		}
	}
	slices.Sort(a.ids)
	for _, id := range a.ids {
		s := a.senders[id]
		age := n.age(s.step)
		for _, h := range s.set {
			switch {
			case keep:
			case age > a.max:
				n.reject(id, ReasonStale)
			default:
				n.rs.inbox = append(n.rs.inbox, strategy.Incoming{From: int(id), Tag: h.m.Payload.Tag, Vector: h.m.Payload.Data, Staleness: age})
			}
		}
		if keep || age > a.max || !a.latest {
			n.forget(id, s)
		}
	}
}
