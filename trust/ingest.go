package trust

import (
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/wire"
)

// checkAge refuses (reject's error) a claim or event about a future round
// or one older than MaxAge rounds; nil if its round is usable.
func (s *State) checkAge(from uint32, what string, round uint64) error {
	if round > s.round {
		return s.reject(Future, from, fmt.Sprintf("%s for round %d in round %d", what, round, s.round))
	}
	if s.round-round > uint64(s.cfg.MaxAge) {
		return s.reject(Stale, from, fmt.Sprintf("%s for round %d in round %d, max age %d", what, round, s.round, s.cfg.MaxAge))
	}
	return nil
}

// Ingest processes a claim delivered by peer `from` this round (Algorithm 2,
// lines 1–5): from must be the authenticated sender of the message that
// carried it (the driver verified the message signature, e.g. with
// wire.Validator). It returns nil when the claim became its source's
// current claim, else a *Rejection; a rejection that is evidence charges one
// q event to the peer it blames. Nothing a peer sends makes it panic.
//
// The checks run cheapest first, so floods of garbage or duplicates cost no
// signature verification:
//
//  1. form: a known source, at most MaxNeighbors neighbors, hop 0 exactly
//     when the sender is the source, and at most HopLimit; and, before a
//     signature is verified (rule 3), sorted distinct neighbors in the
//     directory without the source;
//  2. freshness: the claim's round is not in the future and at most MaxAge
//     rounds old;
//  3. version: an identical copy of the source's current claim is a
//     Duplicate (its lower hop, if any, is kept); a newer version is
//     verified, checked against the source's earlier rounds and charged to
//     its per-round budget; a version not newer is a Replay when the source
//     sent it itself, Superseded when forwarded, Equivocation when it
//     differs from the current claim under the same version.
//
// Rules 1–2 and Forged/Replay blame the sender: an honest forwarder passes
// on only claims it accepted. Equivocation, Inconsistent and OverBudget
// blame the source, whose valid signature proves it signed the claim.
func (s *State) Ingest(from uint32, c *wire.Claim) error {
	if err := s.admit("Ingest", from); err != nil {
		return err
	}
	if c == nil {
		return s.reject(Malformed, from, "nil claim")
	}
	if c.Source == s.self {
		// Its own claim coming back through a forwarder: expected, no news.
		return s.reject(Duplicate, from, "")
	}
	if r, detail := s.checkHeader(from, c); r != Accepted {
		return s.reject(r, from, detail)
	}
	if err := s.checkAge(from, "claim", c.Round); err != nil {
		return err
	}

	src := s.peer(c.Source)
	if src.has && sameClaim(&src.claim, c) {
		// Most traffic under forwarding: settled before the neighbor list
		// is checked again (the held copy passed that check).
		if c.Hop < src.claim.Hop {
			s.lowerHop(src, c)
		}
		notePath(src, from, c.Hop)
		return s.reject(Duplicate, from, "")
	}
	pub, _ := s.dir.Key(c.Source) // checkHeader checked the source is known
	switch {
	case c.Version > src.seen:
		if r, detail := s.checkNeighbors(c); r != Accepted {
			return s.reject(r, from, detail)
		}
		if !s.cfg.Cache.VerifyClaim(c, pub) {
			return s.reject(Forged, from, fmt.Sprintf("claim of node %d, version %d", c.Source, c.Version))
		}
		// From here the source provably signed c: record the version so a
		// replay of it is never charged to the source again.
		src.seen = c.Version
		if src.has && c.Round < src.claim.Round {
			return s.reject(Inconsistent, c.Source, fmt.Sprintf("version %d for round %d after round %d", c.Version, c.Round, src.claim.Round))
		}
		if src.budgetRound != c.Round {
			src.budgetRound, src.budgetUsed = c.Round, 0
		}
		if src.budgetUsed >= s.cfg.Budget {
			return s.reject(OverBudget, c.Source, fmt.Sprintf("claim %d of node %d for round %d, budget %d", src.budgetUsed+1, c.Source, c.Round, s.cfg.Budget))
		}
		src.budgetUsed++
		s.accept(src, c)
		notePath(src, from, c.Hop)
		if s.cfg.events() {
			s.digestStance(src, &src.claim) // the claim is the source's digest
		}
		return nil
	case src.has && c.Version == src.claim.Version:
		if r, detail := s.checkNeighbors(c); r != Accepted {
			return s.reject(r, from, detail)
		}
		if !s.cfg.Cache.VerifyClaim(c, pub) {
			return s.reject(Forged, from, fmt.Sprintf("claim of node %d, version %d", c.Source, c.Version))
		}
		return s.reject(Equivocation, c.Source, fmt.Sprintf("two claims of node %d under version %d", c.Source, c.Version))
	case c.Hop == 0:
		return s.reject(Replay, from, fmt.Sprintf("version %d, seen %d", c.Version, src.seen))
	default:
		return s.reject(Superseded, from, "")
	}
}

