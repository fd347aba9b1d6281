package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// phase is where the node is in its round.
type phase int

const (
	phaseIdle      phase = iota // no round open: before the first Begin, after End
	phaseBegun                  // Begin done: Train, Outbox or Step next
	phaseTrained                // Train done: Outbox or Step next
	phaseExchange               // some exchange phases opened, more remain
	phaseExchanged              // every exchange phase opened: Step or End next
)

// Reasons of the round's rejections that are not wire.Reason's.
const (
	ReasonBufferFull  = "buffer_full"   // a message for later over the held store's bounds
	ReasonTooFarAhead = "too_far_ahead" // a message more than maxAhead rounds ahead
	ReasonLayer       = "layer"         // a layer's refusal without a reason of its own
	ReasonTooFew      = "too_few"       // an input of a combine whose rule needs more (strategy.ErrKeptOwn)
)

// roundState is the node's position in the round protocol.
type roundState struct {
	phase   phase
	r       int
	begun   bool // a round has been begun: r is meaningful
	trained bool
	hood    Neighborhood
	// phases is the round's number of exchange phases, next the next one
	// Outbox opens, release the one of the strategy's vectors.
	phases, next, release int
	seq                   uint64
	inbox                 []strategy.Incoming
	// The round's rejections, per sender and reason.
	rejected int
	rej      map[rejKey]int
	// in is the input checks' state (inputs.go): what each phase takes,
	// the round's accepted messages, the messages held for later.
	in    inputs
	inSet bool // in is set up
	// diverged: the round's training or combine left the model non-finite
	// (Ready.Diverged).
	diverged bool
}

type rejKey struct {
	from   uint32
	reason string
}

func (p phase) String() string {
	switch p {
	case phaseIdle:
		return "between rounds"
	case phaseBegun:
		return "begun"
	case phaseTrained:
		return "trained"
	case phaseExchange:
		return "exchanging"
	}
	return "exchanged"
}

// outOfOrder is the error of a call in the wrong phase.
func (n *Node) outOfOrder(call, expected string) error {
	where := n.rs.phase.String()
	if n.rs.begun {
		where = fmt.Sprintf("round %d, %s", n.rs.r, where)
		if n.rs.phase == phaseExchange {
			where += fmt.Sprintf(" (phase %d of %d opened)", n.rs.next, n.rs.phases)
		}
	}
	return fmt.Errorf("node %d: %s out of order (%s): expected %s", n.cfg.ID, call, where, expected)
}

// Begin opens round r with the round's neighbourhood: it saves the
// start-of-round parameters, opens the layers' round and delivers the
// messages of round r that arrived early. Rounds must increase; a round
// need not follow the previous one (a node that rejoins skips rounds).
func (n *Node) Begin(r int, hood Neighborhood) error {
	if err := n.setupInputs(); err != nil {
		return err
	}
	switch {
	case n.rs.phase != phaseIdle:
		return n.outOfOrder(fmt.Sprintf("Begin(%d)", r), "End of the open round")
	case r < 0:
		return fmt.Errorf("node %d: Begin(%d): rounds start at 0", n.cfg.ID, r)
	case n.rs.begun && r <= n.rs.r:
		return fmt.Errorf("node %d: Begin(%d) after round %d: rounds must increase", n.cfg.ID, r, n.rs.r)
	}
	rs := &n.rs
	rs.r, rs.begun, rs.trained, rs.hood = r, true, false, hood
	rs.inbox = rs.inbox[:0]
	rs.seq = 0
	n.trainRes = nn.TrainResult{}
	n.validator.SetRound(uint64(r))
	n.rng = n.random.Stream(seed.Strategy, uint64(n.cfg.ID), uint64(r))
	copy(n.start, n.cfg.Model.Params()) // nothing when start is nil
	rs.phases, rs.release, rs.next = 1, 0, 0
	for _, l := range n.layers {
		if err := l.Begin(r, hood); err != nil {
			return fmt.Errorf("node %d round %d: %s: %w", n.cfg.ID, r, l.Name(), err)
		}
		rs.phases = max(rs.phases, l.Phases())
		if rl, ok := l.(Releaser); ok {
			rs.release = max(rs.release, rl.ReleasePhase())
		}
	}
	if n.async != nil && rs.phases > 1 {
		return fmt.Errorf("node %d step %d: a layer needs %d exchange phases; an asynchronous step has one", n.cfg.ID, r, rs.phases)
	}
	if rs.release >= rs.phases {
		return fmt.Errorf("node %d round %d: release phase %d of %d exchange phases", n.cfg.ID, r, rs.release, rs.phases)
	}
	rs.phase = phaseBegun
	// The held messages of this round wait for their phase's Outbox; older
	// ones are stale now.
	n.beginHeld(r)
	return nil
}

