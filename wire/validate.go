package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Counts is one sender's record at a Validator: messages accepted, and
// messages rejected per Reason (index Rejected by Reason; None stays 0).
type Counts struct {
	Accepted uint64
	Rejected [NumReasons]uint64
}

// Total returns the number of rejections over all reasons.
func (c Counts) Total() uint64 {
	var t uint64
	for _, n := range c.Rejected {
		t += n
	}
	return t
}

// SignedTotal returns the rejections whose reason is Signed: those that are
// evidence against the sender itself rather than against whoever delivered
// the bytes.
func (c Counts) SignedTotal() uint64 {
	var t uint64
	for r, n := range c.Rejected {
		if Reason(r).Signed() {
			t += n
		}
	}
	return t
}

// ValidatorConfig sets up a Validator.
type ValidatorConfig struct {
	Self      uint32     // the receiving node
	Directory *Directory // known peers; required
	Round     uint64     // the current round; advance with SetRound
	// PayloadLen is the length every vector payload must have (the model's
	// parameter count). 0 disables the check; a node running a strategy
	// should always set it, since strategies index payloads by it.
	PayloadLen int
	Limits     Limits // zero fields take the defaults
	// Cache, if set, answers repeated signature verifications (messages and
	// claims) from earlier ones; a simulator shares one between all its
	// nodes' validators. Results are the same with or without it.
	Cache *VerifyCache
	// Digests, if set, is a simulator's DigestMemo: while its driver has a
	// delivery phase open, a message (by pointer) another validator sharing
	// it has hashed is not hashed again. Never for a node on a network,
	// which must hash what it received (DigestMemo says why).
	Digests *DigestMemo
}

// maxUnknownTracked bounds how many ids outside the Directory get their own
// Counts: a peer spraying random sender ids must not grow memory without
// bound. Further ones are pooled in Unattributed.
const maxUnknownTracked = 1024

// Validator is the receive-side gate of one node (round protocol):
// every message passes Check before a strategy may see it, and every
// rejection is counted against the sender the message names and the reason,
// for trust logic to use as evidence. It is not safe for concurrent use; each
// node owns one.
type Validator struct {
	self       uint32
	dir        *Directory
	round      uint64
	payloadLen int
	lim        Limits

	peers        map[uint32]*peerState
	unknown      int // entries in peers for ids outside dir
	unattributed Counts
	cache        *VerifyCache
	digests      *DigestMemo
	events       []Event // checkEvents' scratch
}

type peerState struct {
	counts Counts
	// Replay protection: the highest Seq accepted from this peer in seqRound.
	seqRound uint64
	lastSeq  uint64
	hasSeq   bool
}

// NewValidator checks cfg and returns a Validator.
func NewValidator(cfg ValidatorConfig) (*Validator, error) {
	if cfg.Directory == nil {
		return nil, errors.New("wire: validator needs a directory")
	}
	if cfg.PayloadLen < 0 {
		return nil, fmt.Errorf("wire: negative payload length %d", cfg.PayloadLen)
	}
	if err := cfg.Limits.Validate(); err != nil {
		return nil, err
	}
	return &Validator{
		self:       cfg.Self,
		dir:        cfg.Directory,
		round:      cfg.Round,
		payloadLen: cfg.PayloadLen,
		lim:        cfg.Limits.withDefaults(),
		peers:      make(map[uint32]*peerState),
		cache:      cfg.Cache,
		digests:    cfg.Digests,
	}, nil
}

// SetRound moves the validator to round r: messages of other rounds are
// rejected from now on.
func (v *Validator) SetRound(r uint64) { v.round = r }

// Round returns the current round.
func (v *Validator) Round() uint64 { return v.round }

