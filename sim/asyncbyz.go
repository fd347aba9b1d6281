package sim

import (
	"fmt"
	"math"
	"slices"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// Byzantine nodes in asynchronous timing. A Byzantine node runs the honest
// node code on its own clock, as in rounds; when its step ends, its outbox
// goes through the adversary (adversary.RewriteAt) before it is sent. The
// attack's view is every honest node's last sent vectors at that virtual
// time, in sender-id order: the omniscient adversary, with what exists at
// the moment (in rounds, the round's payloads). Everything follows the
// event order, so a Byzantine run is as deterministic as an honest one.
//
// Two attacks use the asynchrony itself:
//   - Flood: each Byzantine node's step takes Flood virtual seconds
//     (instead of its drawn time), and it goes on stepping until every
//     honest node is done (or the horizon): a stream of valid messages
//     of ever newer steps, never stale in any receiver's eyes (a sender
//     ahead of the receiver has staleness 0). The node keeps one pending
//     set per sender, replaced by a newer step, so this costs receivers
//     no memory beyond that bound; the driver's mailbox (messages that
//     reach a node while it trains) keeps, of a Byzantine sender, the
//     newest step's messages only, since the node would replace the
//     older ones when they are stepped in (post).
//   - Stale (adversary.Stale): the Byzantine nodes send, from a step on,
//     that step's vectors again under fresh step numbers.

// asyncByzantine checks what asynchronous timing supports of the
// Byzantine side and sets the flooding nodes' step time.
func (r *runner) asyncByzantine(sched *Schedule) error {
	a := r.cfg.Async
	if len(r.cfg.Adversary.Byzantine) == 0 {
		return nil
	}
	if r.cfg.ByzantineIdle {
		return fmt.Errorf("sim: idle Byzantine nodes in asynchronous timing: not supported (an idle node has no steps)")
	}
	if r.cfg.Adversary.Claims != (adversary.ClaimAttack{}) {
		// Claims need a trust layer, which asynchronous timing refuses.
		return fmt.Errorf("sim: topology claim attacks in asynchronous timing: not supported (no trust layer)")
	}
	if a.Flood < 0 || math.IsNaN(a.Flood) || math.IsInf(a.Flood, 0) {
		return fmt.Errorf("sim: flood = %v, need a finite step time ≥ 0 (0: none)", a.Flood)
	}
	if a.Stale.On && a.Stale.Step < 0 {
		return fmt.Errorf("sim: stale step %d, need ≥ 0", a.Stale.Step)
	}
	if a.Flood > 0 {
		for _, b := range r.cfg.Adversary.Byzantine {
			sched.Step[b] = a.Flood
		}
	}
	return nil
}

// sent returns what node i sends at step s: an honest node's outbox as
// made (kept as its last sent, the adversary's view of it), a Byzantine
// node's as the adversary rewrites it.
func (ar *asyncRun) sent(i, s int, g *topology.Graph, out []*wire.Message) ([]*wire.Message, error) {
	if !ar.byz[i] {
		ar.lastSent[i] = out
		return out, nil
	}
	out, err := ar.adv.RewriteAt(s, g, i, out, ar.lastSent, ar.a.Stale)
	if err != nil {
		return nil, fmt.Errorf("node %d step %d: %w", i, s, err)
	}
	return out, nil
}

// post puts message m, arrived, in node i's mailbox. A Byzantine sender's
// messages of an older step still there are dropped (the node would
// replace them with m's step's when stepping them in), so a flooding
// sender keeps at most one step's messages in each mailbox. An honest
// sender's are all kept, so honest runs step in exactly what arrived.
func (ar *asyncRun) post(i int, m *wire.Message) {
	box := ar.mail[i]
	if from := int(m.From); from < len(ar.byz) && ar.byz[from] {
		box = slices.DeleteFunc(box, func(o *wire.Message) bool { return o.From == m.From && o.Round < m.Round })
	}
	ar.mail[i] = append(box, m)
	if ar.a.mailPeak != nil {
		ar.a.mailPeak(len(ar.mail[i]))
	}
}

// goesOn reports whether node i begins another step after step s: a
// flooding Byzantine node while some honest node is not done, every
// other node until its rounds.
func (ar *asyncRun) goesOn(i, s int) bool {
	if ar.byz[i] && ar.a.Flood > 0 {
		return ar.honestLeft > 0
	}
	return s+1 < ar.cfg.Rounds
}

// finish marks node i done.
func (ar *asyncRun) finish(i int) {
	ar.step[i] = max(ar.step[i], ar.cfg.Rounds)
	ar.done[i] = true
	if !ar.byz[i] {
		ar.honestLeft--
	}
}
