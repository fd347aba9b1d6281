package node

import (
	"errors"

	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

// TrustLayer is DMTT's topology-trust layer (spec/dmtt.md, Algorithms 1–3)
// as a Layer: every round the node broadcasts its signed claim (its
// in-neighbours of the round) and forwards the claims the layer selected
// at the end of the previous round; every authenticated message is a sign
// of life of its sender; claims go to the trust state, and a claim message
// the validator refused for content its sender signed is evidence against
// it. The layer closes its round before the strategy combines and shows
// the strategy the result (View.Trust).
type TrustLayer struct {
	id  *wire.Identity
	dir *wire.Directory
	cfg trust.Config
	// ts is made at the first round, from its neighbourhood; fwd are the
	// claims it chose to forward at the end of the previous round.
	ts     *trust.State
	fwd    []wire.Claim
	hood   Neighborhood
	before trust.Stats
}

// NewTrustLayer checks cfg and returns the layer of the node id.
func NewTrustLayer(id *wire.Identity, dir *wire.Directory, cfg trust.Config) (*TrustLayer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &TrustLayer{id: id, dir: dir, cfg: cfg}, nil
}

// Name implements Layer.
func (*TrustLayer) Name() string { return "trust" }

// Phases implements Layer: claims go out with the strategy's vectors.
func (*TrustLayer) Phases() int { return 1 }

// Owns implements Layer: claims.
func (*TrustLayer) Owns(k wire.Kind) bool { return k == wire.KindClaim }

// Begin implements Layer.
func (t *TrustLayer) Begin(r int, hood Neighborhood) error {
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
		t.fwd = nil
	}
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

// Outbox implements Layer: the node's signed claim of this round's
// neighbourhood, then the claims chosen for forwarding (Algorithms 1, 3).
func (t *TrustLayer) Outbox(p int) ([]*wire.Message, error) {
	if p != 0 {
		return nil, nil
	}
	own, err := t.ts.OwnClaim(ids32(t.hood.In))
	if err != nil {
		return nil, err
	}
	out := make([]*wire.Message, 0, 1+len(t.fwd))
	for _, c := range append([]wire.Claim{own}, t.fwd...) {
		out = append(out, &wire.Message{Header: wire.Header{Kind: wire.KindClaim, To: wire.Broadcast}, Claim: c})
	}
	t.fwd = nil
	return out, nil
}

// Observe implements Layer: an authenticated message marks its sender
// heard; a claim the validator refused for signed content is evidence.
func (t *TrustLayer) Observe(m *wire.Message, verr error) error {
	if verr != nil {
		var we *wire.Error
		if m.Kind == wire.KindClaim && errors.As(verr, &we) {
			t.ts.ObserveRejected(m.From, we.Reason)
		}
		return nil
	}
	return t.ts.Heard(m.From)
}

// Handle implements Layer: the claim goes to the trust state; a claim it
// refuses as evidence of wrongdoing is refused here too (duplicates and
// other harmless refusals are not).
func (t *TrustLayer) Handle(m *wire.Message) error {
	err := t.ts.Ingest(m.From, &m.Claim)
	var rej *trust.Rejection
	if errors.As(err, &rej) {
		if !rej.Reason.Evidence() {
			return nil
		}
		return &Refusal{Reason: "claim_" + rej.Reason.String(), Err: err}
	}
	return err
}

// End implements Layer: the trust round closes, the claims to forward next
// round are kept, and the state goes into the round's Ready.
func (t *TrustLayer) End(rd *Ready) error {
	if _, err := t.ts.EndRound(); err != nil {
		return err
	}
	t.fwd = t.ts.Forwards()
	rd.Trust = t.report()
	return nil
}

func (t *TrustLayer) report() *TrustReport {
	ids := t.dir.IDs()
	rep := &TrustReport{}
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

// See implements Layer: View.Trust (nil before the first round). In Share
// it describes the previous round's end, in Combine this round's.
func (t *TrustLayer) See(v *strategy.View) {
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
