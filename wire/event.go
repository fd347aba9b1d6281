package wire

import (
	"crypto/ed25519"
	"encoding/binary"
	"errors"
	"fmt"
)

// Edge events (paper §III-D, the claim c = (u, v, σ, ν, τ, π_u); §IV-A,
// "bilateral attestation"; package trust, "Signed edge events"). A KindEvent
// message carries a batch of fixed-size events as its Blob's bytes (the
// blob framing of kinds 3–6, tag empty): each is source u's signed
// statement that its edge to peer v was added or removed in round τ, under
// u's version ν, optionally with v's countersignature over the same bytes
// (an attested event). A countersignature travelling back from v to u
// (the co-signing round trip) is the same event with Return set, sent by v.

// Event operations.
const (
	EventAdd    uint8 = 1
	EventRemove uint8 = 2
)

// KindEvent's body: a batch of EventSize-byte events.
const (
	// EventSize is one encoded event: source, peer, round, version (24
	// bytes, signed), op (signed), hop, flags, a reserved zero byte, the
	// source's signature and the countersignature (zero when absent).
	EventSize = 28 + 2*SignatureSize

	eventSigned = 25 // source, peer, round, version, op

	eventAttested = 1 << 0 // Counter holds the peer's countersignature
	eventReturn   = 1 << 1 // the countersignature on its way back to the source
	eventFlags    = eventAttested | eventReturn
)

// Event is one signed edge event.
type Event struct {
	Source, Peer   uint32
	Round, Version uint64
	Op             uint8
	// Hop counts forwards, as a claim's does; outside both signatures.
	Hop uint8
	// Attested says Counter is Peer's countersignature; Return that this
	// copy is that countersignature sent by Peer back to Source (hop 0).
	Attested, Return bool
	Sig              [SignatureSize]byte // by Source
	Counter          [SignatureSize]byte // by Peer, over the same bytes
}

var (
	eventOpts   = &ed25519.Options{Context: "trellis/wire/v1 event"}
	counterOpts = &ed25519.Options{Context: "trellis/wire/v1 event countersignature"}
)

func eventSignedBytes(e *Event) []byte {
	var b [eventSigned]byte
	binary.LittleEndian.PutUint32(b[0:], e.Source)
	binary.LittleEndian.PutUint32(b[4:], e.Peer)
	binary.LittleEndian.PutUint64(b[8:], e.Round)
	binary.LittleEndian.PutUint64(b[16:], e.Version)
	b[24] = e.Op
	return b[:]
}

// SameEvent reports whether a and b are the same signed event (hop, the
// countersignature and Return aside).
func SameEvent(a, b *Event) bool {
	return a.Source == b.Source && a.Peer == b.Peer && a.Round == b.Round && a.Version == b.Version &&
		a.Op == b.Op && a.Sig == b.Sig
}

// SignEvent sets e.Sig to the source's signature (e.Source must be id's
// node) and clears any countersignature, which covered other bytes.
func SignEvent(e *Event, id *Identity) error {
	if e == nil || !id.valid() {
		return errors.New("wire: SignEvent with nil event or identity without key")
	}
	if e.Source != id.id {
		return fmt.Errorf("wire: node %d cannot sign an event of node %d", id.id, e.Source)
	}
	sig, err := id.priv.Sign(nil, eventSignedBytes(e), eventOpts)
	if err != nil {
		return fmt.Errorf("wire: signing event: %w", err)
	}
	copy(e.Sig[:], sig)
	e.Attested, e.Counter = false, [SignatureSize]byte{}
	return nil
}

// Countersign sets e.Counter to the peer's countersignature (e.Peer must be
// id's node) and marks e attested. It does not judge whether the peer
// agrees: that is the caller's (trust.State.Countersign).
func Countersign(e *Event, id *Identity) error {
	if e == nil || !id.valid() {
		return errors.New("wire: Countersign with nil event or identity without key")
	}
	if e.Peer != id.id {
		return fmt.Errorf("wire: node %d cannot countersign an event about node %d", id.id, e.Peer)
	}
	sig, err := id.priv.Sign(nil, eventSignedBytes(e), counterOpts)
	if err != nil {
		return fmt.Errorf("wire: countersigning event: %w", err)
	}
	copy(e.Counter[:], sig)
	e.Attested = true
	return nil
}

// VerifyEvent reports whether e.Sig is src's signature over e.
func VerifyEvent(e *Event, src ed25519.PublicKey) bool {
	if e == nil || len(src) != ed25519.PublicKeySize {
		return false
	}
	return ed25519.VerifyWithOptions(src, eventSignedBytes(e), e.Sig[:], eventOpts) == nil
}

// VerifyCounter reports whether e is attested and e.Counter is peer's
// countersignature over e.
func VerifyCounter(e *Event, peer ed25519.PublicKey) bool {
	if e == nil || !e.Attested || len(peer) != ed25519.PublicKeySize {
		return false
	}
	return ed25519.VerifyWithOptions(peer, eventSignedBytes(e), e.Counter[:], counterOpts) == nil
}

