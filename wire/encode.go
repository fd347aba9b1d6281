package wire

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Body layouts (offsets within the body; see doc.go for the whole message).
const (
	vectorFixed = 5 // n uint32, tag length uint8; then tag, zero padding to 4, floats

	claimNeighbors = 28                             // offset of the neighbor list
	claimFixed     = claimNeighbors + SignatureSize // body size of a claim without neighbors
)

// vectorBodySize pads the tag so the floats start 4-byte aligned (the header
// is 32 bytes): a reader on a little-endian host may then use the received
// bytes as a []float32 in place.
func vectorBodySize(tagLen, n int) int { return (vectorFixed+tagLen+3)&^3 + 4*n }

func claimBodySize(k int) int { return claimFixed + 4*k }

// bodySize returns the body length m's kind needs, or an error if the format
// cannot represent m at all (limits are the receiver's business, not this).
func bodySize(m *Message) (int, *Error) {
	switch m.Kind {
	case KindVector:
		if len(m.Payload.Tag) > MaxTagLen {
			return 0, reject(Oversize, fmt.Sprintf("tag of %d bytes, format allows %d", len(m.Payload.Tag), MaxTagLen))
		}
		if len(m.Payload.Data) > maxEncodableFloats {
			return 0, reject(Oversize, fmt.Sprintf("%d floats, format allows %d", len(m.Payload.Data), maxEncodableFloats))
		}
		return vectorBodySize(len(m.Payload.Tag), len(m.Payload.Data)), nil
	case KindClaim:
		if len(m.Claim.Neighbors) > maxEncodableNeighbors {
			return 0, reject(Oversize, fmt.Sprintf("%d neighbors, format allows %d", len(m.Claim.Neighbors), maxEncodableNeighbors))
		}
		return claimBodySize(len(m.Claim.Neighbors)), nil
	case KindMasked:
		if len(m.Masked.Tag) > MaxTagLen {
			return 0, reject(Oversize, fmt.Sprintf("tag of %d bytes, format allows %d", len(m.Masked.Tag), MaxTagLen))
		}
		if len(m.Masked.Data) > maxEncodableFloats {
			return 0, reject(Oversize, fmt.Sprintf("%d masked values, format allows %d", len(m.Masked.Data), maxEncodableFloats))
		}
		return maskedBodySize(len(m.Masked.Tag), len(m.Masked.Data)), nil
	case KindKey, KindShare, KindCipher, KindEvent:
		if len(m.Blob.Tag) > MaxTagLen {
			return 0, reject(Oversize, fmt.Sprintf("tag of %d bytes, format allows %d", len(m.Blob.Tag), MaxTagLen))
		}
		if uint64(len(m.Blob.Data)) > maxEncodableBlob {
			return 0, reject(Oversize, fmt.Sprintf("%d bytes, format allows %d", len(m.Blob.Data), uint64(maxEncodableBlob)))
		}
		return blobBodySize(len(m.Blob.Tag), len(m.Blob.Data)), nil
	}
	return 0, reject(UnknownKind, fmt.Sprintf("kind code %d", m.Kind))
}

// EncodedSize returns the length AppendEncode appends for m.
func EncodedSize(m *Message) (int, error) {
	if m == nil {
		return 0, reject(Malformed, "nil message")
	}
	n, err := bodySize(m)
	if err != nil {
		return 0, err
	}
	return HeaderSize + n + SignatureSize, nil
}

// AppendEncode appends the encoding of m (doc.go, "Format") to dst and
// returns the extended slice; it allocates only when dst lacks capacity, so a
// caller that reuses its buffer encodes without allocating. It fails only for
// a message the format cannot represent (unknown kind, a tag over 255 bytes,
// a length over the header's 32 bits); size policy is the receiver's Limits.
func AppendEncode(dst []byte, m *Message) ([]byte, error) {
	if m == nil {
		return dst, reject(Malformed, "nil message")
	}
	body, err := bodySize(m)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = grow(dst, HeaderSize+body+SignatureSize)
	b := dst[start:]
	putHeader(b, &m.Header, body)
	encodeBody(b[HeaderSize:HeaderSize+body], m)
	copy(b[HeaderSize+body:], m.Sig[:])
	return dst, nil
}

// grow extends b by n bytes, reallocating at most once.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

func putHeader(b []byte, h *Header, bodyLen int) {
	_ = b[HeaderSize-1]
	b[0] = FormatVersion
	b[1] = byte(h.Kind)
	b[2], b[3] = 0, 0 // flags: none defined in version 1
	binary.LittleEndian.PutUint32(b[4:], h.From)
	binary.LittleEndian.PutUint32(b[8:], h.To)
	binary.LittleEndian.PutUint64(b[12:], h.Round)
	binary.LittleEndian.PutUint64(b[20:], h.Seq)
	binary.LittleEndian.PutUint32(b[28:], uint32(bodyLen))
}

// encodeBody fills b, which has exactly the body's length.
func encodeBody(b []byte, m *Message) {
	switch m.Kind {
	case KindVector:
		off := putVectorPrefix(b, &m.Payload)
		putFloats(b[off:], m.Payload.Data)
	case KindClaim:
		c := &m.Claim
		putClaimSigned(b, c)
		b[24] = c.Hop
		b[25], b[26], b[27] = 0, 0, 0
		copy(b[claimNeighbors+4*len(c.Neighbors):], c.Sig[:])
	case KindMasked:
		off := putArrayPrefix(b, len(m.Masked.Data), m.Masked.Tag)
		putUint32s(b[off:], m.Masked.Data)
	case KindKey, KindShare, KindCipher, KindEvent:
		off := putArrayPrefix(b, len(m.Blob.Data), m.Blob.Tag)
		putBlob(b[off:], m.Blob.Data)
	}
}

// putVectorPrefix writes count, tag and padding, returning the floats' offset.
func putVectorPrefix(b []byte, p *Payload) int {
	binary.LittleEndian.PutUint32(b, uint32(len(p.Data)))
	b[4] = byte(len(p.Tag))
	copy(b[vectorFixed:], p.Tag)
	off := (vectorFixed + len(p.Tag) + 3) &^ 3
	for i := vectorFixed + len(p.Tag); i < off; i++ {
		b[i] = 0
	}
	return off
}

// putClaimSigned writes the fields the source signs: source, neighbor count,
// round, version (bytes 0–23) and the neighbor list (from byte 28). Bytes
// 24–27 (hop, reserved) are left to the caller: they are outside the claim
// signature, which is what lets a forwarder change hop.
func putClaimSigned(b []byte, c *Claim) {
	binary.LittleEndian.PutUint32(b[0:], c.Source)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(c.Neighbors)))
	binary.LittleEndian.PutUint64(b[8:], c.Round)
	binary.LittleEndian.PutUint64(b[16:], c.Version)
	nb := b[claimNeighbors : claimNeighbors+4*len(c.Neighbors)]
	for i, id := range c.Neighbors {
		binary.LittleEndian.PutUint32(nb[4*i:], id)
	}
}

// putFloats writes xs as raw little-endian IEEE 754 bits: bit-exact for
// every value (-0, subnormals, NaN payloads), and ~4–5 GB/s with bounds
// checks hoisted, so no unsafe reinterpretation is needed.
func putFloats(b []byte, xs []float32) {
	b = b[:4*len(xs)]
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
}

func getFloats(xs []float32, b []byte) {
	b = b[:4*len(xs)]
	for i := range xs {
		xs[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}
