package wire

import (
	"encoding/binary"
	"fmt"
)

// Bound is the range of body lengths, in bytes, a message of one kind may
// have in some protocol step: what a receiver knows before it decodes
// anything. Every kind has an exact or bounded size once the model and the
// protocol's parameters are fixed: a vector or a masked vector has one
// element per parameter, a claim at most one neighbour per other node, a
// key, a share or a ciphertext the size its layer derives from its
// parameters. A zero Bound admits nothing.
type Bound struct{ Min, Max int }

// Holds reports whether a body of n bytes is within b.
func (b Bound) Holds(n int) bool { return n >= b.Min && n <= b.Max }

// Union is the smallest Bound holding both b and o (o alone if b is zero).
func (b Bound) Union(o Bound) Bound {
	if b == (Bound{}) {
		return o
	}
	return Bound{min(b.Min, o.Min), max(b.Max, o.Max)}
}

func (b Bound) String() string {
	if b.Min == b.Max {
		return fmt.Sprintf("%d bytes", b.Min)
	}
	return fmt.Sprintf("%d to %d bytes", b.Min, b.Max)
}

// VectorBody is the body of a vector of exactly n floats with a tag of at
// most maxTag bytes.
func VectorBody(n, maxTag int) Bound {
	return Bound{vectorBodySize(0, n), vectorBodySize(min(maxTag, MaxTagLen), n)}
}

// MaskedBody is the body of a masked vector of exactly n integers with a
// tag of at most maxTag bytes.
func MaskedBody(n, maxTag int) Bound {
	return Bound{maskedBodySize(0, n), maskedBodySize(min(maxTag, MaxTagLen), n)}
}

// ClaimBody is the body of a claim listing at most maxNeighbors neighbours.
func ClaimBody(maxNeighbors int) Bound {
	return Bound{claimBodySize(0), claimBodySize(max(maxNeighbors, 0))}
}

// BlobBody is the body of a key, share, ciphertext or event message of
// minBytes to maxBytes bytes with a tag of at most maxTag bytes.
func BlobBody(minBytes, maxBytes, maxTag int) Bound {
	return Bound{blobBodySize(0, minBytes), blobBodySize(min(maxTag, MaxTagLen), maxBytes)}
}

// EventBody is the body of a batch of 1 to maxEvents edge events.
func EventBody(maxEvents int) Bound { return BlobBody(EventSize, EventSize*max(maxEvents, 1), 0) }

// BodyLen is the length m's body has encoded, computed from its fields'
// lengths alone (nothing is encoded or hashed).
func BodyLen(m *Message) (int, error) {
	if m == nil {
		return 0, reject(Malformed, "nil message")
	}
	n, err := bodySize(m)
	if err != nil {
		return 0, err
	}
	return n, nil
}

// PeekHeader reads the header of an encoded message and the body length it
// declares, without decoding the body: a transport checks the kind and the
// length against what it expects (a Bound) before it decodes or allocates
// anything. It checks the header's form and that b holds exactly the
// declared body and a signature.
func PeekHeader(b []byte) (Header, int, error) {
	h, bodyLen, err := decodeHeader(b)
	if err != nil {
		return h, 0, err
	}
	if uint64(len(b)) != uint64(HeaderSize)+uint64(bodyLen)+SignatureSize {
		return h, 0, reject(Malformed, fmt.Sprintf("header declares a %d-byte body, message has %d bytes", bodyLen, len(b)))
	}
	return h, int(binary.LittleEndian.Uint32(b[28:])), nil
}
