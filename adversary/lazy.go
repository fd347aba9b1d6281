package adversary

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// Lazy is one exchange phase's crafted vector messages before they are
// made (RewriteLazy): their headers, numbers, tags and lengths are fixed,
// their payloads are crafted and signed when a receiver needs them
// (Make), into a buffer the caller owns. A simulator delivering to many
// nodes then holds what its workers deliver at a time instead of one
// vector per Byzantine sender and link for the whole phase.
//
// Make may run concurrently for different messages (attacks are safe for
// concurrent use, and a View computes each statistic once, under its own
// lock). Close ends the phase.
type Lazy struct {
	a     *Adversary // nil: nothing pending
	round int
	views map[string]*attack.View
	sent  [][]*Pending // by sender id, in the order sent
	byTo  [][]*Pending // the same, stably sorted by recipient
	// closed is set by Close; Make refuses from then on.
	closed atomic.Bool
}

// Pending is one crafted vector message not yet made: its header (kind
// vector, sender, recipient, round and sequence number, all as Rewrite
// gives them), its payload's tag and length. Read-only.
type Pending struct {
	wire.Header
	Tag string
	Len int

	honest []float32 // the Byzantine node's own payload: the attack's input
	view   *attack.View
	shared *sharedVec // with SameForAll: the vector every recipient gets
	made   atomic.Bool
}

// Shared reports whether p's payload is the one vector its sender sends
// every recipient of its tag (SameForAll): Make then needs no buffer.
func (p *Pending) Shared() bool { return p.shared != nil }

// sharedVec is a SameForAll vector: crafted once, by the first Make that
// needs it, from the first message of its tag to that message's first
// recipient, and read-only from then on.
type sharedVec struct {
	once   sync.Once
	honest []float32
	view   *attack.View
	to     int
	data   []float32
	err    error
}

// RewriteLazy is Rewrite that leaves the crafted vector messages unmade:
// outbox gets every Byzantine node's claims and a privacy layer's messages,
// numbered and signed as Rewrite does, and the returned Lazy holds the
// vector messages that follow them (Lazy.Links, Lazy.Make), with the
// numbers Rewrite would give them. Made, each has the bits Rewrite would
// have sent: it depends only on the attack, the round's view, the sender's
// own payload and its stream for (seed, sender, round, recipient).
//
// The caller calls Close once every receiver of the phase has taken its
// messages; a Rewrite or RewriteLazy before that is an error. Without an
// attack (or a Byzantine node spoken for) RewriteLazy is Rewrite and
// nothing is pending.
func (a *Adversary) RewriteLazy(round int, g *topology.Graph, outbox [][]*wire.Message) (*Lazy, error) {
	if len(a.held) == 0 || a.cfg.Attack == nil {
		if err := a.Rewrite(round, g, outbox); err != nil {
			return nil, err
		}
		return &Lazy{round: round}, nil
	}
	if err := a.begin(round, outbox); err != nil {
		return nil, err
	}
	claims, err := a.claimsAll(round, g, outbox)
	if err != nil {
		return nil, err
	}
	links, views := a.plan(round, g, outbox)
	lz := &Lazy{a: a, round: round, views: views, sent: links, byTo: make([][]*Pending, len(links))}
	for _, b := range a.held {
		// The numbers sendAs gives claims, then vectors.
		if err := a.sendAs(b, claims[b], nil, outbox); err != nil {
			return nil, err
		}
		for k, p := range links[b] {
			p.Seq = a.seq[b] + uint64(k+1)
		}
		a.seq[b] += uint64(len(links[b]))
		// Sorted by recipient, each recipient's in the order sent (a
		// strategy may send one peer several vectors).
		lz.byTo[b] = slices.Clone(links[b])
		slices.SortStableFunc(lz.byTo[b], func(x, y *Pending) int { return cmp.Compare(x.To, y.To) })
	}
	a.lazy = lz
	return lz, nil
}

// Links returns the pending messages from Byzantine node from to node to,
// in the order sent (none for an honest sender or another recipient).
func (lz *Lazy) Links(from, to int) []*Pending {
	if from < 0 || from >= len(lz.byTo) {
		return nil
	}
	ps := lz.byTo[from]
	lo, _ := slices.BinarySearchFunc(ps, uint32(to), func(p *Pending, t uint32) int { return cmp.Compare(p.To, t) })
	hi := lo
	for hi < len(ps) && ps[hi].To == uint32(to) {
		hi++
	}
	return ps[lo:hi]
}

