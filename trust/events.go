package trust

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/wire"
)

// Claim forms (Config.Claims; package doc, "Signed edge events").
const (
	ClaimsLists  = "lists"  // the paper's form: every round, a signed claim of the whole neighbour list
	ClaimsEvents = "events" // the paper's: signed edge events, bilaterally attested, and a periodic digest
)

// events reports whether the layer runs in the events form.
func (c *Config) events() bool { return c.Claims == ClaimsEvents }

// Statement kinds: what a stance was read from.
const (
	fromDigest  = iota // the source's digest (its whole-list claim)
	fromEvent          // the source's own edge event
	fromCounter        // the source's countersignature on the other endpoint's event
)

// stance is what a node last signed about its edge to one other node in
// the events form (package doc, "Signed edge events"): listed or not, as of
// which round, whether both endpoints signed it (bilateral), and the
// weight and known paths of the copy it was read from.
type stance struct {
	listed    bool
	bilateral bool
	kind      uint8
	round     uint64
	trust     float64 // the signer's T_topo when the statement was accepted (ψ)
	// cp are the copies of the event the statement was read from (nil for
	// a digest: its copies are the source's current claim's).
	cp *copies
}

// copies are the known copies of one held event, over every delivery: the
// smallest hop, whether the source sent it itself, and the forwarders of
// its one-hop copies (sorted) — so weights and paths do not depend on the
// order copies arrived in.
type copies struct {
	hop     uint8
	direct0 bool
	via     []uint32
}

func (c *copies) note(from uint32, hop uint8) {
	c.hop = min(c.hop, hop)
	switch hop {
	case 0:
		c.direct0 = true
	case 1:
		if i, ok := slices.BinarySearch(c.via, from); !ok {
			c.via = slices.Insert(c.via, i, from)
		}
	}
}

// newer reports whether statement a supersedes b (b may be nil): a later
// round, or the same round and a stronger statement (bilateral over
// one-sided, an event over a digest). Equal strength keeps b, so what a
// node holds does not depend on arrival order except through equivocation,
// which is charged.
func (a *stance) newer(b *stance) bool {
	if b == nil || a.round != b.round {
		return b == nil || a.round > b.round
	}
	if a.bilateral != b.bilateral {
		return a.bilateral
	}
	return a.kind != fromDigest && b.kind == fromDigest
}

// eventState is a source's events-form record: its accepted events of the
// last MaxAge rounds by version (replays, equivocation, the per-edge
// budget), its stances, and the materialized neighbour list the rest of
// the layer reads as the source's current claim.
type eventState struct {
	held    []wire.Event // sorted by version
	cps     []*copies    // cps[k] are held[k]'s copies
	stances map[uint32]*stance
	fresh   []wire.Event // accepted or upgraded this round, for forwarding
	touched bool         // a statement of this source was accepted this round
	mat     wire.Claim   // Neighbors and Round (the latest statement's); Source
	matOK   bool
}

func (p *peer) evs() *eventState {
	if p.events == nil {
		p.events = &eventState{stances: map[uint32]*stance{}}
	}
	return p.events
}

// DigestDue reports whether the node's whole-list claim (the digest) is due
// this round in the events form: at the node's first round and every
// DigestEvery rounds after its last digest. In the lists form it is due
// every round.
func (s *State) DigestDue() bool {
	if !s.cfg.events() || !s.evo.digested {
		return true
	}
	return s.round-s.evo.lastDigest >= uint64(s.cfg.DigestEvery)
}