// Train runs the round's local training. It is optional (a node that does
// not learn skips it: DMTT's idle Byzantine nodes), once per round,
// between Begin and the first Outbox. Cancelling ctx stops it between
// batches: the node keeps the steps taken, the error says so, and the
// round goes on (a driver may still exchange and End).
func (n *Node) Train(ctx context.Context) (nn.TrainResult, error) {
	if n.rs.phase != phaseBegun {
		return nn.TrainResult{}, n.outOfOrder("Train", "Begin (Train comes once, before Outbox)")
	}
	// A pooled model takes its scratch once for the whole training (the
	// strategy's LocalTraining may run passes too), not once per call.
	n.cfg.Model.Acquire()
	defer n.cfg.Model.Release()
	n.cfg.Model.SetRound(n.rs.r, n.cfg.Rounds)
	tc := n.cfg.Train
	if lt, ok := n.cfg.Strategy.(strategy.LocalTrainer); ok {
		tc = lt.LocalTraining(n.view(), tc)
	}
	tc.Stop = ctx.Done()
	train := n.cfg.Model.Train
	if n.cfg.Trainer != nil {
		train = n.cfg.Trainer.Train
	}
	res, err := train(n.cfg.TrainData, n.cfg.Optimizer, tc,
		n.random.Stream(seed.Train, uint64(n.cfg.ID), uint64(n.rs.r)))
	n.trainRes = res
	n.rs.phase, n.rs.trained = phaseTrained, true
	if errors.Is(err, nn.ErrNonFinite) {
		// The model diverged (its own loss or gradient, or parameters a
		// combine made non-finite): a result of the run, recorded in Ready.
		n.rs.diverged = true
		return res, nil
	}
	if errors.Is(err, nn.ErrStopped) {
		return res, fmt.Errorf("node %d round %d: training stopped after %d steps: %w", n.cfg.ID, n.rs.r, res.Steps, context.Cause(ctx))
	}
	if err != nil {
		return res, fmt.Errorf("node %d round %d: %w", n.cfg.ID, n.rs.r, err)
	}
	return res, nil
}

// Outbox opens the round's next exchange phase and returns the signed
// messages to send in it; more says whether another phase follows (most
// rounds have one; secure aggregation needs three). A message to
// wire.Broadcast goes to every out-neighbour. Vector payloads are the
// node's copies, read-only once returned and valid until the next round's
// Outbox.
func (n *Node) Outbox() (msgs []*wire.Message, more bool, err error) {
	rs := &n.rs
	switch rs.phase {
	case phaseIdle:
		return nil, false, n.outOfOrder("Outbox", "Begin")
	case phaseExchanged:
		return nil, false, n.outOfOrder("Outbox", "End (every exchange phase is open)")
	}
	p := rs.next
	var out []*wire.Message
	for _, l := range n.layers {
		ms, err := l.Outbox(p)
		if err != nil {
			return nil, false, fmt.Errorf("node %d round %d: %s: %w", n.cfg.ID, rs.r, l.Name(), err)
		}
		out = append(out, ms...)
	}
	if p == rs.release {
		vecs := n.share()
		for _, l := range n.layers {
			if rl, ok := l.(Releaser); ok {
				if vecs, err = rl.Release(vecs); err != nil {
					return nil, false, fmt.Errorf("node %d round %d: %s: %w", n.cfg.ID, rs.r, l.Name(), err)
				}
			}
		}
		out = append(out, vecs...)
	}
	for _, m := range out {
		rs.seq++
		m.From, m.Round, m.Seq = uint32(n.cfg.ID), uint64(rs.r), rs.seq
		if err := wire.SignNoted(m, n.cfg.Identity, n.memos.Digests); err != nil {
			return nil, false, fmt.Errorf("node %d: signing: %w", n.cfg.ID, err)
		}
	}
	rs.next++
	more = rs.next < rs.phases
	rs.phase = phaseExchanged
	if more {
		rs.phase = phaseExchange
	}
	// The messages held for the phase now open (arrived before it).
	n.deliverHeld()
	return out, more, nil
}

