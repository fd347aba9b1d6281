package cluster

import (
	"sync"

	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/wire"
)

// Refusal reasons of the driver: what it drops before the node sees it
// (the node counts its own refusals in Ready).
const (
	RefusedGarbage      = "garbage"        // not a frame of ours, or a message that does not decode
	RefusedUnknown      = "unknown_sender" // a sender not in the peers file
	RefusedSignature    = "bad_signature"  // a message or marker whose signature does not verify
	RefusedDuplicate    = "duplicate"      // the same signed message twice in one phase
	RefusedEarly        = "early"          // for a round more than two rounds ahead
	RefusedOverflow     = "overflow"       // beyond a sender's buffer bounds
	RefusedMarker       = "bad_marker"     // a marker not for this node, or one that does not advance
	maxBufferedMessages = 4096             // per sender
	maxLate             = 1024             // past-round messages held for the node to count
)

// slot is an exchange phase of a round.
type slot struct {
	round uint64
	phase uint32
}

// sender is what the inbox holds of one peer: its messages by phase, the
// phase markers it sent, and where its last marker left it (a sender's
// messages after its marker for phase p of round r belong to phase p+1;
// its connection keeps them in order).
type sender struct {
	// left is set when the sender said it takes part in no round from
	// leftAt on (a graceful stop): no phase of those rounds waits for it.
	left   bool
	leftAt uint64
	// joined is set when a sender that had left came back, from joinedAt
	// on: a leave marker of an earlier round is then a replay.
	joined   bool
	joinedAt uint64
	marked   bool
	mark     slot
	msgs     map[slot][]*wire.Message
	markers  map[slot]bool
	sigs     map[[16]byte]bool // signatures of the buffered messages (duplicates)
	count    int
	bytes    int
	maxBytes int
}

// release removes and returns the messages of phase sl.
func (s *sender) release(sl slot) []*wire.Message {
	msgs := s.msgs[sl]
	for _, m := range msgs {
		s.drop(m)
	}
	delete(s.msgs, sl)
	return msgs
}

// sigKey is what tells m from a copy of it: the first 16 bytes of its
// signature.
func sigKey(m *wire.Message) (key [16]byte) {
	copy(key[:], m.Sig[:])
	return key
}

// hold counts m (size bytes on the wire) into the sender's buffer bounds,
// or returns why it cannot be held: a copy of a held message, or beyond
// the bounds.
func (s *sender) hold(m *wire.Message, size int) (refused string) {
	key := sigKey(m)
	switch {
	case s.sigs[key]:
		return RefusedDuplicate
	case s.count >= maxBufferedMessages || s.bytes+size > s.maxBytes:
		return RefusedOverflow
	}
	s.sigs[key] = true
	s.count++
	s.bytes += size
	return ""
}

// drop takes a held message out of the sender's buffer bounds.
func (s *sender) drop(m *wire.Message) {
	delete(s.sigs, sigKey(m))
	s.count--
	if size, err := wire.EncodedSize(m); err == nil {
		s.bytes -= size
	}
}

// inbox is where the connections' goroutines put what arrives, sorted by
// sender and phase, until the node's goroutine takes a closed phase's
// messages in the simulator's order (Step in sender order along the
// round's in-links, each sender's in arrival order).
type inbox struct {
	me     uint32
	dir    *wire.Directory
	limits wire.Limits
	// admission, if set, is the node's: frames it refuses are not decoded.
	admission *node.Admission
	wake      chan struct{}
	mu        sync.Mutex
	round     uint64 // the node's open round
	senders   []*sender
	late      []*wire.Message
	refused   map[string]int
	// async (asynchronous timing): no rounds or phases; every message
	// joins arrivals, in arrival order, within its sender's bounds, until
	// the node takes them (takeArrivals).
	async    bool
	arrivals []*wire.Message
}

func newInbox(me int, n int, dir *wire.Directory, limits wire.Limits, maxBytes int) *inbox {
	in := &inbox{me: uint32(me), dir: dir, limits: limits, wake: make(chan struct{}, 1), refused: map[string]int{}}
	in.senders = make([]*sender, n)
	for j := range in.senders {
		in.senders[j] = &sender{msgs: map[slot][]*wire.Message{}, markers: map[slot]bool{},
			sigs: map[[16]byte]bool{}, maxBytes: maxBytes}
	}
	return in
}