// OwnEvents returns this round's signed events about the node's edges, one
// per neighbour added or removed since the previous call (none at the
// first call: the digest, due then, carries the list), one-sided: the
// proposals of the co-signing round trip. They are kept until the round
// ends; AcceptCountersign attests them, OwnAttested returns them for
// broadcast.
func (s *State) OwnEvents(neighbors []uint32) ([]wire.Event, error) {
	if err := s.checkOpen("OwnEvents"); err != nil {
		return nil, err
	}
	if !s.cfg.events() {
		return nil, fmt.Errorf("trust: OwnEvents with claims %q", s.cfg.Claims)
	}
	nb, err := s.ownList(neighbors)
	if err != nil {
		return nil, err
	}
	for _, j := range nb {
		if !s.known(j) {
			return nil, fmt.Errorf("trust: neighbor %d not in the directory", j)
		}
	}
	s.evo.pending = s.evo.pending[:0]
	if s.evo.ownKnown {
		add := func(j uint32, op uint8) error {
			e := wire.Event{Source: s.self, Peer: j, Round: s.round, Version: s.version + 1, Op: op}
			if err := wire.SignEvent(&e, s.id); err != nil {
				return err
			}
			s.version++
			s.evo.pending = append(s.evo.pending, e)
			return nil
		}
		// Both lists are sorted: one merge, peers in id order.
		i, k := 0, 0
		for i < len(s.evo.own) || k < len(nb) {
			var err error
			switch {
			case k == len(nb) || (i < len(s.evo.own) && s.evo.own[i] < nb[k]):
				err = add(s.evo.own[i], wire.EventRemove)
				i++
			case i == len(s.evo.own) || nb[k] < s.evo.own[i]:
				err = add(nb[k], wire.EventAdd)
				k++
			default:
				i++
				k++
			}
			if err != nil {
				return nil, err
			}
		}
	}
	s.evo.own, s.evo.ownKnown = nb, true
	return slices.Clone(s.evo.pending), nil
}

// Countersign is the peer's half of the round trip: given source u's
// proposal e about its edge to this node, it returns e countersigned (with
// Return set, for u) when this node observed the same change this round
// (its own events of the round hold the same op about u), and false
// otherwise — an honest node does not attest what it did not observe.
func (s *State) Countersign(e *wire.Event) (wire.Event, bool) {
	if !s.open || !s.cfg.events() || e == nil || e.Peer != s.self || e.Round != s.round || !s.known(e.Source) {
		return wire.Event{}, false
	}
	agree := false
	for k := range s.evo.pending {
		if s.evo.pending[k].Peer == e.Source && s.evo.pending[k].Op == e.Op {
			agree = true
		}
	}
	pub, _ := s.dir.Key(e.Source)
	if !agree || !wire.VerifyEvent(e, pub) {
		return wire.Event{}, false
	}
	c := *e
	c.Hop = 0
	if err := wire.Countersign(&c, s.id); err != nil {
		return wire.Event{}, false
	}
	c.Return = true
	return c, true
}

// AcceptCountersign takes peer from's countersignature on one of this
// round's own events: it must name a pending event of this node about from
// and verify; the event is then attested. A countersignature that does not
// verify is Forged (q against from); one for no pending event is Malformed.
func (s *State) AcceptCountersign(from uint32, e *wire.Event) error {
	if err := s.checkOpen("AcceptCountersign"); err != nil {
		return err
	}
	if !s.known(from) {
		return s.reject(UnknownSender, from, fmt.Sprintf("node %d not in the directory", from))
	}
	if e == nil || e.Source != s.self || e.Peer != from {
		return s.reject(Malformed, from, "countersignature for another node's event")
	}
	for k := range s.evo.pending {
		p := &s.evo.pending[k]
		if !wire.SameEvent(p, e) {
			continue
		}
		pub, _ := s.dir.Key(from)
		if !wire.VerifyCounter(e, pub) {
			return s.reject(Forged, from, fmt.Sprintf("countersignature of node %d on version %d", from, e.Version))
		}
		p.Attested, p.Counter = true, e.Counter
		return nil
	}
	return s.reject(Malformed, from, fmt.Sprintf("countersignature for version %d, no such event of this round", e.Version))
}

// OwnAttested returns this round's own events, attested where the peer
// countersigned, to broadcast (hop 0).
func (s *State) OwnAttested() []wire.Event { return slices.Clone(s.evo.pending) }