// share turns the strategy's Share into unsigned vector messages whose
// payloads are copies in the node's send buffers.
func (n *Node) share() []*wire.Message {
	var out []*wire.Message
	var prev []float32 // the last vector copied, and its copy
	var prevBuf []float32
	for k, o := range n.cfg.Strategy.Share(n.view()) {
		if k == len(n.sendBufs) {
			n.sendBufs = append(n.sendBufs, nil)
		}
		if n.async != nil {
			// Asynchronous receivers hold a message past the sender's
			// next step: a buffer of its own every step.
			n.sendBufs[k] = nil
		}
		var buf []float32
		if len(o.Vector) > 0 && len(o.Vector) == len(prev) && &o.Vector[0] == &prev[0] {
			// The same vector to another peer: share the copy (payloads
			// are read-only once sent, like a broadcast's).
			buf = prevBuf
		} else {
			n.sendBufs[k] = append(n.sendBufs[k][:0], o.Vector...)
			buf, prev, prevBuf = n.sendBufs[k], o.Vector, n.sendBufs[k]
		}
		to := uint32(wire.Broadcast)
		if o.To != strategy.Broadcast {
			to = uint32(o.To)
		}
		out = append(out, &wire.Message{
			Header:  wire.Header{Kind: wire.KindVector, To: to},
			Payload: wire.Payload{Tag: o.Tag, Data: buf},
		})
	}
	return out
}

// Step hands the node one message that arrived, at any time. A message of
// the open round from one of the round's in-neighbours, not a copy of one
// taken, of a kind and size the round's exchange phases take (inputs.go),
// is validated and goes to its layer or, a vector, to the strategy at End;
// one for a later phase of the round waits until Outbox opens it; one of
// a later round waits (bounded) until that round begins; one of a past or
// closed round is dropped. The node takes m: the caller must not change
// it afterwards. A refused message is counted against its sender in the
// round's Ready; the error says why (drivers may log it; the node has
// already dealt with it).
func (n *Node) Step(m *wire.Message) error {
	rs := &n.rs
	if m == nil {
		return n.validator.Check(m)
	}
	if err := n.setupInputs(); err != nil {
		return err
	}
	if n.async != nil {
		return n.stepAsync(m)
	}
	open := rs.phase != phaseIdle
	switch {
	case open && m.Round == uint64(rs.r):
		return n.admit(m)
	case !rs.begun || m.Round > uint64(rs.r):
		return n.buffer(m)
	case open:
		return n.deliver(m) // a past round: the validator refuses and counts it
	}
	n.reject(m.From, wire.StaleRound.String())
	return fmt.Errorf("node %d: a message of round %d from node %d after round %d closed: dropped", n.cfg.ID, m.Round, m.From, rs.r)
}

// deliver validates a message of the open round and passes it on.
func (n *Node) deliver(m *wire.Message) error {
	if err := n.validator.Check(m); err != nil {
		for _, l := range n.layers {
			_ = l.Observe(m, err)
		}
		n.reject(m.From, wire.ReasonOf(err).String())
		return err
	}
	for _, l := range n.layers {
		if err := l.Observe(m, nil); err != nil {
			n.reject(m.From, refusalReason(err))
			return err
		}
	}
	for _, l := range n.layers {
		if l.Owns(m.Kind) {
			if err := l.Handle(m); err != nil {
				n.reject(m.From, refusalReason(err))
				return err
			}
			n.rs.in.seen[keyOf(m)] = struct{}{}
			return nil
		}
	}
	n.rs.inbox = append(n.rs.inbox, strategy.Incoming{From: int(m.From), Tag: m.Payload.Tag, Vector: m.Payload.Data})
	n.rs.in.seen[keyOf(m)] = struct{}{}
	return nil
}

func refusalReason(err error) string {
	var ref *Refusal
	if errors.As(err, &ref) && ref.Reason != "" {
		return ref.Reason
	}
	if r := wire.ReasonOf(err); r != wire.None {
		return r.String()
	}
	return ReasonLayer
}

func (n *Node) reject(from uint32, reason string) {
	rs := &n.rs
	rs.rejected++
	if rs.rej == nil {
		rs.rej = map[rejKey]int{}
	}
	rs.rej[rejKey{from, reason}]++
}

// EndOptions say how a round closes.
type EndOptions struct {
	// Keep closes the round without combining: the node keeps its model
	// and drops what arrived (a driver's choice for nodes that do not
	// learn, such as DMTT's idle Byzantine nodes); layers still end.
	Keep bool
	// Evaluate measures the model on the local test split and, with
	// Global and a global test set, on that too.
	Evaluate, Global bool
}