func (in *inbox) notify() {
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

func (in *inbox) refuse(reason string) {
	in.mu.Lock()
	in.refused[reason]++
	in.mu.Unlock()
}

// handle takes one frame from a connection; it never blocks for long and
// never panics on what a peer sends. It reports false for a frame no
// honest peer sends (garbage, an unknown sender, a bad signature), whose
// connection is then closed; a duplicate, a far-future round or a full
// buffer is dropped without closing it.
func (in *inbox) handle(frame []byte) bool {
	if len(frame) < 2 {
		in.refuse(RefusedGarbage)
		return false
	}
	switch {
	case frame[0] == wire.FormatVersion:
		return in.handleMessage(frame)
	case frame[0] == controlByte && frame[1] == markerType:
		return in.handleMarker(frame)
	}
	in.refuse(RefusedGarbage)
	return false
}

func (in *inbox) handleMessage(frame []byte) bool {
	// The node's kinds and sizes, from the header and the declared
	// lengths alone: nothing is decoded or allocated for a message the
	// node would refuse.
	if in.admission != nil && in.admission.Check(frame) != nil {
		in.refuse(RefusedGarbage)
		return false
	}
	m := new(wire.Message)
	if err := wire.DecodeLimited(frame, m, in.limits); err != nil {
		in.refuse(RefusedGarbage)
		return false
	}
	pub, ok := in.dir.Key(m.From)
	if !ok || int(m.From) >= len(in.senders) {
		in.refuse(RefusedUnknown)
		return false
	}
	// Verified here, on the connection's goroutine, so that a forger
	// cannot fill an honest sender's buffer (the node verifies again).
	if !wire.Verify(m, pub) {
		in.refuse(RefusedSignature)
		return false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	defer in.notify()
	if in.async {
		in.arrive(m, len(frame))
		return true
	}
	switch {
	case m.Round < in.round:
		if len(in.late) >= maxLate {
			in.refused[RefusedOverflow]++
			return true
		}
		// Only the header: the node counts a late message by its sender
		// and round and reads nothing else, so its body is not kept.
		in.late = append(in.late, &wire.Message{Header: m.Header})
		return true
	case m.Round > in.round+2:
		in.refused[RefusedEarly]++
		return true
	}
	s := in.senders[m.From]
	sl := slot{round: m.Round}
	if s.marked && s.mark.round == m.Round {
		sl.phase = s.mark.phase + 1
	}
	if r := s.hold(m, len(frame)); r != "" {
		in.refused[r]++
		return true
	}
	s.msgs[sl] = append(s.msgs[sl], m)
	return true
}

func (in *inbox) handleMarker(frame []byte) bool {
	mk, err := decodeMarker(frame, in.dir)
	if err != nil {
		in.refuse(RefusedMarker)
		return false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if int(mk.From) >= len(in.senders) || mk.To != in.me {
		in.refused[RefusedMarker]++ // signed, so perhaps a replay: the connection stays
		return true
	}
	s := in.senders[mk.From]
	switch mk.Phase {
	case leavePhase:
		// A leave from before the sender's last return is a replay.
		if (!s.left || mk.Round < s.leftAt) && (!s.joined || mk.Round >= s.joinedAt) {
			s.left, s.leftAt = true, mk.Round
		}
		in.notify()
		return true
	case joinPhase:
		s.rejoin(mk.Round)
		in.notify()
		return true
	}
	sl := slot{mk.Round, mk.Phase}
	if mk.Round < in.round || mk.Round > in.round+2 {
		in.refused[RefusedMarker]++
		return true
	}
	if s.marked && (sl.round < s.mark.round || sl.round == s.mark.round && sl.phase <= s.mark.phase) {
		in.refused[RefusedMarker]++ // a replayed or out-of-order marker
		return true
	}
	// A phase marker of a round after the sender left: it came back (its
	// join marker was lost, or it restarted from an older build).
	s.rejoin(mk.Round)
	s.marked, s.mark = true, sl
	s.markers[sl] = true
	in.notify()
	return true
}

// rejoin records that the sender takes part again from round r on: a
// sender that left before r is waited for again (a join for a round
// before it left is a replay, and changes nothing).
func (s *sender) rejoin(r uint64) {
	if s.left && r >= s.leftAt {
		s.left = false
		s.joined, s.joinedAt = true, r
	}
}

// open makes r the open round: what is still held of earlier rounds
// arrived after its phase closed, and becomes late.
func (in *inbox) open(r uint64) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.round = r
	for _, s := range in.senders {
		for sl := range s.msgs {
			if sl.round < r {
				in.late = append(in.late, s.release(sl)...)
			}
		}
		for sl := range s.markers {
			if sl.round < r {
				delete(s.markers, sl)
			}
		}
	}
	if len(in.late) > maxLate {
		in.refused[RefusedOverflow] += len(in.late) - maxLate
		in.late = in.late[:maxLate]
	}
}

// missing lists the senders in from whose marker for sl has not arrived:
// those still awaited, and those that left before sl's round.
func (in *inbox) missing(from []int, sl slot) (awaited, gone []int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, j := range from {
		if j < 0 || j >= len(in.senders) || in.senders[j].markers[sl] {
			continue
		}
		if s := in.senders[j]; s.left && sl.round >= s.leftAt {
			gone = append(gone, j)
		} else {
			awaited = append(awaited, j)
		}
	}
	return awaited, gone
}

// take removes and returns the messages of phase sl: first those of the
// senders in order (the round's in-neighbours), each in arrival order,
// then any other sender's, by id; and the late messages held.
func (in *inbox) take(order []int, sl slot) (msgs, late []*wire.Message) {
	in.mu.Lock()
	defer in.mu.Unlock()
	listed := make([]bool, len(in.senders))
	pick := func(j int) {
		s := in.senders[j]
		msgs = append(msgs, s.release(sl)...)
	}
	for _, j := range order {
		if j >= 0 && j < len(in.senders) && !listed[j] {
			listed[j] = true
			pick(j)
		}
	}
	for j := range in.senders {
		if !listed[j] {
			pick(j)
		}
	}
	late, in.late = in.late, nil
	return msgs, late
}

// arrive adds m (asynchronous timing) to the arrivals: a copy of a
// message still held, or one beyond its sender's bounds, is dropped. The
// node checks the steps (superseded, stale) itself. in.mu is held.
func (in *inbox) arrive(m *wire.Message, size int) {
	if r := in.senders[m.From].hold(m, size); r != "" {
		in.refused[r]++
		return
	}
	in.arrivals = append(in.arrivals, m)
}

// takeArrivals removes and returns the messages that arrived
// (asynchronous timing), in arrival order.
func (in *inbox) takeArrivals() []*wire.Message {
	in.mu.Lock()
	defer in.mu.Unlock()
	msgs := in.arrivals
	in.arrivals = nil
	for _, m := range msgs {
		in.senders[m.From].drop(m)
	}
	return msgs
}

// takeRefused returns and resets the refusal counts.
func (in *inbox) takeRefused() map[string]int {
	in.mu.Lock()
	defer in.mu.Unlock()
	r := in.refused
	in.refused = map[string]int{}
	return r
}
