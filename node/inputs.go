package node

import (
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/wire"
)

// The node's input checks (doc.go, "What Step refuses"). A message of the
// open round passes, in this order and before any signature is verified or
// any body is read:
//
//  1. its sender is one of the round's in-neighbours (Begin's hood.In): a
//     relay cannot hand a node another node's correctly signed message;
//  2. it is not a copy of a message already accepted or held (same sender,
//     round, sequence number and signature): a copy is never stored twice;
//  3. its kind is one the round's exchange phases expect, with a body
//     within that kind's bound (Expect): a message for the open phase goes
//     on to the validator and the layers; one for a later phase of the
//     round waits, in the same bounded store as early rounds' messages,
//     until Outbox opens that phase.
//
// Messages of later rounds are held (bounded) until their round begins,
// checked as far as a round not yet begun allows (directory, kind and
// size, duplicates), and checked again when it begins.

// Expect is a message a node takes in one exchange phase: its kind and the
// length its body may have, both known before any decoding. Layers list
// theirs (Layer.Expects); the node adds the strategy's vectors in the
// release phase.
type Expect struct {
	Kind    wire.Kind
	Content wire.Bound // the content's length (wire.ContentLen): elements, without tag
}

// Reasons of the input checks' refusals (Ready.Rejections).
const (
	ReasonNotNeighbor    = "not_in_neighbor" // a sender outside the round's in-neighbours
	ReasonDuplicate      = "duplicate"       // a copy of a message accepted or held
	ReasonUnexpectedKind = "unexpected_kind" // a kind no exchange phase of the round takes
	ReasonWrongSize      = "wrong_size"      // a body outside its kind's bound
)

// Bounds of the store of messages not deliverable yet (later rounds, later
// phases): a peer's messages wait at most maxAhead rounds ahead, at most
// heldPerSender of them and heldBytesPerSender(largest) bytes per sender,
// heldTotalSenders senders' worth in all, so a hostile peer cannot make a
// node hold more than a bounded multiple of an honest round's traffic.
const (
	maxAhead         = 2
	heldPerSender    = 256
	heldMessageBytes = 4  // per sender: this many of the largest message the node takes
	heldTotalSenders = 16 // in all: this many senders' full shares
)

// dupKey identifies a signed message: Ed25519 signatures are
// deterministic, so the same sender, round, number and signature mean the
// same bytes (or a forgery the validator would refuse anyway).
type dupKey struct {
	from  uint32
	round uint64
	seq   uint64
	sig   [wire.SignatureSize]byte
}

func keyOf(m *wire.Message) dupKey { return dupKey{m.From, m.Round, m.Seq, m.Sig} }

// held is a message waiting for its round or phase, with its encoded size.
type held struct {
	m    *wire.Message
	size int
}

// inputs is the node's input-check state.
type inputs struct {
	// expect[p] are the messages exchange phase p takes (set by New).
	expect [][]Expect
	// largest is the largest encoded message any phase takes; maxTag the
	// longest tag.
	largest, maxTag int
	// seen are the messages accepted this round, and every held one.
	seen map[dupKey]struct{}
	// store holds messages of later rounds and phases in arrival order
	// (each sender's order, which replay protection checks, is kept).
	store          []held
	count, bytes   map[uint32]int
	totalBytes     int
	perSenderBytes int
}

// expectations collects what each exchange phase takes: the layers' own
// kinds, and the strategy's vectors in the release phase unless a releaser
// keeps them in the node.
func expectations(layers []Layer, params int) ([][]Expect, error) {
	phases, release, vectors := 1, 0, true
	for _, l := range layers {
		phases = max(phases, l.Phases())
		if rl, ok := l.(Releaser); ok {
			release = max(release, rl.ReleasePhase())
			vectors = vectors && rl.ReleasesVectors()
		}
	}
	out := make([][]Expect, phases)
	for p := range phases {
		for _, l := range layers {
			for _, e := range l.Expects(p) {
				if !l.Owns(e.Kind) {
					return nil, fmt.Errorf("%s layer expects %s messages in phase %d, a kind it does not own", l.Name(), e.Kind, p)
				}
				if e.Content.Min < 0 || e.Content.Max < e.Content.Min {
					return nil, fmt.Errorf("%s layer: an empty bound %v for %s messages", l.Name(), e.Content, e.Kind)
				}
				out[p] = append(out[p], e)
			}
		}
	}
	if vectors && release < phases {
		out[release] = append(out[release], Expect{wire.KindVector, wire.VectorContent(params)})
	}
	return out, nil
}

