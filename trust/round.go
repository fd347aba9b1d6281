package trust

import (
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/wire"
)

// EndRound closes the round (Algorithm 1, lines 7–24): it updates link
// reliability and N_dir, evaluates every edge the current claims speak of,
// derives each source's evidence, updates source trust once per source with
// new evidence, and selects the claims to forward.
func (s *State) EndRound() (Report, error) {
	if err := s.checkOpen("EndRound"); err != nil {
		return Report{}, err
	}
	s.open = false
	s.updateLinks()
	if s.cfg.events() {
		s.materialize()
	}
	rep := Report{Round: s.round}
	for _, id := range s.order {
		p := s.peers[id]
		p.before = p.trust
		s.selfInclusion(p)
	}
	rep.Accepted, rep.Added, rep.Removed = s.evaluate()
	for _, id := range s.order {
		p := s.peers[id]
		s.observe(p)
		if p.ev.Empty() {
			continue
		}
		p.beta = p.beta.Update(p.ev, &s.cfg)
		p.trust = p.beta.Trust(&s.cfg)
		p.total = p.total.Add(p.ev)
		rep.Updates = append(rep.Updates, Update{Peer: id, Evidence: p.ev, Trust: p.trust})
	}
	s.selectForwards()
	return rep, nil
}

// updateLinks applies the reliability EMA to every peer a message was
// expected from (a member of N_dir) or arrived from, and the timeout.
func (s *State) updateLinks() {
	for _, id := range s.order {
		p := s.peers[id]
		if !p.direct && !p.heard {
			continue
		}
		p.reliability = Reliability(p.reliability, s.cfg.Rho, p.heard)
		if p.heard {
			p.direct, p.silent = true, 0
			continue
		}
		p.silent++
		if p.silent >= s.cfg.Timeout {
			p.direct = false
		}
	}
}

// current reports whether p's latest claim still counts as a witness.
// In the events form a source's list stays current for DigestEvery rounds
// more: a source whose edges do not change sends nothing between digests.
func (s *State) current(p *peer) bool {
	if s.cfg.events() {
		return p != nil && p.events != nil && p.events.matOK &&
			s.round-p.events.mat.Round <= uint64(s.cfg.MaxAge+s.cfg.DigestEvery)
	}
	return p != nil && p.has && s.round-p.claim.Round <= uint64(s.cfg.MaxAge)
}

// lists reports whether claim c lists node j.
func lists(nb []uint32, j uint32) bool {
	_, ok := slices.BinarySearch(nb, j)
	return ok
}

// pools gathers the witnesses of edge e (Eqs. 3–4). A claim is its source's
// neighbor list, so the witnesses of e are its endpoints: one with a current
// claim supports e if the claim lists the other endpoint, and opposes it
// otherwise. Under Rules a witness may not count (witness).
func (s *State) pools(e Edge) Pools {
	var p Pools
	var paths []uint32 // forwarders of supporting one-hop copies
	for _, w := range [2][2]uint32{{e.U, e.V}, {e.V, e.U}} {
		q := s.peers[w[0]]
		if !s.witness(q, w[1]) {
			continue
		}
		psi, direct0, via := WitnessWeight(q.claimTrust, s.cfg.Xi, q.claim.Hop), q.direct0, q.via
		listed := lists(q.claim.Neighbors, w[1])
		if st := s.stanceOf(q, w[1]); s.cfg.events() {
			psi, listed = s.stanceWeight(q, st), st.listed
			direct0, via = s.stancePaths(q, st)
		}
		v := s.verified(q)
		if listed {
			p.Support += psi
			p.Supporters++
			p.VerifiedSupport = p.VerifiedSupport || v
			if direct0 {
				p.Paths++
			}
			for _, f := range via {
				if f != w[1] {
					paths = append(paths, f)
				}
			}
		} else {
			p.Oppose += psi
			p.Opposers++
			p.VerifiedOppose = p.VerifiedOppose || v
		}
	}
	// A forwarder of both endpoints' claims is one internal node: one path.
	slices.Sort(paths)
	p.Paths += len(slices.Compact(paths))
	return p
}