// admit applies the checks every delivery starts with: an open round and
// a sender in the directory (the node's own message coming back is a
// Duplicate).
func (s *State) admit(call string, from uint32) error {
	if err := s.checkOpen(call); err != nil {
		return err
	}
	if !s.known(from) {
		if from == s.self {
			return s.reject(Duplicate, from, "the node's own message")
		}
		return s.reject(UnknownSender, from, fmt.Sprintf("node %d not in the directory", from))
	}
	return nil
}

// checkHeader applies rule 1 of Ingest but for the neighbor list.
func (s *State) checkHeader(from uint32, c *wire.Claim) (Reason, string) {
	if _, ok := s.dir.Key(c.Source); !ok {
		return Malformed, fmt.Sprintf("source %d not in the directory", c.Source)
	}
	if (c.Hop == 0) != (c.Source == from) {
		return BadHop, fmt.Sprintf("hop %d for a claim of node %d sent by node %d", c.Hop, c.Source, from)
	}
	if int(c.Hop) > s.cfg.HopLimit {
		return BadHop, fmt.Sprintf("hop %d beyond the limit %d", c.Hop, s.cfg.HopLimit)
	}
	if len(c.Neighbors) > s.cfg.MaxNeighbors {
		return Malformed, fmt.Sprintf("%d neighbors, limit %d", len(c.Neighbors), s.cfg.MaxNeighbors)
	}
	return Accepted, ""
}

// checkNeighbors applies the neighbor-list part of rule 1.
func (s *State) checkNeighbors(c *wire.Claim) (Reason, string) {
	for i, id := range c.Neighbors {
		if i > 0 && id <= c.Neighbors[i-1] {
			return Malformed, fmt.Sprintf("neighbor %d after %d", id, c.Neighbors[i-1])
		}
		if id == c.Source {
			return Malformed, fmt.Sprintf("node %d lists itself", id)
		}
		if _, ok := s.dir.Key(id); !ok {
			return Malformed, fmt.Sprintf("neighbor %d not in the directory", id)
		}
	}
	return Accepted, ""
}

// sameClaim reports whether a and b are the same signed claim (hop aside).
func sameClaim(a, b *wire.Claim) bool {
	return a.Version == b.Version && a.Sig == b.Sig && a.Source == b.Source && a.Round == b.Round &&
		slices.Equal(a.Neighbors, b.Neighbors)
}

// accept makes c the source's current claim, weighted by the source's trust
// now (ψ is computed on processing, Algorithm 2 line 6).
func (s *State) accept(src *peer, c *wire.Claim) {
	cp := *c
	cp.Neighbors = slices.Clone(c.Neighbors)
	src.has, src.claim, src.claimTrust = true, cp, src.trust
	src.fresh = append(src.fresh, cp)
	src.direct0, src.via = false, src.via[:0]
	if n := len(src.hist); n > 0 && src.hist[n-1].Round == cp.Round {
		src.hist[n-1] = cp
	} else {
		src.hist = append(src.hist, cp)
	}
	for len(src.hist) > 0 && s.round-src.hist[0].Round > uint64(s.cfg.MaxAge) {
		src.hist = src.hist[1:]
	}
	s.stats.Accepted++
}

// lowerHop keeps the shortest path a claim arrived by: its witness weight
// must not depend on which copy came first.
func (s *State) lowerHop(src *peer, c *wire.Claim) {
	src.claim.Hop = c.Hop
	for k := range src.fresh {
		if src.fresh[k].Version == c.Version {
			src.fresh[k].Hop = c.Hop
		}
	}
}

// notePath records a known path of the source's current claim: the copy
// the source sent itself (hop 0) or a one-hop forward by from. Longer paths
// are not recorded: only their last forwarder is known.
func notePath(src *peer, from uint32, hop uint8) {
	switch hop {
	case 0:
		src.direct0 = true
	case 1:
		if i, ok := slices.BinarySearch(src.via, from); !ok {
			src.via = slices.Insert(src.via, i, from)
		}
	}
}