func (in *inputs) init(expect [][]Expect, maxTag int) {
	in.expect, in.maxTag = expect, maxTag
	largest := 0
	for _, es := range expect {
		for _, e := range es {
			largest = max(largest, e.Content.Max)
		}
	}
	in.largest = largest + wire.MaxFraming(maxTag)
	in.perSenderBytes = heldMessageBytes * in.largest
	in.seen, in.count, in.bytes = map[dupKey]struct{}{}, map[uint32]int{}, map[uint32]int{}
}

// fit says where a message of kind k with content of n bytes fits, judged
// at phase cur (−1 for a round not begun): now (cur takes it), later (a
// later phase does), or neither, with the reason.
func (in *inputs) fit(k wire.Kind, n, cur int) (now, later bool, reason string) {
	reason = ReasonUnexpectedKind
	for p := max(cur, 0); p < len(in.expect); p++ {
		for _, e := range in.expect[p] {
			if e.Kind != k {
				continue
			}
			if !e.Content.Holds(n) {
				reason = ReasonWrongSize
				continue
			}
			if p == cur {
				return true, false, ""
			}
			return false, true, ""
		}
	}
	return false, false, reason
}

// bound is the union of every phase's bound for kind k (false: no phase
// takes k).
func (in *inputs) bound(k wire.Kind) (wire.Bound, bool) {
	var b wire.Bound
	ok := false
	for _, es := range in.expect {
		for _, e := range es {
			if e.Kind == k {
				b, ok = b.Union(e.Content), true
			}
		}
	}
	return b, ok
}

// inHood reports whether id is one of the round's in-neighbours (hood.In
// is sorted).
func inHood(hood Neighborhood, id uint32) bool {
	_, ok := slices.BinarySearch(hood.In, int(id))
	return ok
}

// hold stores m for a later round or phase within the bounds; false with a
// reason when it does not fit.
func (in *inputs) hold(m *wire.Message, size int) (bool, string) {
	if in.count[m.From] >= heldPerSender || in.bytes[m.From]+size > in.perSenderBytes ||
		in.totalBytes+size > heldTotalSenders*in.perSenderBytes {
		return false, ReasonBufferFull
	}
	in.count[m.From]++
	in.bytes[m.From] += size
	in.totalBytes += size
	in.store = append(in.store, held{m, size})
	in.seen[keyOf(m)] = struct{}{}
	return true, ""
}

// release forgets the accounting of a held message leaving the store.
func (in *inputs) release(h held) {
	in.count[h.m.From]--
	in.bytes[h.m.From] -= h.size
	in.totalBytes -= h.size
	if in.count[h.m.From] == 0 {
		delete(in.count, h.m.From)
		delete(in.bytes, h.m.From)
	}
}

// take removes and returns, in arrival order, the held messages for which
// pick says true.
func (in *inputs) take(pick func(*wire.Message) bool) []*wire.Message {
	var out []*wire.Message
	keep := in.store[:0]
	for _, h := range in.store {
		if pick(h.m) {
			in.release(h)
			out = append(out, h.m)
			continue
		}
		keep = append(keep, h)
	}
	clear(in.store[len(keep):])
	in.store = keep
	return out
}

// newRound forgets the previous round's accepted messages; the held ones
// stay known as held.
func (in *inputs) newRound() {
	clear(in.seen)
	for _, h := range in.store {
		in.seen[keyOf(h.m)] = struct{}{}
	}
}

