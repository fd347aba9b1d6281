package trustlayer

import (
	"errors"

	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

// Layer is DMTT's topology-trust layer as a node.Layer: every round the
// node broadcasts its signed claim (its in-neighbours of the round) and
// forwards the claims the layer selected at the end of the previous round;
// every authenticated message is a sign of life of its sender; claims go
// to the trust state, and a claim message the validator refused for
// content its sender signed is evidence against it. The layer closes its
// round before the strategy combines and shows the strategy the result
// (View.Trust).
//
// In the events claim form (trust.Config.Claims = "events"; package trust,
// "Signed edge events") a round has three exchange phases, the co-signing
// round trip: (0) the digest when due and the claims to forward, and to
// each neighbour the node's proposals about its edge to it; (1) the
// countersignatures of the proposals this node agrees with, back to their
// sources; (2) the node's events, attested or one-sided, and the events to
// forward, to every neighbour.
type Layer struct {
	id  *wire.Identity
	dir *wire.Directory
	cfg trust.Config
	// ts is made at the first round, from its neighbourhood; fwd are the
	// claims it chose to forward at the end of the previous round.
	ts     *trust.State
	fwd    []wire.Claim
	hood   node.Neighborhood
	before trust.Stats
	// The events form: events chosen for forwarding, and the proposals
	// received this round, to countersign in phase 1.
	fwdEv     []wire.Event
	proposals []proposal
}

type proposal struct {
	from uint32
	e    wire.Event
}

// maxEventBatch bounds the events of one message (wire.Limits'
// MaxNeighbors, 4096 by default, bounds what a validator accepts).
const maxEventBatch = 1024

// New checks cfg and returns the layer of the node whose identity is id.
// A node takes it first among its layers (node.Config.Layers), so that a
// later layer sees this round's trust.
func New(id *wire.Identity, dir *wire.Directory, cfg trust.Config) (*Layer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Layer{id: id, dir: dir, cfg: cfg}, nil
}

// UseMemos implements node.MemoUser: claims' and events' signatures are
// verified through the simulator's shared cache (Memos.Verify).
func (t *Layer) UseMemos(m node.Memos) { t.cfg.Cache = m.Verify }

// Name implements node.Layer.
func (*Layer) Name() string { return "trust" }

// Phases implements node.Layer: claims go out with the strategy's vectors; the
// events form adds the two phases of the co-signing round trip.
func (t *Layer) Phases() int {
	if t.events() {
		return 3
	}
	return 1
}

func (t *Layer) events() bool { return t.cfg.Claims == trust.ClaimsEvents }

// Owns implements node.Layer: claims, and edge events in the events form.
func (t *Layer) Owns(k wire.Kind) bool {
	return k == wire.KindClaim || (k == wire.KindEvent && t.events())
}

// Expects implements node.Layer: claims (phase 0), listing at most every other
// node of the directory; in the events form also batches of edge events
// in each of the three phases (a proposal, a countersignature, attested
// events forwarded), at most maxEventBatch to a message.
func (t *Layer) Expects(p int) []node.Expect {
	var out []node.Expect
	if p == 0 {
		out = append(out, node.Expect{Kind: wire.KindClaim, Content: wire.ClaimContent(t.dir.Len() - 1)})
	}
	if t.events() && p < 3 {
		out = append(out, node.Expect{Kind: wire.KindEvent, Content: wire.EventContent(maxEventBatch)})
	}
	return out
}

// Begin implements node.Layer.
func (t *Layer) Begin(r int, hood node.Neighborhood) error {
	if t.ts == nil {
		self := t.id.ID()
		var first []uint32 // N_dir^0: the first round's neighbours, without the node
		for _, j := range ids32(hood.In) {
			if j != self {
				first = append(first, j)
			}
		}
		ts, err := trust.New(t.id, t.dir, first, t.cfg)
		if err != nil {
			return err
		}
		t.ts = ts
	}
	t.hood = hood
	if t.ts.Round()+1 < uint64(r) {
		// Rounds were skipped (a node restarted from its checkpoint joins
		// the open round): the claims chosen for the round after the last
		// one are stale now, and forwarding them would count against it.
		t.fwd, t.fwdEv = nil, nil
	}
	t.proposals = t.proposals[:0]
	if err := t.ts.BeginRound(uint64(r)); err != nil {
		return err
	}
	t.before = t.ts.Stats()
	return nil
}

func ids32(xs []int) []uint32 {
	out := make([]uint32, len(xs))
	for k, x := range xs {
		out[k] = uint32(x)
	}
	return out
}

// Outbox implements node.Layer: the node's signed claim of this round's
// neighbourhood, then the claims chosen for forwarding (Algorithms 1, 3).
func (t *Layer) Outbox(p int) ([]*wire.Message, error) {
	if t.events() {
		return t.eventOutbox(p)
	}
	if p != 0 {
		return nil, nil
	}
	own, err := t.ts.OwnClaim(ids32(t.hood.In))
	if err != nil {
		return nil, err
	}
	return t.claimMessages([]wire.Claim{own}), nil
}

// claimMessages returns own claims, then the claims chosen for forwarding,
// one broadcast message each.
func (t *Layer) claimMessages(own []wire.Claim) []*wire.Message {
	out := make([]*wire.Message, 0, len(own)+len(t.fwd))
	for _, c := range append(own, t.fwd...) {
		out = append(out, &wire.Message{Header: wire.Header{Kind: wire.KindClaim, To: wire.Broadcast}, Claim: c})
	}
	t.fwd = nil
	return out
}

// eventOutbox is Outbox in the events form (the type's doc: three phases).
func (t *Layer) eventOutbox(p int) ([]*wire.Message, error) {
	switch p {
	case 0:
		var own []wire.Claim
		if t.ts.DigestDue() {
			c, err := t.ts.OwnClaim(ids32(t.hood.In))
			if err != nil {
				return nil, err
			}
			own = append(own, c)
		}
		out := t.claimMessages(own)
		evs, err := t.ts.OwnEvents(ids32(t.hood.In))
		if err != nil {
			return nil, err
		}
		// A proposal goes to the other endpoint when it is a neighbour
		// this round (a removed edge's cannot: it stays one-sided).
		in := map[uint32]bool{}
		for _, j := range t.hood.In {
			in[uint32(j)] = true
		}
		per := map[uint32][]wire.Event{}
		var peers []uint32
		for _, e := range evs {
			if in[e.Peer] {
				if per[e.Peer] == nil {
					peers = append(peers, e.Peer)
				}
				per[e.Peer] = append(per[e.Peer], e)
			}
		}
		for _, j := range peers { // evs are in peer order
			out = append(out, wire.EventMessage(j, per[j]))
		}
		return out, nil
	case 1:
		var out []*wire.Message
		for _, pr := range t.proposals {
			if c, ok := t.ts.Countersign(&pr.e); ok {
				out = append(out, wire.EventMessage(pr.from, []wire.Event{c}))
			}
		}
		t.proposals = t.proposals[:0]
		return out, nil
	case 2:
		batch := append(t.ts.OwnAttested(), t.fwdEv...)
		t.fwdEv = nil
		var out []*wire.Message
		for len(batch) > 0 {
			k := min(len(batch), maxEventBatch)
			out = append(out, wire.EventMessage(wire.Broadcast, batch[:k]))
			batch = batch[k:]
		}
		return out, nil
	}
	return nil, nil
}

// Observe implements node.Layer: an authenticated message marks its sender
// heard; a claim the validator refused for signed content is evidence.
func (t *Layer) Observe(m *wire.Message, verr error) error {
	if verr != nil {
		var we *wire.Error
		if (m.Kind == wire.KindClaim || m.Kind == wire.KindEvent) && errors.As(verr, &we) {
			t.ts.ObserveRejected(m.From, we.Reason)
		}
		return nil
	}
	return t.ts.Heard(m.From)
}

// Handle implements node.Layer: the claim goes to the trust state; a claim it
// refuses as evidence of wrongdoing is refused here too (duplicates and
// other harmless refusals are not).
func (t *Layer) Handle(m *wire.Message) error {
	if m.Kind == wire.KindEvent {
		return t.handleEvents(m)
	}
	return refusal(t.ts.Ingest(m.From, &m.Claim))
}

// refusal turns a trust rejection into the layer's answer: a refusal when
// it is evidence, nothing for harmless ones (duplicates, superseded).
func refusal(err error) error {
	var rej *trust.Rejection
	if errors.As(err, &rej) {
		if !rej.Reason.Evidence() {
			return nil
		}
		return &node.Refusal{Reason: "claim_" + rej.Reason.String(), Err: err}
	}
	return err
}

// handleEvents takes a KindEvent message (validated: every event decodes
// and its signatures verify): a proposal addressed to this node waits for
// phase 1, a countersignature returned to it attests its own event, the
// rest are ingested. The first refusal that is evidence refuses the
// message; every event is processed.
func (t *Layer) handleEvents(m *wire.Message) error {
	evs, err := wire.DecodeEvents(nil, m.Blob.Data, maxEventBatch*4)
	if err != nil {
		return &node.Refusal{Reason: "claim_malformed", Err: err}
	}
	self := t.id.ID()
	var first error
	for k := range evs {
		e := &evs[k]
		var r error
		switch {
		case e.Return:
			r = refusal(t.ts.AcceptCountersign(m.From, e))
		case m.To == self && e.Peer == self && e.Source == m.From && e.Hop == 0 && !e.Attested:
			if len(t.proposals) < maxEventBatch {
				t.proposals = append(t.proposals, proposal{from: m.From, e: *e})
			}
		default:
			r = refusal(t.ts.IngestEvent(m.From, e))
		}
		if first == nil {
			first = r
		}
	}
	return first
}

// End implements node.Layer: the trust round closes, the claims to forward next
// round are kept, and the state goes into the round's Ready.
func (t *Layer) End(rd *node.Ready) error {
	if _, err := t.ts.EndRound(); err != nil {
		return err
	}
	t.fwd = t.ts.Forwards()
	t.fwdEv = t.ts.EventForwards()
	rd.Reports = append(rd.Reports, t.report())
	return nil
}

func (t *Layer) report() *node.TrustReport {
	ids := t.dir.IDs()
	rep := &node.TrustReport{}
	if len(ids) > 0 {
		rep.Trust = make([]float64, int(ids[len(ids)-1])+1)
	}
	for _, j := range ids {
		if j != t.id.ID() {
			rep.Trust[j] = t.ts.Trust(j)
		}
	}
	for _, j := range t.ts.Screened() {
		rep.Screened = append(rep.Screened, int(j))
	}
	for _, e := range t.ts.Edges() {
		rep.Edges = append(rep.Edges, [2]int{int(e.U), int(e.V)})
	}
	st := t.ts.Stats()
	rep.ClaimsAccepted = st.Accepted - t.before.Accepted
	for reason, c := range st.Rejected {
		d := c - t.before.Rejected[reason]
		if d > 0 && trust.Reason(reason).Evidence() {
			if rep.ClaimsRejected == nil {
				rep.ClaimsRejected = map[string]uint64{}
			}
			rep.ClaimsRejected[trust.Reason(reason).String()] += d
		}
	}
	return rep
}

// See implements node.Layer: View.Trust (nil before the first round). In Share
// it describes the previous round's end, in Combine this round's.
func (t *Layer) See(v *strategy.View) {
	if t.ts != nil {
		v.Trust = trustView{t.ts}
	}
}

type trustView struct{ s *trust.State }

func (t trustView) Trust(j int) float64 {
	if j < 0 || int64(j) > int64(^uint32(0)) {
		return 0
	}
	return t.s.Trust(uint32(j))
}

func (t trustView) Reliability(j int) float64 {
	if j < 0 || int64(j) > int64(^uint32(0)) {
		return 0
	}
	return t.s.Reliability(uint32(j))
}

func (t trustView) Screened() []int {
	sc := t.s.Screened()
	out := make([]int, len(sc))
	for k, x := range sc {
		out[k] = int(x)
	}
	return out
}

// Snapshot implements node.Layer: 0 before the first round, else 1 and the
// trust state's snapshot (the claims to forward next round are the state's
// Forwards).
func (t *Layer) Snapshot() ([]byte, error) {
	if t.ts == nil {
		return []byte{0}, nil
	}
	snap, err := t.ts.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return append([]byte{1}, snap...), nil
}

// Restore implements node.Layer.
func (t *Layer) Restore(b []byte) error {
	switch {
	case len(b) == 1 && b[0] == 0:
		t.ts, t.fwd = nil, nil
		return nil
	case len(b) < 1 || b[0] != 1:
		return errors.New("trust layer: not a trust layer state")
	}
	ts, err := trust.Restore(t.id, t.dir, t.cfg, b[1:])
	if err != nil {
		return err
	}
	t.ts, t.fwd = ts, ts.Forwards()
	return nil
}

// Interface checks.
var (
	_ node.Layer    = (*Layer)(nil)
	_ node.MemoUser = (*Layer)(nil)
)