// IngestEvent processes an edge event delivered by peer from (the
// authenticated sender), like Ingest for claims: nil when it was taken
// into the source's stances, else a *Rejection, charged as Ingest charges
// (package doc, "Signed edge events"). Checks, cheapest first: form (known
// distinct source and peer, a valid op, hop 0 exactly from the source, at
// most HopLimit, not a returned countersignature), freshness (not future,
// at most MaxAge rounds old), then by version: a copy of a held event is a
// Duplicate (an attested copy of a one-sided one upgrades it, after its
// countersignature verifies; the source re-sending it in a later round is
// a Replay); a different event under a held version is Equivocation; a new
// version is verified (both signatures), checked for inconsistency (a
// newer version for an older round) and against the per-edge budget (one
// event per edge per round: OverBudget), and its statements are applied —
// the source's, and with a countersignature the peer's (both endpoints as
// witnesses). Two contradicting statements of one node about one edge in
// one round are Equivocation against that node.
func (s *State) IngestEvent(from uint32, e *wire.Event) error {
	if err := s.admit("IngestEvent", from); err != nil {
		return err
	}
	if !s.cfg.events() {
		return s.reject(Malformed, from, fmt.Sprintf("edge event with claims %q", s.cfg.Claims))
	}
	if e == nil {
		return s.reject(Malformed, from, "nil event")
	}
	if e.Source == s.self {
		return s.reject(Duplicate, from, "")
	}
	if r, detail := s.checkEventHeader(from, e); r != Accepted {
		return s.reject(r, from, detail)
	}
	if err := s.checkAge(from, "event", e.Round); err != nil {
		return err
	}
	src := s.peer(e.Source)
	es := src.evs()
	srcKey, _ := s.dir.Key(e.Source)
	peerKey, _ := s.dir.Key(e.Peer)
	if i, ok := slices.BinarySearchFunc(es.held, e.Version, func(h wire.Event, v uint64) int { return cmp.Compare(h.Version, v) }); ok {
		h := &es.held[i]
		if !wire.SameEvent(h, e) {
			if !s.cfg.Cache.VerifyEvent(e, srcKey) {
				return s.reject(Forged, from, fmt.Sprintf("event of node %d, version %d", e.Source, e.Version))
			}
			return s.reject(Equivocation, e.Source, fmt.Sprintf("two events of node %d under version %d", e.Source, e.Version))
		}
		if e.Hop == 0 && e.Round < s.round {
			return s.reject(Replay, from, fmt.Sprintf("event version %d of round %d re-sent in round %d", e.Version, e.Round, s.round))
		}
		cp := es.cps[i]
		if e.Attested && !h.Attested {
			if !s.cfg.Cache.VerifyCounter(e, peerKey) {
				return s.reject(Forged, from, fmt.Sprintf("countersignature of node %d on version %d of node %d", e.Peer, e.Version, e.Source))
			}
			h.Attested, h.Counter = true, e.Counter
			cp.note(from, e.Hop)
			h.Hop = cp.hop
			s.noteFresh(es, h)
			return s.applyEvent(src, h, cp)
		}
		cp.note(from, e.Hop)
		h.Hop = cp.hop
		return s.reject(Duplicate, from, "")
	}
	if !s.cfg.Cache.VerifyEvent(e, srcKey) {
		return s.reject(Forged, from, fmt.Sprintf("event of node %d, version %d", e.Source, e.Version))
	}
	if e.Attested && !s.cfg.Cache.VerifyCounter(e, peerKey) {
		return s.reject(Forged, from, fmt.Sprintf("countersignature of node %d on version %d of node %d", e.Peer, e.Version, e.Source))
	}
	for k := range es.held {
		h := &es.held[k]
		if (h.Version < e.Version && h.Round > e.Round) || (h.Version > e.Version && h.Round < e.Round) {
			return s.reject(Inconsistent, e.Source, fmt.Sprintf("version %d for round %d against version %d for round %d", e.Version, e.Round, h.Version, h.Round))
		}
		if h.Peer == e.Peer && h.Round == e.Round {
			return s.reject(OverBudget, e.Source, fmt.Sprintf("second event of node %d about node %d in round %d", e.Source, e.Peer, e.Round))
		}
	}
	ne := *e
	ne.Return = false
	cp := &copies{hop: e.Hop}
	cp.note(from, e.Hop)
	i, _ := slices.BinarySearchFunc(es.held, e.Version, func(h wire.Event, v uint64) int { return cmp.Compare(h.Version, v) })
	es.held = slices.Insert(es.held, i, ne)
	es.cps = slices.Insert(es.cps, i, cp)
	h := &es.held[i]
	s.noteFresh(es, h)
	s.stats.Events++
	return s.applyEvent(src, h, cp)
}

