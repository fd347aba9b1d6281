package wire

import (
	"crypto/ed25519"
	"math"
	"strconv"
)

// Kind says what a message's body holds. The code is one byte on the wire;
// 0 is never valid (so a zeroed buffer cannot pass as a message) and codes
// 8–255 are reserved: a decoder rejects them as UnknownKind, so a later kind
// is refused cleanly by an older peer instead of being misread.
type Kind uint8

const (
	KindVector Kind = 1 // a float32 vector: a model, a direction, a gradient
	KindClaim  Kind = 2 // a signed DMTT topology claim (the DMTT paper, Algorithms 1–3)
	// The privacy layers' kinds (docs/methods/secure-aggregation.md). Their bodies are
	// framed here, with size and content rules per kind (kinds.go); what
	// the bytes mean is the owning layer's business.
	KindMasked Kind = 3 // a masked integer vector: secure aggregation's masked input
	KindKey    Kind = 4 // key agreement: the public keys a node advertises
	KindShare  Kind = 5 // secret shares (Shamir shares of mask seeds) for one recipient
	KindCipher Kind = 6 // ciphertexts of homomorphic encryption
	// KindEvent carries signed DMTT edge events (event.go): a blob body
	// whose bytes the trust layer defines and the validator checks.
	KindEvent Kind = 7
)

var kindNames = map[Kind]string{KindVector: "vector", KindClaim: "claim", KindMasked: "masked",
	KindKey: "key", KindShare: "share", KindCipher: "cipher", KindEvent: "event"}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Known reports whether this version of the format speaks kind k.
func (k Kind) Known() bool { return k >= KindVector && k <= KindEvent }

const (
	// FormatVersion is the first byte of every encoded message. It lives only
	// in the encoding: Message is the version-independent in-memory form, and
	// a future decoder maps every version it accepts onto it.
	FormatVersion = 1

	// HeaderSize is the fixed header length; SignatureSize the trailing
	// Ed25519 signature. A message is HeaderSize + body + SignatureSize bytes.
	HeaderSize    = 32
	SignatureSize = ed25519.SignatureSize

	// Broadcast as a recipient means "every neighbor": one signature serves
	// all receivers, which is what a DMTT claim broadcast needs and what spares
	// a sender one signature per neighbor. The id is therefore never a node.
	Broadcast uint32 = math.MaxUint32

	// MaxTagLen is the longest tag the encoding can carry (one length byte).
	MaxTagLen = 255
)

// Header is what every message carries, whatever its kind. Node ids are
// uint32. Seq is chosen by the sender and must increase strictly among the
// messages a receiver accepts from it within one round (see Validator); a
// sender may restart it every round.
type Header struct {
	Kind  Kind
	From  uint32 // sender
	To    uint32 // recipient, or Broadcast
	Round uint64
	Seq   uint64
}

// Payload is the body of a KindVector message: what strategies exchange.
type Payload struct {
	// Tag optionally names what Data is ("model", "grad", ...), at most
	// Limits.MaxTagBytes bytes; the signature covers it.
	Tag  string
	Data []float32
}

// Claim is a DMTT topology claim: its source's neighbor list for a round,
// signed by the source over every field except Hop (and Sig), so a forwarder
// increments Hop without re-signing (the DMTT paper, Algorithms 1–3).
type Claim struct {
	Source    uint32
	Round     uint64
	Version   uint64
	Neighbors []uint32 // strictly increasing, without Source
	Hop       uint8
	Sig       [SignatureSize]byte // by Source; see SignClaim
}

// Masked is the body of a KindMasked message: integers modulo 2^32 (a
// fixed-point encoding plus masks), one per model parameter.
type Masked struct {
	Tag  string
	Data []uint32
}

// Blob is the body of KindKey, KindShare, KindCipher and KindEvent messages: bytes
// whose layout the layer that owns the kind defines.
type Blob struct {
	Tag  string
	Data []byte
}

// Message is one unit a node sends to another. Only the body field matching
// Kind is meaningful: Payload for KindVector, Claim for KindClaim, Masked
// for KindMasked, Blob for KindKey, KindShare and KindCipher. Sig is the
// sender's signature over everything else (see Sign); for a forwarded claim it
// is the forwarder's, while Claim.Sig stays the source's.
type Message struct {
	Header
	Payload Payload
	Claim   Claim
	Masked  Masked
	Blob    Blob
	Sig     [SignatureSize]byte
}
