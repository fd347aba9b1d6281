package wire

import (
	"encoding/binary"
	"fmt"
)

// The privacy kinds' bodies share the vector body's framing: a count, a
// tag, zero padding to 4 bytes, then the elements (doc.go, "Masked and blob
// bodies"). A blob's bytes are zero-padded to a multiple of 4, so every
// message stays 4-byte aligned.
const arrayFixed = vectorFixed

func arrayPrefixSize(tagLen int) int { return (arrayFixed + tagLen + 3) &^ 3 }
func pad4(n uint64) uint64           { return (n + 3) &^ 3 }

func maskedBodySize(tagLen, n int) int { return arrayPrefixSize(tagLen) + 4*n }
func blobBodySize(tagLen, n int) int   { return arrayPrefixSize(tagLen) + int(pad4(uint64(n))) }

// maxEncodableBlob keeps a blob body's length within the header's uint32.
const maxEncodableBlob = 1<<32 - 1 - arrayFixed - MaxTagLen - 3 - 3

// KeySize is the length of one advertised public key (X25519, RFC 7748):
// a KindKey body holds one or more.
const KeySize = 32

// isBlob reports whether kind k carries a Blob.
func isBlob(k Kind) bool {
	return k == KindKey || k == KindShare || k == KindCipher || k == KindEvent
}

// putArrayPrefix writes count, tag and padding, returning the elements'
// offset.
func putArrayPrefix(b []byte, n int, tag string) int {
	binary.LittleEndian.PutUint32(b, uint32(n))
	b[4] = byte(len(tag))
	copy(b[arrayFixed:], tag)
	off := arrayPrefixSize(len(tag))
	for i := arrayFixed + len(tag); i < off; i++ {
		b[i] = 0
	}
	return off
}

func putUint32s(b []byte, xs []uint32) {
	b = b[:4*len(xs)]
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
}

// putBlob writes the bytes and their zero padding into b (exactly that long).
func putBlob(b, data []byte) {
	copy(b, data)
	clear(b[len(data):])
}

// decodeArrayPrefix checks an array body's count against limit and the
// body's length for elements of size elem (blob: 1, padded), and returns
// the count, the tag and the elements' offset.
func decodeArrayPrefix(body []byte, limit int, elem uint64, lim *Limits, what string) (int, []byte, int, error) {
	if len(body) < arrayFixed {
		return 0, nil, 0, reject(Malformed, fmt.Sprintf("%s body of %d bytes", what, len(body)))
	}
	n := binary.LittleEndian.Uint32(body)
	tagLen := int(body[4])
	if uint64(n) > uint64(limit) {
		return 0, nil, 0, reject(Oversize, fmt.Sprintf("%s of %d elements, limit %d", what, n, limit))
	}
	if tagLen > lim.MaxTagBytes {
		return 0, nil, 0, reject(Oversize, fmt.Sprintf("tag of %d bytes, limit %d", tagLen, lim.MaxTagBytes))
	}
	off := arrayPrefixSize(tagLen)
	size := elem * uint64(n)
	if elem == 1 {
		size = pad4(size)
	}
	if uint64(len(body)) != uint64(off)+size {
		return 0, nil, 0, reject(Malformed, fmt.Sprintf("%s body of %d bytes for %d elements and a %d-byte tag", what, len(body), n, tagLen))
	}
	for _, c := range body[arrayFixed+tagLen : off] {
		if c != 0 {
			return 0, nil, 0, reject(Malformed, "nonzero padding after tag")
		}
	}
	return int(n), body[arrayFixed : arrayFixed+tagLen], off, nil
}

func decodeMasked(body []byte, p *Masked, lim *Limits) error {
	n, tag, off, err := decodeArrayPrefix(body, lim.MaxFloats, 4, lim, "masked vector")
	if err != nil {
		return err
	}
	if string(tag) != p.Tag {
		p.Tag = string(tag)
	}
	if cap(p.Data) >= n {
		p.Data = p.Data[:n]
	} else {
		p.Data = make([]uint32, n)
	}
	b := body[off : off+4*n]
	for i := range p.Data {
		p.Data[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return nil
}

func decodeBlob(body []byte, p *Blob, lim *Limits) error {
	n, tag, off, err := decodeArrayPrefix(body, lim.MaxBlobBytes, 1, lim, "blob")
	if err != nil {
		return err
	}
	for _, c := range body[off+n:] {
		if c != 0 {
			return reject(Malformed, "nonzero padding after blob")
		}
	}
	if string(tag) != p.Tag {
		p.Tag = string(tag)
	}
	p.Data = append(p.Data[:0], body[off:off+n]...)
	return nil
}

// checkContent applies the content rule of a privacy kind (after the
// sender's signature verified, so a failure is evidence against it).
// Masked vectors have the model's length; an advertisement holds whole
// keys; shares and ciphertexts are not empty. The owning layer checks the
// meaning of the bytes.
func (v *Validator) checkContent(m *Message) *Error {
	switch m.Kind {
	case KindMasked:
		if v.payloadLen != 0 && len(m.Masked.Data) != v.payloadLen {
			return reject(WrongLength, fmt.Sprintf("%d masked values, want %d", len(m.Masked.Data), v.payloadLen))
		}
	case KindKey:
		if n := len(m.Blob.Data); n == 0 || n%KeySize != 0 {
			return reject(WrongLength, fmt.Sprintf("key advertisement of %d bytes, want a positive multiple of %d", n, KeySize))
		}
	case KindEvent:
		if r := v.checkEvents(m); r != nil {
			return r
		}
	case KindShare, KindCipher:
		if len(m.Blob.Data) == 0 {
			return reject(WrongLength, fmt.Sprintf("empty %s body", m.Kind))
		}
	}
	return nil
}