func (s *State) checkEventHeader(from uint32, e *wire.Event) (Reason, string) {
	switch {
	case !s.known(e.Source) && e.Source != s.self:
		return Malformed, fmt.Sprintf("event source %d not in the directory", e.Source)
	case !s.known(e.Peer) && e.Peer != s.self:
		return Malformed, fmt.Sprintf("event peer %d not in the directory", e.Peer)
	case e.Source == e.Peer:
		return Malformed, fmt.Sprintf("event of node %d about itself", e.Source)
	case e.Op != wire.EventAdd && e.Op != wire.EventRemove:
		return Malformed, fmt.Sprintf("event op %d", e.Op)
	case e.Return:
		return Malformed, "a returned countersignature is not an event to ingest"
	case (e.Hop == 0) != (e.Source == from):
		return BadHop, fmt.Sprintf("hop %d for an event of node %d sent by node %d", e.Hop, e.Source, from)
	case int(e.Hop) > s.cfg.HopLimit:
		return BadHop, fmt.Sprintf("hop %d beyond the limit %d", e.Hop, s.cfg.HopLimit)
	}
	return Accepted, ""
}

// applyEvent applies held event h's statements: the source's about the
// peer, and with a countersignature the peer's about the source.
func (s *State) applyEvent(src *peer, h *wire.Event, cp *copies) error {
	listed := h.Op == wire.EventAdd
	st := &stance{listed: listed, bilateral: h.Attested, kind: fromEvent, round: h.Round, trust: src.trust, cp: cp}
	if err := s.setStance(src, h.Peer, st); err != nil {
		return err
	}
	if !h.Attested || h.Peer == s.self {
		return nil
	}
	q := s.peer(h.Peer)
	ct := &stance{listed: listed, bilateral: true, kind: fromCounter, round: h.Round, trust: q.trust, cp: cp}
	return s.setStance(q, h.Source, ct)
}

// setStance records st as p's statement about its edge to other when it
// supersedes the held one; two contradicting event statements of the same
// round (its own event, its countersignature) are Equivocation against p,
// which signed both, and the denial is kept.
func (s *State) setStance(p *peer, other uint32, st *stance) error {
	es := p.evs()
	es.touched = true
	old := es.stances[other]
	if old != nil && old.kind != fromDigest && st.kind != fromDigest && old.round == st.round && old.listed != st.listed {
		if !st.listed {
			es.stances[other] = st // the denial is kept, whatever the arrival order
		}
		return s.reject(Equivocation, p.id, fmt.Sprintf("node %d signed both an addition and a removal of its edge to node %d in round %d", p.id, other, st.round))
	}
	if st.newer(old) {
		es.stances[other] = st
	}
	return nil
}

// noteFresh marks h for forwarding this round (the best copy: attested if
// it was upgraded).
func (s *State) noteFresh(es *eventState, h *wire.Event) {
	for k := range es.fresh {
		if es.fresh[k].Version == h.Version {
			es.fresh[k] = *h
			return
		}
	}
	es.fresh = append(es.fresh, *h)
}

// digestStance applies a source's newly accepted digest c to its stances:
// every listed peer is a one-sided "listed" statement, every peer with a
// held stance the digest omits a one-sided "not listed" one.
func (s *State) digestStance(src *peer, c *wire.Claim) {
	es := src.evs()
	es.touched = true
	mk := func(listed bool) *stance {
		return &stance{listed: listed, kind: fromDigest, round: c.Round, trust: src.trust}
	}
	// A digest that agrees with an event's statement leaves it (and its
	// attestation) in place: it resynchronises what changed, and an
	// attested edge does not decay to one-sided at the next digest.
	set := func(j uint32, listed bool) {
		old := es.stances[j]
		if st := mk(listed); st.newer(old) && (old == nil || old.kind == fromDigest || old.listed != listed) {
			es.stances[j] = st
		}
	}
	for _, j := range c.Neighbors {
		set(j, true)
	}
	for j := range es.stances { // each key once; the result does not depend on order
		if !lists(c.Neighbors, j) {
			set(j, false)
		}
	}
}