// End closes the open round with what arrived: the layers end, the
// strategy combines what arrived (sorted by sender, then tag), the model is
// evaluated when asked, and everything the round produced is returned.
// Messages of this round that arrive later are dropped and counted.
func (n *Node) End(o EndOptions) (Ready, error) {
	rs := &n.rs
	switch rs.phase {
	case phaseIdle:
		return Ready{}, n.outOfOrder("End", "Begin")
	case phaseBegun, phaseTrained, phaseExchange:
		return Ready{}, n.outOfOrder("End", fmt.Sprintf("Outbox (exchange phase %d of %d)", rs.next+1, rs.phases))
	}
	// The combine (a strategy's Validate, BatchLoss, TrainCopy) and the
	// evaluation take a pooled model's scratch once for the whole end.
	n.cfg.Model.Acquire()
	defer n.cfg.Model.Release()
	rs.phase = phaseIdle
	n.endHeld()
	rd := Ready{Round: rs.r, Trained: rs.trained, Train: n.trainRes}
	for _, l := range n.layers {
		if err := l.End(&rd); err != nil {
			return rd, fmt.Errorf("node %d round %d: %s: %w", n.cfg.ID, rs.r, l.Name(), err)
		}
	}
	if n.async != nil {
		n.asyncInbox(o.Keep)
	}
	if !o.Keep {
		slices.SortStableFunc(rs.inbox, func(a, b strategy.Incoming) int {
			return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Tag, b.Tag))
		})
		w, err := n.cfg.Strategy.Combine(n.view(), rs.inbox)
		switch {
		case errors.Is(err, strategy.ErrKeptOwn):
			// Too few inputs for the rule (a neighbour silent or refused):
			// what a peer does not send must not stop the node. It keeps
			// its model, and the inputs count as refused.
			for _, in := range rs.inbox {
				n.reject(uint32(in.From), ReasonTooFew)
			}
			w, rd.KeptOwn = map[int]float64{}, true
		case err != nil:
			rs.inbox = rs.inbox[:0]
			return rd, fmt.Errorf("node %d round %d: %s: %w", n.cfg.ID, rs.r, n.cfg.Strategy.Name(), err)
		}
		rd.Combined, rd.Weights = true, w
		if n.async != nil {
			for _, in := range rs.inbox {
				rd.Ages = append(rd.Ages, InputAge{From: in.From, Tag: in.Tag, Staleness: in.Staleness})
			}
		}
		if sr, ok := n.cfg.Strategy.(strategy.Reporter); ok {
			rd.Reports = append(rd.Reports, sr.Reports()...)
		}
	}
	rs.inbox = rs.inbox[:0]
	if !allFinite(n.cfg.Model.Params()) {
		rs.diverged = true
	}
	if o.Evaluate {
		ev, err := n.evaluate(o.Global)
		if errors.Is(err, nn.ErrNonFinite) || (err == nil && rs.diverged) {
			rs.diverged = true
			ev, err = n.evaluateDiverged(o.Global)
		}
		if err != nil {
			return rd, err
		}
		rd.Eval = &ev
	}
	rd.Diverged, rs.diverged = rs.diverged, false
	rd.Rejected, rd.Rejections = rs.rejected, n.rejections()
	rs.rejected = 0
	clear(rs.rej)
	return rd, nil
}

// rejections lists the round's rejections by sender, then reason.
func (n *Node) rejections() []Rejection {
	if len(n.rs.rej) == 0 {
		return nil
	}
	out := make([]Rejection, 0, len(n.rs.rej))
	for k, c := range n.rs.rej {
		out = append(out, Rejection{From: int(k.from), Reason: k.reason, Count: c})
	}
	slices.SortFunc(out, func(a, b Rejection) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}

// evaluate measures the model on the local test split and, when it has
// one and global is set, on the global test set.
func (n *Node) evaluate(global bool) (Evaluation, error) {
	return n.evaluateWith(global, n.cfg.Model.Evaluate, n.memos.Global)
}

// evaluateDiverged measures a diverged model as it is (nn.EvaluateDiverged).
func (n *Node) evaluateDiverged(global bool) (Evaluation, error) {
	return n.evaluateWith(global, n.cfg.Model.EvaluateDiverged, nil)
}

// evaluateWith measures with eval, the global test through memo when it is
// not nil.
func (n *Node) evaluateWith(global bool, eval func(nn.Batches) (nn.EvalResult, error), memo *EvalMemo) (Evaluation, error) {
	var ev Evaluation
	var err error
	if ev.Local, err = eval(n.cfg.Test); err != nil {
		return ev, fmt.Errorf("node %d: local test: %w", n.cfg.ID, err)
	}
	if global && n.cfg.GlobalTest != nil {
		evalGlobal := func() (nn.EvalResult, error) { return eval(n.cfg.GlobalTest) }
		if memo != nil {
			ev.Global, err = memo.Evaluate(n.cfg.Model, evalGlobal)
		} else {
			ev.Global, err = evalGlobal()
		}
		if err != nil {
			return ev, fmt.Errorf("node %d: global test: %w", n.cfg.ID, err)
		}
	}
	return ev, nil
}

// allFinite reports whether every value of x is finite.
func allFinite(x []float32) bool {
	for _, v := range x {
		if v-v != 0 { // NaN or ±Inf
			return false
		}
	}
	return true
}
