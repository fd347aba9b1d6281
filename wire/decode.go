package wire

import (
	"encoding/binary"
	"fmt"
)

// Decode decodes one message from b under DefaultLimits. See DecodeLimited.
func Decode(b []byte, m *Message) error { return DecodeLimited(b, m, Limits{}) }

// DecodeLimited decodes exactly one message from b into m, reusing m's
// slices when their capacity suffices (so a receive loop decodes without
// allocating once warm; a caller that hands m.Payload.Data on must not decode
// into m again while it is in use) and keeping m.Payload.Tag when it is
// unchanged. It never retains b.
//
// Any bytes are safe: every declared size is compared with lim and with the
// bytes present before anything is allocated, so memory is bounded by
// len(b) and lim. Encoding is canonical: trailing bytes, nonzero reserved
// bits or padding are rejected, so a successful decode re-encodes to b
// exactly. On error m holds an unspecified but safe-to-read value.
//
// Decode checks form only; signatures and protocol rules are Validator's.
func DecodeLimited(b []byte, m *Message, lim Limits) error {
	if m == nil {
		return reject(Malformed, "nil message")
	}
	if err := lim.Validate(); err != nil {
		return err
	}
	lim = lim.withDefaults()
	if len(b) > lim.MaxMessageBytes {
		return reject(Oversize, fmt.Sprintf("%d bytes, limit %d", len(b), lim.MaxMessageBytes))
	}
	h, bodyLen, err := decodeHeader(b)
	if err != nil {
		return err
	}
	if uint64(len(b)) != uint64(HeaderSize)+uint64(bodyLen)+SignatureSize {
		return reject(Malformed, fmt.Sprintf("header declares a %d-byte body, message has %d bytes", bodyLen, len(b)))
	}
	body := b[HeaderSize : HeaderSize+int(bodyLen)]
	// The bodies of the other kinds are emptied (their buffers kept).
	if h.Kind != KindVector {
		m.Payload.Data = m.Payload.Data[:0]
	}
	if h.Kind != KindClaim {
		m.Claim.Neighbors = m.Claim.Neighbors[:0]
	}
	if h.Kind != KindMasked {
		m.Masked.Data = m.Masked.Data[:0]
	}
	if !isBlob(h.Kind) {
		m.Blob.Data = m.Blob.Data[:0]
	}
	switch h.Kind {
	case KindVector:
		err = decodeVector(body, &m.Payload, &lim)
	case KindClaim:
		err = decodeClaim(body, &m.Claim, &lim)
	case KindMasked:
		err = decodeMasked(body, &m.Masked, &lim)
	default: // KindKey, KindShare, KindCipher, KindEvent (decodeHeader refused the rest)
		err = decodeBlob(body, &m.Blob, &lim)
	}
	if err != nil {
		return err
	}
	m.Header = h
	copy(m.Sig[:], b[HeaderSize+int(bodyLen):])
	return nil
}

// decodeHeader parses the fixed header; the caller checks the total length.
func decodeHeader(b []byte) (Header, uint32, error) {
	if len(b) < HeaderSize+SignatureSize {
		return Header{}, 0, reject(Malformed, fmt.Sprintf("%d bytes, shorter than header and signature (%d)", len(b), HeaderSize+SignatureSize))
	}
	if b[0] != FormatVersion {
		return Header{}, 0, reject(BadVersion, fmt.Sprintf("format version %d, want %d", b[0], FormatVersion))
	}
	h := Header{
		Kind:  Kind(b[1]),
		From:  binary.LittleEndian.Uint32(b[4:]),
		To:    binary.LittleEndian.Uint32(b[8:]),
		Round: binary.LittleEndian.Uint64(b[12:]),
		Seq:   binary.LittleEndian.Uint64(b[20:]),
	}
	if !h.Kind.Known() {
		return h, 0, reject(UnknownKind, fmt.Sprintf("kind code %d", b[1]))
	}
	if b[2] != 0 || b[3] != 0 {
		return h, 0, reject(Malformed, "nonzero flags")
	}
	return h, binary.LittleEndian.Uint32(b[28:]), nil
}

func decodeVector(body []byte, p *Payload, lim *Limits) error {
	if len(body) < vectorFixed {
		return reject(Malformed, fmt.Sprintf("vector body of %d bytes", len(body)))
	}
	n := binary.LittleEndian.Uint32(body)
	tagLen := int(body[4])
	// Limits first, so the error says Oversize rather than Malformed for a
	// message that declares a huge payload it does not carry.
	if uint64(n) > uint64(lim.MaxFloats) {
		return reject(Oversize, fmt.Sprintf("%d floats, limit %d", n, lim.MaxFloats))
	}
	if tagLen > lim.MaxTagBytes {
		return reject(Oversize, fmt.Sprintf("tag of %d bytes, limit %d", tagLen, lim.MaxTagBytes))
	}
	off := (vectorFixed + tagLen + 3) &^ 3
	// In uint64 so that 4n cannot overflow an int on 32-bit platforms.
	if uint64(len(body)) != uint64(off)+4*uint64(n) {
		return reject(Malformed, fmt.Sprintf("vector body of %d bytes for %d floats and a %d-byte tag", len(body), n, tagLen))
	}
	for _, c := range body[vectorFixed+tagLen : off] {
		if c != 0 {
			return reject(Malformed, "nonzero padding after tag")
		}
	}
	tag := body[vectorFixed : vectorFixed+tagLen]
	if string(tag) != p.Tag { // the comparison does not allocate
		p.Tag = string(tag)
	}
	if cap(p.Data) >= int(n) {
		p.Data = p.Data[:n]
	} else {
		p.Data = make([]float32, n)
	}
	getFloats(p.Data, body[off:])
	return nil
}

func decodeClaim(body []byte, c *Claim, lim *Limits) error {
	if len(body) < claimFixed {
		return reject(Malformed, fmt.Sprintf("claim body of %d bytes", len(body)))
	}
	k := binary.LittleEndian.Uint32(body[4:])
	if uint64(k) > uint64(lim.MaxNeighbors) {
		return reject(Oversize, fmt.Sprintf("%d neighbors, limit %d", k, lim.MaxNeighbors))
	}
	if uint64(len(body)) != claimFixed+4*uint64(k) {
		return reject(Malformed, fmt.Sprintf("claim body of %d bytes for %d neighbors", len(body), k))
	}
	if body[25] != 0 || body[26] != 0 || body[27] != 0 {
		return reject(Malformed, "nonzero reserved claim bytes")
	}
	c.Source = binary.LittleEndian.Uint32(body[0:])
	c.Round = binary.LittleEndian.Uint64(body[8:])
	c.Version = binary.LittleEndian.Uint64(body[16:])
	c.Hop = body[24]
	if cap(c.Neighbors) >= int(k) {
		c.Neighbors = c.Neighbors[:k]
	} else {
		c.Neighbors = make([]uint32, k)
	}
	nb := body[claimNeighbors : claimNeighbors+4*int(k)]
	for i := range c.Neighbors {
		c.Neighbors[i] = binary.LittleEndian.Uint32(nb[4*i:])
	}
	copy(c.Sig[:], body[claimNeighbors+4*int(k):])
	return nil
}
