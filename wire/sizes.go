package wire

import (
	"encoding/binary"
	"fmt"
)

// Bound is the range of content lengths, in bytes, a message of one kind
// may have in some protocol step: what a receiver knows before it decodes
// anything. A message's content is its body's elements without tag and
// padding: 4 bytes a float of a vector, 4 an integer of a masked vector, 4
// a neighbour of a claim, the bytes of a blob (ContentLen). Every kind has
// an exact or bounded content once the model and the protocol's parameters
// are fixed: a vector or a masked vector has one element per parameter, a
// claim at most one neighbour per other node, a key, a share or a
// ciphertext the size its layer derives from its parameters. Tags are
// bounded apart, by Limits.MaxTagBytes. A zero Bound admits only empty
// content.
type Bound struct{ Min, Max int }

// Holds reports whether content of n bytes is within b.
func (b Bound) Holds(n int) bool { return n >= b.Min && n <= b.Max }

// Union is the smallest Bound holding both b and o.
func (b Bound) Union(o Bound) Bound { return Bound{min(b.Min, o.Min), max(b.Max, o.Max)} }

func (b Bound) String() string {
	if b.Min == b.Max {
		return fmt.Sprintf("exactly %d bytes", b.Min)
	}
	return fmt.Sprintf("%d to %d bytes", b.Min, b.Max)
}

// VectorContent is a vector of exactly n floats.
func VectorContent(n int) Bound { return Bound{4 * n, 4 * n} }

// MaskedContent is a masked vector of exactly n integers.
func MaskedContent(n int) Bound { return Bound{4 * n, 4 * n} }

// ClaimContent is a claim listing at most maxNeighbors neighbours.
func ClaimContent(maxNeighbors int) Bound { return Bound{0, 4 * max(maxNeighbors, 0)} }

// BlobContent is a key, share, ciphertext or event blob of minBytes to
// maxBytes bytes.
func BlobContent(minBytes, maxBytes int) Bound { return Bound{minBytes, maxBytes} }

// EventContent is a batch of 1 to maxEvents edge events.
func EventContent(maxEvents int) Bound { return Bound{EventSize, EventSize * max(maxEvents, 1)} }

// ContentLen is the length of m's content and of its tag, from its fields'
// lengths alone (nothing is encoded or hashed). A kind this version does
// not speak is an error.
func ContentLen(m *Message) (content, tag int, err error) {
	if m == nil {
		return 0, 0, reject(Malformed, "nil message")
	}
	switch {
	case m.Kind == KindVector:
		return 4 * len(m.Payload.Data), len(m.Payload.Tag), nil
	case m.Kind == KindClaim:
		return 4 * len(m.Claim.Neighbors), 0, nil
	case m.Kind == KindMasked:
		return 4 * len(m.Masked.Data), len(m.Masked.Tag), nil
	case isBlob(m.Kind):
		return len(m.Blob.Data), len(m.Blob.Tag), nil
	}
	return 0, 0, reject(UnknownKind, fmt.Sprintf("kind code %d", m.Kind))
}

// PeekContent reads the header of an encoded message and the content and
// tag lengths its body declares, without decoding it: a transport checks
// the kind and the content against what it expects (a Bound) before it
// decodes or allocates anything. It checks the header's form and that b
// holds exactly the declared body and a signature; whether the body's
// declared counts agree with its length is Decode's to check.
func PeekContent(b []byte) (h Header, content, tag int, err error) {
	h, bodyLen, err := decodeHeader(b)
	if err != nil {
		return h, 0, 0, err
	}
	if uint64(len(b)) != uint64(HeaderSize)+uint64(bodyLen)+SignatureSize {
		return h, 0, 0, reject(Malformed, fmt.Sprintf("header declares a %d-byte body, message has %d bytes", bodyLen, len(b)))
	}
	body := b[HeaderSize : HeaderSize+int(bodyLen)]
	switch {
	case h.Kind == KindClaim:
		if len(body) < claimFixed {
			return h, 0, 0, reject(Malformed, fmt.Sprintf("claim body of %d bytes", len(body)))
		}
		return h, 4 * int(binary.LittleEndian.Uint32(body[4:])), 0, nil
	case len(body) < arrayFixed:
		return h, 0, 0, reject(Malformed, fmt.Sprintf("%s body of %d bytes", h.Kind, len(body)))
	}
	n := int(binary.LittleEndian.Uint32(body))
	if !isBlob(h.Kind) {
		n *= 4 // floats, masked integers
	}
	return h, n, int(body[4]), nil
}

// MaxFraming is the most bytes a message adds to its content: header,
// signature, and the body's counts, tag of at most maxTag bytes, padding
// or a claim's fixed fields.
func MaxFraming(maxTag int) int {
	return HeaderSize + SignatureSize + max(claimFixed, arrayPrefixSize(min(max(maxTag, 0), MaxTagLen))+3)
}