// Bytes is the encoded size of every pending message from node from, as
// metrics.Traffic counts it (each goes to one recipient): a message's
// size follows from its kind, tag and length, so nothing is crafted.
func (lz *Lazy) Bytes(from int) (int, error) {
	if from < 0 || from >= len(lz.sent) {
		return 0, nil
	}
	total := 0
	for _, p := range lz.sent[from] {
		carrier := p.honest // of length p.Len: stands in for the payload
		if p.shared != nil {
			carrier = p.shared.honest
		}
		size, err := wire.EncodedSize(&wire.Message{Header: p.Header, Payload: wire.Payload{Tag: p.Tag, Data: carrier}})
		if err != nil {
			return 0, fmt.Errorf("node %d: %w", from, err)
		}
		total += size
	}
	return total, nil
}

// Make crafts p's payload into buf (of capacity at least p.Len; unused with
// SameForAll, whose one vector per sender and tag every recipient shares)
// and returns p as a message signed with the sender's key, noting its
// digest in the adversary's memo. The message's payload is buf[:p.Len]:
// it stays valid while the caller does not reuse buf, so a receiver must
// be done with it (its End) first.
func (lz *Lazy) Make(p *Pending, buf []float32) (*wire.Message, error) {
	if lz.a == nil || lz.closed.Load() {
		return nil, fmt.Errorf("adversary: a vector of round %d made after its phase was closed", lz.round)
	}
	var dst []float32
	if p.shared == nil {
		if cap(buf) < p.Len {
			return nil, fmt.Errorf("adversary: a buffer of %d values for a vector of %d", cap(buf), p.Len)
		}
		dst = buf[:p.Len]
	}
	data, err := lz.a.craft(p, dst)
	if err != nil {
		return nil, err
	}
	p.made.Store(true)
	m := &wire.Message{Header: p.Header, Payload: wire.Payload{Tag: p.Tag, Data: data}}
	if err := wire.SignNoted(m, lz.a.keys[p.From], lz.a.memo); err != nil {
		return nil, err
	}
	return m, nil
}

// Close ends the phase: the adversary drops its pending messages (and
// SameForAll's shared vectors) and, for an attack that reads history
// (attack.UsesPrevious), settles the views as the next round's history.
// Such an attack may leave in the view what later rounds read (what
// adaptive_receiver estimated for each receiver), so Close first crafts,
// and drops, every message no receiver asked for (a dropped link): the
// views then hold what Rewrite's would. For the other attacks a message
// nobody asked for is never crafted, so an error only its crafting would
// have raised goes unreported. Call it once every receiver has taken the
// phase; it returns the first crafting error, and a second call does
// nothing.
func (lz *Lazy) Close() error {
	if lz.a == nil || lz.closed.Swap(true) {
		return nil
	}
	a := lz.a
	a.lazy = nil
	defer func() { lz.sent, lz.byTo, lz.views = nil, nil, nil }()
	if attack.UsesPrevious(a.cfg.Attack) {
		var scratch []float32
		for _, b := range a.held {
			for _, p := range lz.sent[b] {
				if p.made.Load() {
					continue
				}
				if cap(scratch) < p.Len {
					scratch = make([]float32, p.Len)
				}
				if _, err := a.craft(p, scratch[:p.Len]); err != nil {
					return err
				}
			}
		}
	}
	a.settle(lz.views)
	return nil
}

// HeldPerWorker is what a driver that makes crafted vectors lazily (one
// buffer per crafted message a receiver takes in the phase, kept until the
// receiver's End and then reused for the next receiver) holds per worker
// at most: k buffers of vectorBytes each, k the largest number of crafted
// messages one receiver takes in a phase (its in-degree when each
// Byzantine in-neighbour sends one vector message, as every strategy's
// broadcast does). It does not depend on the number of Byzantine nodes.
// Add HeldPerLink per crafted link of the phase (Byzantine nodes × their
// out-degree), and with SameForAll HeldShared.
func HeldPerWorker(k int, vectorBytes int64) int64 { return int64(k) * vectorBytes }

// HeldPerLink bounds what a phase holds per crafted link besides the
// vectors: its Pending (112 bytes on 64-bit) and, once made, its signed
// wire.Message (352) and the digest memo's entry for it (about 150), all
// kept until the phase closes (measured: about 510 bytes a link).
const HeldPerLink = 640

// HeldShared is what SameForAll adds for a phase: one shared vector per
// Byzantine sender and tag (byzantine × tags of them), each crafted once
// and kept until the phase closes.
func HeldShared(byzantine, tags int, vectorBytes int64) int64 {
	return int64(byzantine) * int64(tags) * vectorBytes
}