// Check decides whether m may reach a strategy; nil means yes. A rejection is
// an *Error whose Reason is also counted against m.From (see Counts).
//
// The order of the checks is deliberate. Cheap checks that need no trust
// come first (form, size, recipient, sender, round), so replays and garbage
// cost no signature verification; then the sender's signature; then replay
// within the round; then content (length, finiteness, claim structure and
// the source's claim signature). Content rejections therefore prove the
// sender signed what was refused (Reason.Signed), while a forger can at most
// cause rejections that are not evidence.
func (v *Validator) Check(m *Message) error {
	if m == nil {
		v.unattributed.Rejected[Malformed]++
		return reject(Malformed, "nil message")
	}
	if err := v.check(m); err != nil {
		v.count(m.From, err.Reason)
		return err
	}
	v.peer(m.From).counts.Accepted++
	return nil
}

// Receive decodes b into m under the validator's limits and checks it: the
// path for a transport that delivers bytes. A decode failure is counted
// against the sender the header names if there are bytes enough for a
// header, else in Unattributed.
func (v *Validator) Receive(b []byte, m *Message) error {
	if m == nil {
		v.unattributed.Rejected[Malformed]++
		return reject(Malformed, "nil message")
	}
	if err := DecodeLimited(b, m, v.lim); err != nil {
		r := ReasonOf(err)
		if len(b) >= HeaderSize+SignatureSize {
			v.count(readFrom(b), r)
		} else {
			v.unattributed.Rejected[r]++
		}
		return err
	}
	return v.Check(m)
}

func readFrom(b []byte) uint32 { return binary.LittleEndian.Uint32(b[4:]) }

func (v *Validator) check(m *Message) *Error {
	// Form and size. Decode guarantees these for received bytes; a simulator
	// hands over structs, which must meet the same rules.
	body, err := bodySize(m)
	if err != nil {
		return err
	}
	size := HeaderSize + body + SignatureSize
	switch m.Kind {
	case KindVector:
		if len(m.Payload.Data) > v.lim.MaxFloats {
			return reject(Oversize, fmt.Sprintf("%d floats, limit %d", len(m.Payload.Data), v.lim.MaxFloats))
		}
		if len(m.Payload.Tag) > v.lim.MaxTagBytes {
			return reject(Oversize, fmt.Sprintf("tag of %d bytes, limit %d", len(m.Payload.Tag), v.lim.MaxTagBytes))
		}
	case KindClaim:
		if len(m.Claim.Neighbors) > v.lim.MaxNeighbors {
			return reject(Oversize, fmt.Sprintf("%d neighbors, limit %d", len(m.Claim.Neighbors), v.lim.MaxNeighbors))
		}
	case KindMasked:
		if len(m.Masked.Data) > v.lim.MaxFloats {
			return reject(Oversize, fmt.Sprintf("%d masked values, limit %d", len(m.Masked.Data), v.lim.MaxFloats))
		}
		if len(m.Masked.Tag) > v.lim.MaxTagBytes {
			return reject(Oversize, fmt.Sprintf("tag of %d bytes, limit %d", len(m.Masked.Tag), v.lim.MaxTagBytes))
		}
	case KindKey, KindShare, KindCipher, KindEvent:
		if len(m.Blob.Data) > v.lim.MaxBlobBytes {
			return reject(Oversize, fmt.Sprintf("%d bytes, limit %d", len(m.Blob.Data), v.lim.MaxBlobBytes))
		}
		if len(m.Blob.Tag) > v.lim.MaxTagBytes {
			return reject(Oversize, fmt.Sprintf("tag of %d bytes, limit %d", len(m.Blob.Tag), v.lim.MaxTagBytes))
		}
	}
	if size > v.lim.MaxMessageBytes {
		return reject(Oversize, fmt.Sprintf("%d bytes, limit %d", size, v.lim.MaxMessageBytes))
	}

	// Addressing, before any cryptography.
	if m.To != v.self && m.To != Broadcast {
		return reject(WrongRecipient, fmt.Sprintf("addressed to node %d, this is node %d", m.To, v.self))
	}
	pub, ok := v.dir.Key(m.From)
	if !ok {
		return reject(UnknownSender, fmt.Sprintf("node %d not in the directory", m.From))
	}
	if m.Round < v.round {
		return reject(StaleRound, fmt.Sprintf("round %d, current %d", m.Round, v.round))
	}
	if m.Round > v.round {
		return reject(FutureRound, fmt.Sprintf("round %d, current %d", m.Round, v.round))
	}

	dig := getDigester()
	signed := dig.verifyCached(m, pub, v.cache, v.digests)
	putDigester(dig)
	if !signed {
		return reject(BadSignature, fmt.Sprintf("from node %d", m.From))
	}

	// Replay: record the sequence number as soon as the signature holds, even
	// if the content is then refused, so replaying a refused message counts as
	// Replay and cannot multiply the signed evidence against its sender.
	p := v.peer(m.From)
	if p.hasSeq && p.seqRound == m.Round && m.Seq <= p.lastSeq {
		return reject(Replay, fmt.Sprintf("seq %d, last accepted %d in round %d", m.Seq, p.lastSeq, m.Round))
	}
	p.seqRound, p.lastSeq, p.hasSeq = m.Round, m.Seq, true

	switch m.Kind {
	case KindVector:
		return v.checkVector(&m.Payload)
	case KindClaim:
		return v.checkClaim(m.From, &m.Claim)
	}
	return v.checkContent(m)
}

