package adversary

import (
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// Config is what the adversary knows of its coalition: every Byzantine
// node knows all of it.
type Config struct {
	Nodes int
	// Byzantine is the coalition, sorted (Choose).
	Byzantine []int
	// Attack crafts what the coalition's vectors become (nil: they go out
	// as the nodes made them).
	Attack attack.Attack
	// SameForAll makes each Byzantine vector message one crafted vector
	// sent to every recipient, from the attack's stream for (seed,
	// sender, round), instead of one per recipient (LIGHTYEAR's
	// malfunctions).
	SameForAll bool
	// Claims is what the coalition does with its topology claims (nodes
	// with a trust layer only); the zero value sends them as made.
	Claims ClaimAttack
	// Inflate, in asynchronous timing (RewriteAt), numbers each Byzantine
	// message this many steps ahead of its sender's step: a claim no
	// receiver can check, which makes the message look fresh (staleness
	// 0) to every receiver not that far ahead.
	Inflate int
	Seed    uint64
}

// localAttacks are the attacks a Byzantine node computes from what it has
// itself (its own payload and its random stream): the ones a driver that
// runs each node in its own process can run. The others (alie, ipm,
// min_max, min_sum, fang_trim, adaptive, …) read the omniscient View of
// every honest payload of the round.
var localAttacks = []string{"none", "gaussian", "sign_flip", "scaling", "random", "ana_proportional", "label_flip", "dynamic"}

// CheckLocal reports whether cfg's adversary can run inside each
// Byzantine node's own process: its attack must need no view of the
// honest payloads (Alone refuses the others, naming them).
func CheckLocal(cfg Config) error {
	if err := cfg.Claims.Validate(); err != nil {
		return err
	}
	if a := cfg.Attack; a != nil && len(cfg.Byzantine) > 0 && !slices.Contains(localAttacks, a.Name()) {
		return fmt.Errorf("attack %q needs the omniscient view of every honest payload of the round, which no node process has; attacks a process can run: %v", a.Name(), localAttacks)
	}
	return nil
}

// Adversary rewrites the outboxes of the Byzantine nodes it speaks for
// (those whose keys it holds), round after round. The same pipeline runs
// in every driver: the simulator holds every Byzantine key and hands
// Rewrite every node's outbox (the omniscient view); a node process holds
// its own key and hands only its own outbox (Alone).
type Adversary struct {
	cfg  Config
	byz  []bool
	keys []*wire.Identity // by id; non-nil for the nodes spoken for
	held []int            // the Byzantine nodes spoken for, sorted
	memo *wire.DigestMemo
	// prevViews are last round's settled views, by tag, for attacks that
	// read history (attack.UsesPrevious).
	prevViews map[string]*attack.View
	// lastClaims are each Byzantine node's own claim of the previous
	// round, for ClaimAttack.Replay.
	lastClaims map[int]wire.Claim
	// seq is the last sequence number each Byzantine node's messages got
	// in round seqRound (numbers continue over a round's phases).
	seq      []uint64
	seqRound int
	// lazy is the phase whose crafted vectors are not all made yet
	// (RewriteLazy), until its Close.
	lazy *Lazy
	// async is RewriteAt's state (asynchronous timing), nil until used.
	async *asyncState
	// alone: the adversary of one node process (Alone), whose attack
	// needs no honest payload, so RewriteAt crafts without any known.
	alone bool
}

// New returns the adversary of every Byzantine node whose key keys holds
// (keys is indexed by id, one entry per node; the simulator passes every
// node's). It signs with those keys, noting the digests in memo if it is
// not nil (the simulator's wire.DigestMemo).
func New(cfg Config, keys []*wire.Identity, memo *wire.DigestMemo) (*Adversary, error) {
	if len(keys) != cfg.Nodes {
		return nil, fmt.Errorf("adversary: %d keys for %d nodes", len(keys), cfg.Nodes)
	}
	if err := cfg.Claims.Validate(); err != nil {
		return nil, err
	}
	a := &Adversary{cfg: cfg, byz: make([]bool, cfg.Nodes), keys: keys, memo: memo,
		lastClaims: map[int]wire.Claim{}, seq: make([]uint64, cfg.Nodes), seqRound: -1}
	for _, b := range cfg.Byzantine {
		if b < 0 || b >= cfg.Nodes {
			return nil, fmt.Errorf("adversary: Byzantine node %d outside [0, %d)", b, cfg.Nodes)
		}
		if a.byz[b] {
			return nil, fmt.Errorf("adversary: Byzantine node %d listed twice (use Choose)", b)
		}
		a.byz[b] = true
		if keys[b] != nil {
			a.held = append(a.held, b)
		}
	}
	slices.Sort(a.held)
	return a, nil
}

// Alone returns the adversary of Byzantine node id run in its own process,
// signing with key: it sees only the node's own outbox, so it refuses an
// attack that needs the honest payloads (CheckLocal).
func Alone(cfg Config, id int, key *wire.Identity) (*Adversary, error) {
	if err := CheckLocal(cfg); err != nil {
		return nil, err
	}
	if id < 0 || id >= cfg.Nodes || !slices.Contains(cfg.Byzantine, id) {
		return nil, fmt.Errorf("adversary: node %d is not one of the Byzantine nodes %v", id, cfg.Byzantine)
	}
	if key == nil {
		return nil, fmt.Errorf("adversary: Byzantine node %d has no key to sign with", id)
	}
	keys := make([]*wire.Identity, cfg.Nodes)
	keys[id] = key
	a, err := New(cfg, keys, nil)
	if err != nil {
		return nil, err
	}
	a.alone = true
	return a, nil
}

// RewriteOne is Rewrite for an adversary speaking for node id alone: it
// returns what the node sends instead of msgs.
func (a *Adversary) RewriteOne(round int, g *topology.Graph, id int, msgs []*wire.Message) ([]*wire.Message, error) {
	outbox := make([][]*wire.Message, a.cfg.Nodes)
	outbox[id] = msgs
	if err := a.Rewrite(round, g, outbox); err != nil {
		return nil, err
	}
	return outbox[id], nil
}

// Rewrite replaces, in outbox (one phase's messages, indexed by sender
// id), the messages of every Byzantine node the adversary speaks for: its
// claims as the claim attack rewrites them (claimsOf, eventsOf), a privacy
// layer's messages unchanged (the node runs the honest protocol on what
// it trained; a data attack poisons that), then one crafted vector
// message per out-neighbour and vector message (one per message with
// SameForAll), all numbered over the round's phases in that order and
// signed with the node's key.
//
// The attack's view of a tag holds the honest payloads of that tag found
// in outbox, in sender-id order: every honest node's in the simulator,
// none in a node process (where only local attacks run). It is built here,
// by the driver's adversary, so no honest code ever sees it.
func (a *Adversary) Rewrite(round int, g *topology.Graph, outbox [][]*wire.Message) error {
	if len(a.held) == 0 {
		return nil
	}
	if err := a.begin(round, outbox); err != nil {
		return err
	}
	claims, err := a.claimsAll(round, g, outbox)
	if err != nil {
		return err
	}
	if a.cfg.Attack == nil {
		return a.sendUncrafted(claims, outbox)
	}
	links, views := a.plan(round, g, outbox)
	crafted := make([][]*wire.Message, len(outbox))
	for _, b := range a.held {
		for _, l := range links[b] {
			var dst []float32
			if l.shared == nil {
				dst = make([]float32, l.Len)
			}
			data, err := a.craft(l, dst)
			if err != nil {
				return err
			}
			crafted[b] = append(crafted[b], &wire.Message{Header: l.Header, Payload: wire.Payload{Tag: l.Tag, Data: data}})
		}
	}
	for _, b := range a.held {
		if err := a.sendAs(b, claims[b], crafted[b], outbox); err != nil {
			return err
		}
	}
	a.settle(views)
	return nil
}

// begin checks an outbox and starts a new round's numbering.
func (a *Adversary) begin(round int, outbox [][]*wire.Message) error {
	if a.lazy != nil {
		return fmt.Errorf("adversary: round %d: the lazy messages of round %d are still open (Lazy.Close ends their phase)", round, a.lazy.round)
	}
	if len(outbox) != a.cfg.Nodes {
		return fmt.Errorf("adversary: an outbox of %d nodes, want %d", len(outbox), a.cfg.Nodes)
	}
	if round != a.seqRound {
		clear(a.seq)
		a.seqRound = round
	}
	return nil
}

// claimsAll returns, for each Byzantine node spoken for, what it sends
// before its vectors: its claims as the claim attack rewrites them, its
// edge events, and a privacy layer's messages as the node made them.
func (a *Adversary) claimsAll(round int, g *topology.Graph, outbox [][]*wire.Message) ([][]*wire.Message, error) {
	claims := make([][]*wire.Message, len(outbox))
	for _, b := range a.held {
		var err error
		if claims[b], err = claimsOf(a.cfg.Claims, a.cfg.Byzantine, a.byz, a.keys[b], round, g, b, outbox[b], a.lastClaims); err != nil {
			return nil, err
		}
		evs, err := eventsOf(a.cfg.Claims, a.byz, b, outbox[b])
		if err != nil {
			return nil, err
		}
		claims[b] = append(claims[b], evs...)
		for _, m := range outbox[b] {
			if m.Kind != wire.KindVector && m.Kind != wire.KindClaim && m.Kind != wire.KindEvent {
				c := *m // a privacy layer's message, as the node made it
				claims[b] = append(claims[b], &c)
			}
		}
	}
	return claims, nil
}

// sendUncrafted sends, without an attack, each Byzantine node's vector
// messages as the node made them, after its claims.
func (a *Adversary) sendUncrafted(claims, outbox [][]*wire.Message) error {
	for _, b := range a.held {
		var vecs []*wire.Message
		for _, m := range outbox[b] {
			if m.Kind == wire.KindVector {
				c := *m
				vecs = append(vecs, &c)
			}
		}
		if err := a.sendAs(b, claims[b], vecs, outbox); err != nil {
			return err
		}
	}
	return nil
}

// honestByTag collects the honest nodes' vector payloads of msgs (by
// sender id) per tag, in sender order, and their senders.
func (a *Adversary) honestByTag(msgs [][]*wire.Message) (honest map[string][][]float32, senders map[string][]int) {
	honest, senders = map[string][][]float32{}, map[string][]int{}
	for j, ms := range msgs {
		if a.byz[j] {
			continue
		}
		for _, m := range ms {
			if m.Kind == wire.KindVector {
				honest[m.Payload.Tag] = append(honest[m.Payload.Tag], m.Payload.Data)
				senders[m.Payload.Tag] = append(senders[m.Payload.Tag], j)
			}
		}
	}
	return honest, senders
}

// plan returns, by sender id, every crafted vector message of the phase
// yet to be made (plannedAs), and the views they are crafted against,
// one per tag with honest payloads in outbox.
func (a *Adversary) plan(round int, g *topology.Graph, outbox [][]*wire.Message) ([][]*Pending, map[string]*attack.View) {
	honest, senders := a.honestByTag(outbox)
	// One view per tag, shared by every Byzantine message of the round (the
	// view caches the statistics of the honest payloads).
	attackers := map[string]int{}
	for _, b := range a.held {
		for _, m := range outbox[b] {
			if m.Kind == wire.KindVector {
				attackers[m.Payload.Tag]++
			}
		}
	}
	views := map[string]*attack.View{}
	for tag, h := range honest {
		views[tag] = &attack.View{Round: round, Honest: h, Attackers: attackers[tag], Previous: a.prevViews[tag], Tag: tag,
			From: senders[tag], In: g.In}
	}
	links := make([][]*Pending, len(outbox))
	for _, b := range a.held {
		links[b] = plannedAs(a.cfg.SameForAll, round, g, b, outbox[b], func(tag string) *attack.View {
			if view := views[tag]; view != nil {
				return view
			}
			return &attack.View{Round: round, Attackers: attackers[tag], Tag: tag} // no honest payload of this tag in sight
		})
	}
	return links, views
}

// settle keeps, for an attack that reads history, the phase's views as
// the next round's Previous, once every vector of the phase is crafted.
func (a *Adversary) settle(views map[string]*attack.View) {
	if attack.UsesPrevious(a.cfg.Attack) && len(views) > 0 {
		// Only a phase that carried vectors is the round's history (a
		// layer's key or share phase is not).
		for _, v := range views {
			v.Settle()
		}
		a.prevViews = views
	}
}

// sendAs makes Byzantine node b's outbox the claims, then the vectors,
// numbered in that order after the numbers b's messages already got this
// round (replay protection refuses a number that does not grow within a
// round) and signed with b's key.
func (a *Adversary) sendAs(b int, claims, vecs []*wire.Message, outbox [][]*wire.Message) error {
	msgs := append(claims, vecs...)
	for k, m := range msgs {
		m.Seq = a.seq[b] + uint64(k+1)
		if err := wire.SignNoted(m, a.keys[b], a.memo); err != nil {
			return err
		}
	}
	a.seq[b] += uint64(len(msgs))
	outbox[b] = msgs
	return nil
}

// plannedAs lists Byzantine node b's crafted vector messages of the
// round, unnumbered and unmade: one per recipient and vector message, in
// that order, each against the view viewOf gives for the message's tag.
// With sameForAll every message of one tag shares one vector, crafted
// (once) from the first such message to its first recipient, from the
// attack's stream for (seed, b, round) (a strategy may send one message
// per peer).
func plannedAs(sameForAll bool, round int, g *topology.Graph, b int, msgs []*wire.Message, viewOf func(tag string) *attack.View) []*Pending {
	var out []*Pending
	shared := map[string]*sharedVec{}
	for _, m := range msgs {
		if m.Kind != wire.KindVector {
			continue
		}
		view := viewOf(m.Payload.Tag)
		targets := g.Out(b)
		if m.To != wire.Broadcast {
			targets = []int{int(m.To)}
		}
		for _, to := range targets {
			p := &Pending{
				Header: wire.Header{Kind: wire.KindVector, From: uint32(b), To: uint32(to), Round: uint64(round)},
				Tag:    m.Payload.Tag, Len: len(m.Payload.Data),
				honest: m.Payload.Data, view: view,
			}
			if sameForAll {
				sh := shared[m.Payload.Tag]
				if sh == nil {
					sh = &sharedVec{honest: m.Payload.Data, view: view, to: to}
					shared[m.Payload.Tag] = sh
				}
				p.shared, p.Len = sh, len(sh.honest)
			}
			out = append(out, p)
		}
	}
	return out
}

// craft makes l's vector: into dst (of length l.Len), or, with
// SameForAll, the vector shared by every recipient, crafted by its first
// caller and read-only from then on, like a broadcast payload (dst is not
// used). It is safe for concurrent use (attacks are, and a View guards
// its statistics).
func (a *Adversary) craft(l *Pending, dst []float32) ([]float32, error) {
	atk, b, round := a.cfg.Attack, int(l.From), l.Round
	if sh := l.shared; sh != nil {
		sh.once.Do(func() {
			sh.data = make([]float32, len(sh.honest))
			rng := seed.Stream(a.cfg.Seed, seed.Attack, uint64(b), round)
			if err := atk.Craft(sh.data, sh.view, sh.honest, b, sh.to, rng); err != nil {
				sh.data, sh.err = nil, fmt.Errorf("attack %s by node %d: %w", atk.Name(), b, err)
			}
		})
		return sh.data, sh.err
	}
	to := int(l.To)
	rng := seed.Stream(a.cfg.Seed, seed.Attack, uint64(b), round, uint64(to))
	if err := atk.Craft(dst, l.view, l.honest, b, to, rng); err != nil {
		return nil, fmt.Errorf("attack %s by node %d: %w", atk.Name(), b, err)
	}
	return dst, nil
}