// witness reports whether q's current claim counts as a witness of an edge
// between q and other: it must be current and, under Rules, come from a
// source not in conflict with this node's observations, by a known path not
// through other (IndependentPaths).
func (s *State) witness(q *peer, other uint32) bool {
	if !s.current(q) {
		return false
	}
	direct0, via := q.direct0, q.via
	if s.cfg.events() {
		st := s.stanceOf(q, other)
		if st == nil {
			return false // q signed nothing about this edge
		}
		direct0, via = s.stancePaths(q, st)
	}
	r := &s.cfg.Rules
	if r.Conflict && s.inConflict(q) {
		return false
	}
	if r.IndependentPaths && !direct0 && !slices.ContainsFunc(via, func(f uint32) bool { return f != other }) {
		return false
	}
	return true
}

// inConflict reports whether p contradicted this node's own observations
// more often than it confirmed them (self-inclusion x > d, ever, this
// round included).
func (s *State) inConflict(p *peer) bool {
	return p.total.X+p.ev.X > p.total.D+p.ev.D
}

// verified reports whether this node confirmed p directly (d >= 1, more
// confirmations than contradictions, ever) and trusts it (T_topo >=
// TauTrust): a witness whose word counts against others (Rules.Quorum).
// Trust is taken as it was when the round ended (before), so no judgment
// depends on the order in which sources are updated.
func (s *State) verified(p *peer) bool {
	d := p.total.D + p.ev.D
	return d >= 1 && d > p.total.X+p.ev.X && p.before >= s.cfg.TauTrust
}

// evaluate decides every candidate edge between two other nodes — those
// listed by a current claim, and those already in the view — and rebuilds
// the view. Edges at the node itself are known directly (N_dir) and are not
// pooled. It returns the view's size and how many edges entered and left.
func (s *State) evaluate() (accepted, added, removed int) {
	var cand []Edge
	for _, id := range s.order {
		p := s.peers[id]
		if !s.current(p) {
			continue
		}
		for _, j := range s.cl(p).Neighbors {
			if j != s.self {
				cand = append(cand, MakeEdge(id, j))
			}
		}
	}
	cand = append(cand, s.view...)
	slices.SortFunc(cand, compareEdges)
	cand = slices.Compact(cand)

	s.evals = s.evals[:0]
	view := s.view[:0:0]
	for _, e := range cand {
		p := s.pools(e)
		_, was := slices.BinarySearchFunc(s.view, e, compareEdges)
		now := p.Decide(was, &s.cfg)
		s.evals = append(s.evals, EdgeStatus{Edge: e, Pools: p, Confidence: p.Confidence(s.cfg.Epsilon), Accepted: now})
		if now {
			view = append(view, e)
		}
		switch {
		case now && !was:
			added++
		case was && !now:
			removed++
		}
	}
	s.view = view
	return len(view), added, removed
}

// status returns this round's evaluation of e.
func (s *State) status(e Edge) (EdgeStatus, bool) {
	i, ok := slices.BinarySearchFunc(s.evals, e, func(a EdgeStatus, e Edge) int { return compareEdges(a.Edge, e) })
	if !ok {
		return EdgeStatus{}, false
	}
	return s.evals[i], true
}