func (v *Validator) checkVector(p *Payload) *Error {
	if v.payloadLen != 0 && len(p.Data) != v.payloadLen {
		return reject(WrongLength, fmt.Sprintf("%d floats, want %d", len(p.Data), v.payloadLen))
	}
	if i := firstNonFinite(p.Data); i >= 0 {
		return reject(NonFinite, fmt.Sprintf("payload[%d] = %v", i, p.Data[i]))
	}
	return nil
}

// checkClaim checks a claim's structure and its source's signature; whether
// the claim is fresh (its version) and whom to believe is trust logic
// (the DMTT paper, Algorithm 2).
func (v *Validator) checkClaim(from uint32, c *Claim) *Error {
	pub, ok := v.dir.Key(c.Source)
	if !ok {
		return reject(UnknownSource, fmt.Sprintf("claim source %d not in the directory", c.Source))
	}
	// Forwarding increments hop (Algorithm 3), so hop 0 comes from the source
	// and only from it.
	if (c.Hop == 0) != (c.Source == from) {
		return reject(BadHop, fmt.Sprintf("hop %d for a claim of node %d sent by node %d", c.Hop, c.Source, from))
	}
	for i, id := range c.Neighbors {
		if id == c.Source {
			return reject(SelfNeighbor, fmt.Sprintf("node %d lists itself", id))
		}
		if i > 0 {
			switch prev := c.Neighbors[i-1]; {
			case id == prev:
				return reject(DuplicateNeighbor, fmt.Sprintf("neighbor %d listed twice", id))
			case id < prev:
				return reject(UnsortedNeighbors, fmt.Sprintf("neighbor %d after %d", id, prev))
			}
		}
	}
	if !v.cache.VerifyClaim(c, pub) {
		return reject(BadClaimSignature, fmt.Sprintf("claim of node %d", c.Source))
	}
	return nil
}

// peer returns id's state, creating it.
func (v *Validator) peer(id uint32) *peerState {
	p := v.peers[id]
	if p == nil {
		p = &peerState{}
		v.peers[id] = p
	}
	return p
}

func (v *Validator) count(id uint32, r Reason) {
	if _, known := v.dir.Key(id); !known && v.peers[id] == nil {
		if v.unknown >= maxUnknownTracked {
			v.unattributed.Rejected[r]++
			return
		}
		v.unknown++
	}
	v.peer(id).counts.Rejected[r]++
}

// Counts returns sender's record: what was accepted from it and what was
// rejected, by reason.
func (v *Validator) Counts(sender uint32) Counts {
	if p := v.peers[sender]; p != nil {
		return p.counts
	}
	return Counts{}
}

// Senders returns, in increasing order, every id with a record.
func (v *Validator) Senders() []uint32 {
	ids := make([]uint32, 0, len(v.peers))
	for id := range v.peers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Unattributed returns the rejections no sender could be named for: nil
// messages, bytes too short to hold a header, and ids outside the directory
// beyond the first 1024.
func (v *Validator) Unattributed() Counts { return v.unattributed }
