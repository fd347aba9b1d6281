package sim

import (
	"fmt"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// adversary replaces each Byzantine node's messages by one crafted message
// per out-neighbor and tag. The view holds the honest payloads of the round
// with the same tag, in sender-id order; it is built here, by the driver, so
// no honest code ever sees it.
//
// Byzantine claims go through claimAdversary first, and a privacy layer's
// messages pass unchanged; every message a Byzantine node sends is then
// renumbered and signed with its key.
func (r *runner) adversary(round int, g *topology.Graph, outbox [][]*wire.Message) error {
	if len(r.cfg.Byzantine) == 0 {
		return nil
	}
	claims := make([][]*wire.Message, len(outbox))
	for _, b := range r.cfg.Byzantine {
		var err error
		if claims[b], err = r.claimAdversary(round, g, b, outbox[b]); err != nil {
			return err
		}
		evs, err := eventsOf(r.cfg.Claims, r.byz, b, outbox[b])
		if err != nil {
			return err
		}
		claims[b] = append(claims[b], evs...)
		// A privacy layer's messages (keys, shares, masked inputs,
		// ciphertexts) go out as the node made them: the node runs the
		// honest protocol on what it trained (a data attack poisons that);
		// only its vectors are crafted.
		for _, m := range outbox[b] {
			if m.Kind != wire.KindVector && m.Kind != wire.KindClaim && m.Kind != wire.KindEvent {
				c := *m
				claims[b] = append(claims[b], &c)
			}
		}
	}
	if r.cfg.Attack == nil {
		for _, b := range r.cfg.Byzantine {
			var vecs []*wire.Message
			for _, m := range outbox[b] {
				if m.Kind == wire.KindVector {
					c := *m
					vecs = append(vecs, &c)
				}
			}
			if err := r.sendAs(b, claims[b], vecs, outbox); err != nil {
				return err
			}
		}
		return nil
	}
	honest := map[string][][]float32{}
	senders := map[string][]int{} // honest's senders, per tag
	for j, msgs := range outbox {
		if r.byz[j] {
			continue
		}
		for _, m := range msgs {
			if m.Kind == wire.KindVector {
				honest[m.Payload.Tag] = append(honest[m.Payload.Tag], m.Payload.Data)
				senders[m.Payload.Tag] = append(senders[m.Payload.Tag], j)
			}
		}
	}
	// One view per tag, shared by every Byzantine message of the round (the
	// view caches the statistics of the honest payloads).
	attackers := map[string]int{}
	for _, b := range r.cfg.Byzantine {
		for _, m := range outbox[b] {
			if m.Kind == wire.KindVector {
				attackers[m.Payload.Tag]++
			}
		}
	}
	views := map[string]*attack.View{}
	for tag, h := range honest {
		views[tag] = &attack.View{Round: round, Honest: h, Attackers: attackers[tag], Previous: r.prevViews[tag], Tag: tag,
			From: senders[tag], In: g.In}
	}
	crafted := make([][]*wire.Message, len(outbox))
	for _, b := range r.cfg.Byzantine {
		var err error
		crafted[b], err = craftAs(r.cfg.Attack, r.cfg.SameForAll, r.cfg.Seed, round, g, b, outbox[b], func(tag string) *attack.View {
			if view := views[tag]; view != nil {
				return view
			}
			return &attack.View{Round: round, Attackers: attackers[tag], Tag: tag} // no honest node sent this tag
		})
		if err != nil {
			return err
		}
	}
	for _, b := range r.cfg.Byzantine {
		if err := r.sendAs(b, claims[b], crafted[b], outbox); err != nil {
			return err
		}
	}
	if attack.UsesPrevious(r.cfg.Attack) && len(views) > 0 {
		// Only a phase that carried vectors is the round's history (a
		// layer's key or share phase is not).
		for _, v := range views {
			v.Settle()
		}
		r.prevViews = views
	}
	return nil
}

// sendAs makes Byzantine node b's outbox the claims, then the vectors,
// numbered in that order and signed with b's key. Numbers continue over
// the round's exchange phases (replay protection refuses a number that
// does not grow within a round).
func (r *runner) sendAs(b int, claims, vecs []*wire.Message, outbox [][]*wire.Message) error {
	if r.seq == nil {
		r.seq = make([]uint64, len(outbox))
	}
	msgs, err := signAs(r.cfg.Identities[b], r.seq[b], claims, vecs, r.cfg.DigestMemo)
	r.seq[b] += uint64(len(msgs))
	outbox[b] = msgs
	return err
}

// signAs returns the claims, then the vectors, numbered in that order from
// after+1 and signed with id (their digests noted in memo, if any).
func signAs(id *wire.Identity, after uint64, claims, vecs []*wire.Message, memo *wire.DigestMemo) ([]*wire.Message, error) {
	msgs := append(claims, vecs...)
	for k, m := range msgs {
		m.Seq = after + uint64(k+1)
		if err := wire.SignNoted(m, id, memo); err != nil {
			return nil, err
		}
	}
	return msgs, nil
}

// craftAs crafts Byzantine node b's vector messages of the round: one per
// recipient and vector message (one per message with sameForAll), from
// the attack's stream, against the view viewOf gives for the message's
// tag. The messages are returned unsigned, without sequence numbers.
func craftAs(atk attack.Attack, sameForAll bool, s uint64, round int, g *topology.Graph, b int, msgs []*wire.Message, viewOf func(tag string) *attack.View) ([]*wire.Message, error) {
	var crafted []*wire.Message
	// SameForAll: the one vector per tag every recipient gets, across
	// all of b's messages (a strategy may send one message per peer).
	shared := map[string][]float32{}
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
			var dst []float32
			if sh := shared[m.Payload.Tag]; sh != nil {
				dst = sh // read-only from here on, like a broadcast payload
			} else {
				dst = make([]float32, len(m.Payload.Data))
				rng := seed.Stream(s, seed.Attack, uint64(b), uint64(round), uint64(to))
				if sameForAll {
					rng = seed.Stream(s, seed.Attack, uint64(b), uint64(round))
				}
				if err := atk.Craft(dst, view, m.Payload.Data, b, to, rng); err != nil {
					return nil, fmt.Errorf("attack %s by node %d: %w", atk.Name(), b, err)
				}
				if sameForAll {
					shared[m.Payload.Tag] = dst
				}
			}
			c := &wire.Message{
				Header:  wire.Header{Kind: wire.KindVector, From: uint32(b), To: uint32(to), Round: uint64(round)},
				Payload: wire.Payload{Tag: m.Payload.Tag, Data: dst},
			}
			crafted = append(crafted, c)
		}
	}
	return crafted, nil
}