// admit checks a message of the open round and delivers it, holds it for
// a later phase of the round, or refuses it.
func (n *Node) admit(m *wire.Message) error {
	rs, in := &n.rs, &n.rs.in
	if !inHood(rs.hood, m.From) {
		n.reject(m.From, ReasonNotNeighbor)
		return fmt.Errorf("node %d round %d: a message from node %d, not an in-neighbour this round: dropped", n.cfg.ID, rs.r, m.From)
	}
	if _, dup := in.seen[keyOf(m)]; dup {
		n.reject(m.From, ReasonDuplicate)
		return fmt.Errorf("node %d round %d: a copy of node %d's message %d, already taken: dropped", n.cfg.ID, rs.r, m.From, m.Seq)
	}
	content, ok := n.measure(m)
	if !ok {
		return n.misfit(m, content, ReasonWrongSize)
	}
	now, later, reason := in.fit(m.Kind, content, current(rs))
	switch {
	case now:
		return n.deliver(m)
	case later:
		size, _ := wire.EncodedSize(m)
		if ok, reason := in.hold(m, size); !ok {
			n.reject(m.From, reason)
			return fmt.Errorf("node %d round %d: node %d's messages for later phases over the store's bound: dropped", n.cfg.ID, rs.r, m.From)
		}
		return nil
	}
	return n.misfit(m, content, reason)
}

// measure returns m's content length; false when m's kind is unknown or
// its tag too long.
func (n *Node) measure(m *wire.Message) (int, bool) {
	content, tag, err := wire.ContentLen(m)
	if err != nil || tag > n.rs.in.maxTag {
		return content, false
	}
	return content, true
}

// misfit counts and returns the refusal of a message whose kind or size no
// phase takes.
func (n *Node) misfit(m *wire.Message, content int, reason string) error {
	n.reject(m.From, reason)
	b, ok := n.rs.in.bound(m.Kind)
	switch {
	case !ok:
		return fmt.Errorf("node %d: a %s message from node %d, a kind no exchange phase takes here: dropped", n.cfg.ID, m.Kind, m.From)
	case reason == ReasonWrongSize:
		return fmt.Errorf("node %d: a %s message from node %d with %d bytes of content (or a tag over %d bytes); this model and protocol take %v: dropped", n.cfg.ID, m.Kind, m.From, content, n.rs.in.maxTag, b)
	}
	return fmt.Errorf("node %d round %d: a %s message from node %d, which no exchange phase from %d on takes: dropped", n.cfg.ID, n.rs.r, m.Kind, m.From, n.rs.next)
}

// buffer holds a message of a later round, within the bounds.
func (n *Node) buffer(m *wire.Message) error {
	rs, in := &n.rs, &n.rs.in
	if _, ok := n.cfg.Directory.Key(m.From); !ok {
		n.reject(m.From, wire.UnknownSender.String())
		return fmt.Errorf("node %d: an early message from node %d, not in the directory: dropped", n.cfg.ID, m.From)
	}
	if rs.begun && m.Round > uint64(rs.r)+maxAhead {
		n.reject(m.From, ReasonTooFarAhead)
		return fmt.Errorf("node %d: a message of round %d from node %d during round %d (at most %d ahead): dropped", n.cfg.ID, m.Round, m.From, rs.r, maxAhead)
	}
	if _, dup := in.seen[keyOf(m)]; dup {
		n.reject(m.From, ReasonDuplicate)
		return fmt.Errorf("node %d: a copy of node %d's early message %d of round %d, already held: dropped", n.cfg.ID, m.From, m.Seq, m.Round)
	}
	content, ok := n.measure(m)
	if !ok {
		return n.misfit(m, content, ReasonWrongSize)
	}
	if _, later, reason := in.fit(m.Kind, content, -1); !later {
		return n.misfit(m, content, reason)
	}
	size, _ := wire.EncodedSize(m)
	if ok, reason := in.hold(m, size); !ok {
		n.reject(m.From, reason)
		return fmt.Errorf("node %d: early messages from node %d over the store's bound: dropped", n.cfg.ID, m.From)
	}
	return nil
}

// beginHeld sorts the held messages when round r begins: older rounds'
// are stale, this round's from outside the round's in-neighbours are
// refused; this round's others wait for their phase.
func (n *Node) beginHeld(r int) {
	in := &n.rs.in
	for _, m := range in.take(func(m *wire.Message) bool { return m.Round < uint64(r) }) {
		n.reject(m.From, wire.StaleRound.String())
	}
	for _, m := range in.take(func(m *wire.Message) bool { return m.Round == uint64(r) && !inHood(n.rs.hood, m.From) }) {
		n.reject(m.From, ReasonNotNeighbor)
	}
	in.newRound()
	n.deliverHeld()
}