// observe adds to p.ev (which may already hold q events from Ingest and
// d / x from selfInclusion) the evidence of this round (Algorithm 4, line
// 1; package doc, "Evidence" and "Evidence rules"):
//
//   - f, c, z: at most one each, from the source's current claim if it was
//     accepted this round. z if it lists an edge rejected with
//     χ < 1 - τ_add. Otherwise, if the claim drew no contradiction (x), it
//     earns f for being fresh and consistent, and c if it lists an edge now
//     in the trusted view whose other endpoint, trusted (T >= τ_trust),
//     also attests it. A contradicted claim is neither consistent nor
//     credibly corroborated; judging only the current claim keeps the
//     evidence independent of the order in which copies and versions
//     arrived, and gives a source nothing for sending more claims.
func (s *State) observe(p *peer) {
	if len(p.fresh) == 0 && (p.events == nil || len(p.events.fresh) == 0) {
		return
	}
	if s.cfg.events() && !s.current(p) {
		return // only events of other sources' edges (countersignatures) arrived
	}
	r := &s.cfg.Rules
	// Rules.Quorum compares lists of the same round. In the events form a
	// source's list between digests is assembled from events that reach
	// this node by different paths at different times, so only digests
	// (whole signed lists) are compared, in the round one arrives.
	quorum := r.Quorum && (!s.cfg.events() || len(p.fresh) > 0)
	corroborated, severe := false, false
	for _, j := range s.cl(p).Neighbors {
		if j == s.self {
			continue
		}
		st, _ := s.status(MakeEdge(p.id, j)) // every edge of a current claim is evaluated
		if st.Accepted {
			q := s.peers[j]
			if s.current(q) && q.trust >= s.cfg.TauTrust && lists(s.cl(q).Neighbors, p.id) &&
				(!r.Quorum || s.verified(q)) && (!r.Conflict || !s.inConflict(q)) {
				corroborated = true
			}
		} else if !r.Quorum {
			severe = severe || st.Pools.severe(&s.cfg)
		} else if !quorum || !lists(p.claim.Neighbors, j) {
			continue
		} else if qc, ok := s.sameRound(s.peers[j], p); ok && !lists(qc.Neighbors, p.id) && s.decides(s.peers[j], p, st, false) {
			severe = true // a verified endpoint denies the edge for the same round
		}
	}
	if severe || (quorum && s.omitsAttested(p)) {
		p.ev.Z++
		return
	}
	if p.ev.X > 0 || (r.Conflict && s.inConflict(p)) {
		return
	}
	p.ev.F++
	if corroborated {
		p.ev.C++
	}
}

// selfInclusion is the self-inclusion check (§V-D), done for every peer
// before the edges are evaluated, so Rules see this round's observations:
// if p delivered a message this round and its current claim is for this
// round, the claim lists this node (d) or omits it (x). A claim listing
// this node although nothing arrived from p is no evidence: links may be
// asymmetric.
func (s *State) selfInclusion(p *peer) {
	// In the events form the source's list is as of its latest statement
	// (a source whose edges did not change sends nothing): its list counts
	// while current, and an honest neighbour's events about this node
	// arrive in the round the edge formed.
	fresh := p.has && p.claim.Round == s.round
	if s.cfg.events() {
		fresh = s.current(p)
	}
	if p.heard && fresh {
		if lists(s.cl(p).Neighbors, s.self) {
			p.ev.D++
		} else {
			p.ev.X++
		}
	}
}

// sameRound returns q's claim of p's current claim's round, when q can
// count against p (Rules.Quorum): q is verified and not in conflict, and
// it signed a claim of that round this node still holds — on a mobile
// graph an edge that formed or broke between two rounds is no
// contradiction, so claims are compared round for round.
func (s *State) sameRound(q, p *peer) (*wire.Claim, bool) {
	if q == nil || !s.verified(q) || s.inConflict(q) {
		return nil, false
	}
	for k := len(q.hist) - 1; k >= 0; k-- {
		if q.hist[k].Round == p.claim.Round {
			return &q.hist[k], true
		}
	}
	return nil, false
}