// AppendEvents appends the encoding of events (a KindEvent blob's bytes).
func AppendEvents(dst []byte, events []Event) []byte {
	for k := range events {
		e := &events[k]
		var b [EventSize]byte
		copy(b[:], eventSignedBytes(e))
		b[25] = e.Hop
		if e.Attested {
			b[26] |= eventAttested
		}
		if e.Return {
			b[26] |= eventReturn
		}
		copy(b[28:], e.Sig[:])
		if e.Attested {
			copy(b[28+SignatureSize:], e.Counter[:])
		}
		dst = append(dst, b[:]...)
	}
	return dst
}

// EventMessage returns an unsigned KindEvent message to `to` carrying events.
func EventMessage(to uint32, events []Event) *Message {
	return &Message{Header: Header{Kind: KindEvent, To: to}, Blob: Blob{Data: AppendEvents(nil, events)}}
}

// DecodeEvents decodes a KindEvent blob's bytes into at most limit events
// (appended to dst). Encoding is canonical: a length not a multiple of
// EventSize, unknown flags, a nonzero reserved byte, an unknown op, a
// countersignature without the attested flag, or Return without it are
// Malformed; more than limit events is Oversize. Any bytes are safe.
func DecodeEvents(dst []Event, b []byte, limit int) ([]Event, error) {
	if len(b)%EventSize != 0 {
		return dst, reject(Malformed, fmt.Sprintf("event body of %d bytes, not a multiple of %d", len(b), EventSize))
	}
	if n := len(b) / EventSize; n > limit {
		return dst, reject(Oversize, fmt.Sprintf("%d events, limit %d", n, limit))
	}
	for ; len(b) > 0; b = b[EventSize:] {
		e := Event{
			Source:  binary.LittleEndian.Uint32(b[0:]),
			Peer:    binary.LittleEndian.Uint32(b[4:]),
			Round:   binary.LittleEndian.Uint64(b[8:]),
			Version: binary.LittleEndian.Uint64(b[16:]),
			Op:      b[24],
			Hop:     b[25],
		}
		flags := b[26]
		switch {
		case flags&^eventFlags != 0 || b[27] != 0:
			return dst, reject(Malformed, "unknown event flags or nonzero reserved byte")
		case e.Op != EventAdd && e.Op != EventRemove:
			return dst, reject(Malformed, fmt.Sprintf("event op %d", e.Op))
		case flags == eventReturn:
			return dst, reject(Malformed, "returned event without a countersignature")
		}
		e.Attested, e.Return = flags&eventAttested != 0, flags&eventReturn != 0
		copy(e.Sig[:], b[28:])
		copy(e.Counter[:], b[28+SignatureSize:])
		if !e.Attested && e.Counter != [SignatureSize]byte{} {
			return dst, reject(Malformed, "countersignature bytes without the attested flag")
		}
		dst = append(dst, e)
	}
	return dst, nil
}

// checkEvents applies KindEvent's content rule (after the sender's message
// signature verified, so a failure is evidence against it): the events
// decode, name known distinct nodes, carry hop 0 exactly when the sender
// is the source (or, Return, the peer returning its countersignature to
// the source, the message's recipient), and their signatures verify.
// Whether an event is fresh, new and believed is trust logic.
func (v *Validator) checkEvents(m *Message) *Error {
	evs, err := DecodeEvents(v.events[:0], m.Blob.Data, v.lim.MaxNeighbors)
	v.events = evs[:0]
	if err != nil {
		// The blob framing held and the sender signed it: what is wrong is
		// content, evidence against the sender (Reason.Signed), as for a
		// key advertisement of the wrong length.
		return reject(WrongLength, err.Error())
	}
	if len(evs) == 0 {
		return reject(WrongLength, "empty event batch")
	}
	for k := range evs {
		if r := v.checkEvent(m.From, m.To, &evs[k]); r != nil {
			return r
		}
	}
	return nil
}

func (v *Validator) checkEvent(from, to uint32, e *Event) *Error {
	src, ok := v.dir.Key(e.Source)
	if !ok {
		return reject(UnknownSource, fmt.Sprintf("event source %d not in the directory", e.Source))
	}
	peer, ok := v.dir.Key(e.Peer)
	if !ok {
		return reject(UnknownSource, fmt.Sprintf("event peer %d not in the directory", e.Peer))
	}
	if e.Source == e.Peer {
		return reject(SelfNeighbor, fmt.Sprintf("event of node %d about itself", e.Source))
	}
	switch {
	case e.Return:
		if e.Hop != 0 || from != e.Peer || to != e.Source {
			return reject(BadHop, fmt.Sprintf("countersignature of node %d for node %d sent by node %d to %d, hop %d", e.Peer, e.Source, from, to, e.Hop))
		}
	case (e.Hop == 0) != (e.Source == from):
		return reject(BadHop, fmt.Sprintf("hop %d for an event of node %d sent by node %d", e.Hop, e.Source, from))
	}
	if !v.cache.VerifyEvent(e, src) {
		return reject(BadClaimSignature, fmt.Sprintf("event of node %d, version %d", e.Source, e.Version))
	}
	if e.Attested && !v.cache.VerifyCounter(e, peer) {
		return reject(BadClaimSignature, fmt.Sprintf("countersignature of node %d on the event of node %d, version %d", e.Peer, e.Source, e.Version))
	}
	return nil
}
