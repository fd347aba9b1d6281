package sim

import (
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// localAttacks are the attacks a Byzantine node computes from what it has
// itself (its own payload and its random stream): the ones a driver that
// runs each node in its own process can run. The others (alie, ipm,
// min_max, min_sum, fang_trim, adaptive) read the omniscient View of every
// honest payload of the round.
var localAttacks = []string{"none", "gaussian", "sign_flip", "scaling", "random", "ana_proportional", "label_flip", "dynamic"}

// Adversary is one Byzantine node's adversary, for a driver that runs the
// node alone (one process per node): it rewrites the node's outbox of a
// phase exactly as Run's adversary does, from what the node has itself.
// Attacks that need the omniscient view are refused by NewAdversary.
type Adversary struct {
	id       int
	cfg      AdversaryConfig
	byz      []bool
	identity *wire.Identity
	last     map[int]wire.Claim
	// seq numbers the node's messages over a round's exchange phases.
	seq      uint64
	seqRound int
}

// AdversaryConfig is what every Byzantine node knows of its coalition
// (Config's fields of the same names).
type AdversaryConfig struct {
	Nodes      int
	Byzantine  []int
	Attack     attack.Attack
	SameForAll bool
	Claims     ClaimAttack
	Seed       uint64
}

// NewAdversary returns the adversary of Byzantine node id, who signs with
// identity. It refuses an attack that needs the omniscient view, naming it.
func NewAdversary(cfg AdversaryConfig, id int, identity *wire.Identity) (*Adversary, error) {
	if err := cfg.Claims.Validate(); err != nil {
		return nil, err
	}
	if a := cfg.Attack; a != nil && !slices.Contains(localAttacks, a.Name()) {
		return nil, fmt.Errorf("attack %q needs the omniscient view of every honest payload of the round, which no node process has; attacks a process can run: %v", a.Name(), localAttacks)
	}
	byz := make([]bool, cfg.Nodes)
	for _, b := range cfg.Byzantine {
		if b < 0 || b >= cfg.Nodes {
			return nil, fmt.Errorf("sim: Byzantine node %d outside [0, %d)", b, cfg.Nodes)
		}
		byz[b] = true
	}
	if id < 0 || id >= cfg.Nodes || !byz[id] {
		return nil, fmt.Errorf("sim: node %d is not one of the Byzantine nodes %v", id, cfg.Byzantine)
	}
	return &Adversary{id: id, cfg: cfg, byz: byz, identity: identity, last: map[int]wire.Claim{}, seqRound: -1}, nil
}

// Rewrite returns what the node sends instead of its outbox msgs in the
// round (graph g): its claims rewritten by the claim attack, then its
// vectors crafted by the attack (a privacy layer's messages unchanged in
// between), numbered over the round's phases and signed, as Run sends
// them.
func (a *Adversary) Rewrite(round int, g *topology.Graph, msgs []*wire.Message) ([]*wire.Message, error) {
	claims, err := claimsOf(a.cfg.Claims, a.cfg.Byzantine, a.byz, a.identity, round, g, a.id, msgs, a.last)
	if err != nil {
		return nil, err
	}
	var vecs []*wire.Message
	if a.cfg.Attack == nil {
		for _, m := range msgs {
			if m.Kind == wire.KindVector {
				c := *m
				vecs = append(vecs, &c)
			}
		}
	} else {
		// A local attack reads no view but the round.
		view := func(tag string) *attack.View { return &attack.View{Round: round, Tag: tag} }
		if vecs, err = craftAs(a.cfg.Attack, a.cfg.SameForAll, a.cfg.Seed, round, g, a.id, msgs, view); err != nil {
			return nil, err
		}
	}
	evs, err := eventsOf(a.cfg.Claims, a.byz, a.id, msgs)
	if err != nil {
		return nil, err
	}
	claims = append(claims, evs...)
	for _, m := range msgs {
		if m.Kind != wire.KindVector && m.Kind != wire.KindClaim && m.Kind != wire.KindEvent {
			c := *m // a privacy layer's message, as the node made it
			claims = append(claims, &c)
		}
	}
	if round != a.seqRound {
		a.seq, a.seqRound = 0, round
	}
	out, err := signAs(a.identity, a.seq, claims, vecs, nil)
	a.seq += uint64(len(out))
	return out, err
}