// decides reports whether verified witness q's word about the edge between
// q and p (whose evaluation is st; q attests it or, !attests, denies it)
// prevails over p's (Rules.Quorum): by
// default when the pools decide for q (χ, or 1 - χ when q denies the
// edge, >= τ_add, with the hop discount of ψ); with Rules.Unhopped when
// T_q / (T_q + T_p) >= τ_add, trust as it was when the round ended and a
// p in conflict weighing nothing. The hop count says how far a claim
// travelled, not who is right: with it a verified liar next to the node
// can frame an honest endpoint two hops away; without it a liar the node
// never met is contradicted only once the witness is 1.5 times more
// trusted (docs/results/dmtt.md measures both).
func (s *State) decides(q, p *peer, st EdgeStatus, attests bool) bool {
	if !s.cfg.Rules.Unhopped {
		if attests {
			return st.Pools.VerifiedSupport && st.Confidence >= s.cfg.TauAdd
		}
		return st.Pools.severe(&s.cfg)
	}
	wp := p.before
	if s.cfg.Rules.Conflict && s.inConflict(p) {
		wp = 0
	}
	return q.before/(q.before+wp+s.cfg.Epsilon) >= s.cfg.TauAdd
}

// omitsAttested reports whether p's current claim omits an edge at p that
// a verified witness attests for the same round and the pools decide for
// (χ >= τ_add): the claim is contradicted by a trusted quorum
// (Rules.Quorum, §IV-D).
func (s *State) omitsAttested(p *peer) bool {
	for _, id := range s.order {
		if id == p.id || lists(p.claim.Neighbors, id) {
			continue
		}
		qc, ok := s.sameRound(s.peers[id], p)
		if !ok || !lists(qc.Neighbors, p.id) {
			continue
		}
		if st, ok := s.status(MakeEdge(p.id, id)); ok && s.decides(s.peers[id], p, st, true) {
			return true
		}
	}
	return false
}

// ForwardReason says whether a claim accepted this round is forwarded.
type ForwardReason uint8

const (
	Forward     ForwardReason = iota
	LowTrust                  // T_topo(source) < τ_fwd
	BudgetSpent               // Budget claims of this source already forwarded this round
	HopLimit                  // hop >= H: one more hop would exceed the limit

	NumForwardReasons int = iota
)

func (r ForwardReason) String() string {
	switch r {
	case Forward:
		return "forward"
	case LowTrust:
		return "low_trust"
	case BudgetSpent:
		return "budget_spent"
	case HopLimit:
		return "hop_limit"
	}
	return fmt.Sprintf("forward_reason(%d)", uint8(r))
}

// ForwardDecision is Algorithm 3 for a claim that already passed the
// signature and freshness checks (Ingest): forward it only if its source's
// trust is at least τ_fwd, fewer than Budget claims of that source were
// forwarded this round (used), and its hop is below H.
func ForwardDecision(hop uint8, trust float64, used int, c *Config) ForwardReason {
	switch {
	case trust < c.TauFwd:
		return LowTrust
	case used >= c.Budget:
		return BudgetSpent
	case int(hop) >= c.HopLimit:
		return HopLimit
	}
	return Forward
}

// selectForwards applies ForwardDecision to the claims accepted this round,
// sources in id order and each source's claims in version order, with the
// source's trust after this round's update (Algorithm 1 forwards after
// updating trust).
func (s *State) selectForwards() {
	s.forwards = s.forwards[:0]
	for _, id := range s.order {
		p := s.peers[id]
		used := 0
		for _, c := range p.fresh {
			r := ForwardDecision(c.Hop, p.trust, used, &s.cfg)
			if r != Forward {
				s.stats.Refused[r]++
				continue
			}
			c.Hop++
			c.Neighbors = slices.Clone(c.Neighbors)
			s.forwards = append(s.forwards, c)
			s.stats.Forwarded++
			used++
		}
	}
}

// Forwards returns the claims to forward to direct neighbors after this
// round (hop already incremented), in source id order; nil while a round is
// open. The caller owns the returned claims.
func (s *State) Forwards() []wire.Claim {
	if s.open {
		return nil
	}
	return slices.Clone(s.forwards)
}