// current is the open round's current exchange phase: the last one
// Outbox opened, the first before that (a message of the first phase may
// arrive before the node's own Outbox).
func current(rs *roundState) int { return max(rs.next-1, 0) }

// deliverHeld delivers the held messages of the open round that the phase
// just opened takes, in arrival order.
func (n *Node) deliverHeld() {
	rs, in := &n.rs, &n.rs.in
	cur := current(rs)
	for _, m := range in.take(func(m *wire.Message) bool {
		if m.Round != uint64(rs.r) {
			return false
		}
		content, _, _ := wire.ContentLen(m)
		now, _, _ := in.fit(m.Kind, content, cur)
		return now
	}) {
		delete(in.seen, keyOf(m))
		_ = n.deliver(m) // a refusal is counted in the round's records
	}
}

// endHeld drops what is left of the closing round's held messages (none
// is, unless a layer's phases changed within the round).
func (n *Node) endHeld() {
	for _, m := range n.rs.in.take(func(m *wire.Message) bool { return m.Round <= uint64(n.rs.r) }) {
		n.reject(m.From, ReasonUnexpectedKind)
	}
}

// setupInputs derives, once, what each exchange phase takes from the
// layers and the model.
func (n *Node) setupInputs() error {
	if n.rs.inSet {
		return nil
	}
	expect, err := expectations(n.layers, n.cfg.Model.NumParams())
	if err != nil {
		return fmt.Errorf("node %d: %w", n.cfg.ID, err)
	}
	n.rs.in.init(expect, wire.DefaultLimits().MaxTagBytes)
	n.rs.inSet = true
	return nil
}

// ExpectBlob expects a blob of kind k of minBytes to maxBytes bytes.
func ExpectBlob(k wire.Kind, minBytes, maxBytes int) Expect {
	return Expect{k, wire.BlobContent(minBytes, maxBytes)}
}

// Admission is what a node takes, fixed once the node is built: each
// kind's content bound over all exchange phases and the longest tag. A
// transport that receives bytes checks them with Check before it decodes
// them, so a peer cannot make it allocate more than the node's largest
// message; the node checks every message again, by phase, in Step. It is
// read-only, safe for concurrent use.
type Admission struct {
	bounds  map[wire.Kind]wire.Bound
	maxTag  int
	largest int
}

// MaxMessageBytes is the largest encoded message the node takes: a
// transport's frame limit.
func (a *Admission) MaxMessageBytes() int { return a.largest }

// Admission returns the node's Admission.
func (n *Node) Admission() (*Admission, error) {
	if err := n.setupInputs(); err != nil {
		return nil, err
	}
	a := &Admission{bounds: map[wire.Kind]wire.Bound{}, maxTag: n.rs.in.maxTag, largest: n.rs.in.largest}
	for _, es := range n.rs.in.expect {
		for _, e := range es {
			if b, ok := a.bounds[e.Kind]; ok {
				a.bounds[e.Kind] = b.Union(e.Content)
			} else {
				a.bounds[e.Kind] = e.Content
			}
		}
	}
	return a, nil
}

// Check reads an encoded message's header and declared lengths, nothing
// more, and refuses it (a *wire.Error) if the node takes no message of its
// kind, its content is outside the kind's bound, or its tag is too long.
func (a *Admission) Check(b []byte) error {
	h, content, tag, err := wire.PeekContent(b)
	if err != nil {
		return err
	}
	bound, ok := a.bounds[h.Kind]
	switch {
	case !ok:
		return &wire.Error{Reason: wire.UnknownKind, Detail: fmt.Sprintf("a %s message from node %d: this node takes none", h.Kind, h.From)}
	case !bound.Holds(content):
		return &wire.Error{Reason: wire.Oversize, Detail: fmt.Sprintf("a %s message from node %d with %d bytes of content, this node takes %v", h.Kind, h.From, content, bound)}
	case tag > a.maxTag:
		return &wire.Error{Reason: wire.Oversize, Detail: fmt.Sprintf("a tag of %d bytes from node %d, limit %d", tag, h.From, a.maxTag)}
	}
	return nil
}