// materialize rebuilds, at the end of the round, every source's neighbour
// list from its stances (the events form's "current claim") and prunes
// its events older than MaxAge. hist keeps digests only (accept): Quorum
// compares whole lists of the same round.
func (s *State) materialize() {
	for _, id := range s.order {
		p := s.peers[id]
		es := p.events
		if es == nil {
			continue
		}
		keep, kcp := es.held[:0], es.cps[:0]
		for k, h := range es.held {
			if s.round-h.Round <= uint64(s.cfg.MaxAge) {
				keep, kcp = append(keep, h), append(kcp, es.cps[k])
			}
		}
		clear(es.cps[len(kcp):])
		es.held, es.cps = keep, kcp
		if !es.touched && es.matOK {
			continue
		}
		es.touched = false
		var nb []uint32
		var latest uint64
		if p.has {
			latest = p.claim.Round // the latest digest counts even where it changed nothing
		}
		for j, st := range es.stances {
			latest = max(latest, st.round)
			if st.listed {
				nb = append(nb, j)
			}
		}
		slices.Sort(nb)
		es.mat = wire.Claim{Source: id, Round: latest, Neighbors: nb}
		es.matOK = len(es.stances) > 0 || p.has
	}
}

// cl returns the list the layer judges p by: its current claim, or in the
// events form the list its stances make.
func (s *State) cl(p *peer) *wire.Claim {
	if s.cfg.events() {
		return &p.evs().mat
	}
	return &p.claim
}

// stanceOf returns p's statement about its edge to other in the events
// form (nil: none): the one held, or its digest's (which omits other: a
// digest's entries are held).
func (s *State) stanceOf(p *peer, other uint32) *stance {
	if p == nil || p.events == nil {
		return nil
	}
	if st := p.events.stances[other]; st != nil {
		return st
	}
	if p.has {
		// As in the lists form, an endpoint whose whole list omits the
		// edge opposes it.
		return &stance{listed: lists(p.claim.Neighbors, other), kind: fromDigest, round: p.claim.Round, trust: p.claimTrust}
	}
	return nil
}

// stanceWeight is ψ of a statement: T_topo(signer) exp(-ξ hop), times
// OneSided unless both endpoints signed it (§IV-A: one-sided claims start
// with lower confidence).
func (s *State) stanceWeight(p *peer, st *stance) float64 {
	w := WitnessWeight(st.trust, s.cfg.Xi, st.paths(p).hop)
	if !st.bilateral {
		w *= s.cfg.OneSided
	}
	return w
}

// paths returns the copies st was read from (p is its signer): a digest's
// are p's current claim's.
func (st *stance) paths(p *peer) *copies {
	if st.cp != nil {
		return st.cp
	}
	return &copies{hop: p.claim.Hop, direct0: p.direct0, via: p.via}
}

// EventForwards returns the events to forward to direct neighbours after
// this round (hop incremented), sources in id order and each source's in
// version order, chosen by ForwardDecision with the source's trust after
// the round's update; nil while a round is open. The per-source budget is
// the per-edge one Ingest applies (one event per edge per round), so every
// accepted event of a trusted source within the hop limit goes on.
func (s *State) EventForwards() []wire.Event {
	if s.open || !s.cfg.events() {
		return nil
	}
	var out []wire.Event
	for _, id := range s.order {
		p := s.peers[id]
		if p.events == nil {
			continue
		}
		fr := slices.Clone(p.events.fresh)
		slices.SortFunc(fr, func(a, b wire.Event) int { return cmp.Compare(a.Version, b.Version) })
		for _, e := range fr {
			if r := ForwardDecision(e.Hop, p.trust, 0, &s.cfg); r != Forward {
				continue
			}
			e.Hop++
			out = append(out, e)
		}
	}
	return out
}

// stancePaths returns the known paths of st for IndependentPaths and
// DisjointPaths: a countersignature never arrives from its signer itself
// (it travels inside the other endpoint's event), so it has no direct copy.
func (s *State) stancePaths(p *peer, st *stance) (bool, []uint32) {
	c := st.paths(p)
	return c.direct0 && st.kind != fromCounter, c.via
}
