package adversary

import (
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// Topology-liar variants (DMTT's topology liar).
const (
	LiarOmission  = "omission"  // claims only the Byzantine coalition
	LiarInflation = "inflation" // claims its true neighbors plus the coalition
)

// ClaimAttack is what Byzantine nodes do with their topology claims (nodes
// with a trust layer only). The adversary re-signs every claim of its own
// it sends, with versions it numbers itself (8 per round), so the variants
// combine.
type ClaimAttack struct {
	// Liar is "", LiarOmission or LiarInflation.
	Liar string
	// Forge adds, every round, a claim in the name of an honest neighbor
	// whose source signature is not the source's (the validator refuses
	// it: bad claim signature, evidence against the Byzantine sender).
	Forge bool
	// Replay re-sends, every round, the node's claim of the previous round
	// (an older version from its source: a replay).
	Replay bool
	// Flood sends three more new versions of the round's claim, two more
	// than the per-source budget of 2 allows (over budget).
	Flood bool
}

// Active reports whether any claim attack is set.
func (c ClaimAttack) Active() bool { return c.Liar != "" || c.Forge || c.Replay || c.Flood }

// Validate checks the liar variant.
func (c ClaimAttack) Validate() error {
	switch c.Liar {
	case "", LiarOmission, LiarInflation:
		return nil
	}
	return fmt.Errorf("adversary: topology liar %q, want %q or %q", c.Liar, LiarOmission, LiarInflation)
}

// floodExtra is how many extra claims a flooder sends per round.
const floodExtra = 3

// claimsOf rewrites the claim messages of Byzantine node b for the round:
// its own claim (lied about, numbered by the adversary), the attack
// claims, and the claims its layer forwards, unchanged. byzantine lists
// every Byzantine node and byzSet says who is; last holds each Byzantine node's
// own claim of the previous round (for Replay) and is updated. The
// messages are returned unsigned, without sequence numbers.
func claimsOf(ca ClaimAttack, byzantine []int, byzSet []bool, id *wire.Identity, round int, g *topology.Graph, b int, msgs []*wire.Message, last map[int]wire.Claim) ([]*wire.Message, error) {
	var out []*wire.Message
	claimMsg := func(c wire.Claim) *wire.Message {
		return &wire.Message{Header: wire.Header{Kind: wire.KindClaim, From: uint32(b), To: wire.Broadcast, Round: uint64(round)}, Claim: c}
	}
	for _, m := range msgs {
		if m.Kind != wire.KindClaim {
			continue
		}
		c := m.Claim
		if c.Source != uint32(b) || !ca.Active() {
			out = append(out, claimMsg(c)) // a forward, or no claim attack
			continue
		}
		coalition := make([]uint32, 0, len(byzantine))
		for _, o := range byzantine {
			if o != b {
				coalition = append(coalition, uint32(o))
			}
		}
		switch ca.Liar {
		case LiarOmission:
			c.Neighbors = coalition
		case LiarInflation:
			nb := append(slices.Clone(c.Neighbors), coalition...)
			slices.Sort(nb)
			c.Neighbors = slices.Compact(nb)
		default:
			c.Neighbors = slices.Clone(c.Neighbors)
		}
		c.Version = uint64(round)*8 + 1
		if err := wire.SignClaim(&c, id); err != nil {
			return nil, err
		}
		out = append(out, claimMsg(c))
		if ca.Flood {
			for k := range floodExtra {
				f := c
				f.Version = c.Version + 1 + uint64(k)
				if err := wire.SignClaim(&f, id); err != nil {
					return nil, err
				}
				out = append(out, claimMsg(f))
			}
		}
		if prev, ok := last[b]; ok && ca.Replay {
			out = append(out, claimMsg(prev))
		}
		if ca.Forge {
			if h := firstHonest(g.Out(b), byzSet); h >= 0 {
				f := wire.Claim{Source: uint32(h), Round: uint64(round), Version: 1<<40 + uint64(round), Hop: 1, Sig: c.Sig}
				for _, o := range c.Neighbors {
					if o != uint32(h) {
						f.Neighbors = append(f.Neighbors, o)
					}
				}
				out = append(out, claimMsg(f))
			}
		}
		last[b] = c
	}
	return out, nil
}

func firstHonest(ids []int, byz []bool) int {
	for _, j := range ids {
		if !byz[j] {
			return j
		}
	}
	return -1
}

// eventsOf rewrites Byzantine node b's edge-event messages (the trust
// layer's events form, package trust "Signed edge events") for the liar:
// an omission liar withholds every statement about its edges to honest
// nodes — its own events about them (proposals and broadcasts) and its
// countersignatures of theirs — so the honest endpoint's events stay
// one-sided and the liar's digest, rewritten by claimsOf, omits them.
// Forwarded events pass, as forwarded claims do. An inflation liar's
// events pass: they are its true edges, and its digest adds the
// coalition. It does not co-sign fabricated events among the coalition:
// they would need the adversary to renumber the liar's event versions and
// carry over the countersignatures its peers return for them (not done;
// bench/dmtttrust does it, driving the trust states directly). Messages
// left without events are dropped; the rest are returned unsigned.
func eventsOf(ca ClaimAttack, byzSet []bool, b int, msgs []*wire.Message) ([]*wire.Message, error) {
	var out []*wire.Message
	honest := func(id uint32) bool { return int(id) < len(byzSet) && !byzSet[id] }
	for _, m := range msgs {
		if m.Kind != wire.KindEvent {
			continue
		}
		if ca.Liar != LiarOmission {
			c := *m
			out = append(out, &c)
			continue
		}
		evs, err := wire.DecodeEvents(nil, m.Blob.Data, len(m.Blob.Data)/wire.EventSize)
		if err != nil {
			return nil, fmt.Errorf("adversary: node %d's own event message: %w", b, err)
		}
		keep := evs[:0]
		for _, e := range evs {
			mine := (e.Source == uint32(b) && !e.Return && honest(e.Peer)) || (e.Return && e.Peer == uint32(b) && honest(e.Source))
			if !mine {
				keep = append(keep, e)
			}
		}
		if len(keep) == 0 {
			continue
		}
		c := *m
		c.Blob.Data = wire.AppendEvents(nil, keep)
		out = append(out, &c)
	}
	return out, nil
}
