package wire

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"sync"
	"unsafe"
)

// Signature scheme (doc.go, "Signatures"). Distinct Ed25519ctx contexts keep
// a message signature from ever verifying as a claim signature or vice versa,
// and tie both to this format version.
const (
	messageContext = "trellis/wire/v1 message"
	claimContext   = "trellis/wire/v1 claim"
)

var (
	messageOpts = &ed25519.Options{Context: messageContext}
	claimOpts   = &ed25519.Options{Context: claimContext}
)

// digester hashes a message's canonical encoding without materialising it.
// On a little-endian host a float32 or uint32 array in memory already is its
// encoding (the format is little-endian), so the payload is hashed in place:
// no copy at all. Elsewhere the values go through a small scratch buffer that
// stays in cache, so verifying a 1 MB payload still costs one SHA-256 pass
// and no 1 MB copy. Signing, verifying and validators take one from
// digesters while they hash: a validator per node holding its own would be
// 8 KiB a node (800 MiB for 100,000 simulated nodes).
type digester struct {
	h       hash.Hash
	scratch []byte
	// inPlace: hash payload memory directly (littleEndian); a test turns it
	// off to check the portable path on any host.
	inPlace bool
}

// littleEndian reports whether the host lays out a uint32 as the format
// does, least significant byte first.
var littleEndian = binary.NativeEndian.Uint32([]byte{1, 0, 0, 0}) == 1

func newDigester() *digester {
	return &digester{h: sha256.New(), scratch: make([]byte, 0, 8192), inPlace: littleEndian}
}

// digesters lends digesters (getDigester, putDigester); each is reset by
// its digest, so what the last user hashed does not matter.
var digesters = sync.Pool{New: func() any { return newDigester() }}

func getDigester() *digester  { return digesters.Get().(*digester) }
func putDigester(d *digester) { digesters.Put(d) }

// digest returns SHA-256 of AppendEncode(m) without its trailing signature.
func (d *digester) digest(m *Message) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	body, err := bodySize(m)
	if err != nil {
		return sum, err
	}
	d.h.Reset()
	if m.Kind == KindVector {
		b := d.scratch[:HeaderSize+vectorBodySize(len(m.Payload.Tag), 0)]
		putHeader(b, &m.Header, body)
		putVectorPrefix(b[HeaderSize:], &m.Payload)
		d.h.Write(b)
		hashWords(d, m.Payload.Data, putFloats)
	} else if m.Kind == KindMasked {
		b := d.scratch[:HeaderSize+arrayPrefixSize(len(m.Masked.Tag))]
		putHeader(b, &m.Header, body)
		putArrayPrefix(b[HeaderSize:], len(m.Masked.Data), m.Masked.Tag)
		d.h.Write(b)
		hashWords(d, m.Masked.Data, putUint32s)
	} else if isBlob(m.Kind) {
		b := d.scratch[:HeaderSize+arrayPrefixSize(len(m.Blob.Tag))]
		putHeader(b, &m.Header, body)
		putArrayPrefix(b[HeaderSize:], len(m.Blob.Data), m.Blob.Tag)
		d.h.Write(b)
		d.h.Write(m.Blob.Data)
		var zero [3]byte
		d.h.Write(zero[:pad4(uint64(len(m.Blob.Data)))-uint64(len(m.Blob.Data))])
	} else {
		// Claims are small: encode whole, reusing (and keeping) the buffer.
		b, err := AppendEncode(d.scratch[:0], m)
		if err != nil {
			return sum, err
		}
		if cap(b) > cap(d.scratch) {
			d.scratch = b[:0]
		}
		d.h.Write(b[:len(b)-SignatureSize])
	}
	d.h.Sum(sum[:0])
	return sum, nil
}

// hashWords hashes the encoding of xs, 4 little-endian bytes a value: in
// place when the host's layout is the format's, else converted by put a
// scratch buffer at a time.
func hashWords[T float32 | uint32](d *digester, xs []T, put func(b []byte, xs []T)) {
	if len(xs) == 0 {
		return
	}
	if d.inPlace {
		d.h.Write(unsafe.Slice((*byte)(unsafe.Pointer(&xs[0])), 4*len(xs)))
		return
	}
	for chunk := cap(d.scratch) / 4; len(xs) > 0; {
		n := min(len(xs), chunk)
		b := d.scratch[:4*n]
		put(b, xs[:n])
		d.h.Write(b)
		xs = xs[n:]
	}
}

// Sign sets m.Sig to id's signature over every other field of m (its
// canonical encoding minus the signature). m.From must be id's node: a node
// signs only as itself.
func Sign(m *Message, id *Identity) error { return SignNoted(m, id, nil) }

// SignNoted is Sign that also leaves the digest it signed in a simulator's
// memo (nil: none), so that receivers in the coming delivery phase reuse it
// instead of hashing the payload again (DigestMemo, "Senders").
func SignNoted(m *Message, id *Identity, memo *DigestMemo) error {
	if m == nil || !id.valid() {
		return errors.New("wire: Sign with nil message or identity without key")
	}
	if m.From != id.id {
		return fmt.Errorf("wire: node %d cannot sign a message from node %d", id.id, m.From)
	}
	d := getDigester()
	sum, err := d.digest(m)
	putDigester(d)
	if err != nil {
		return err
	}
	sig, err := id.priv.Sign(nil, sum[:], messageOpts)
	if err != nil {
		return fmt.Errorf("wire: signing: %w", err)
	}
	copy(m.Sig[:], sig)
	memo.note(m, sum)
	return nil
}

// Verify reports whether m.Sig is pub's signature over m. It is false for a
// malformed key or a message the format cannot represent.
func Verify(m *Message, pub ed25519.PublicKey) bool {
	if m == nil {
		return false
	}
	d := getDigester()
	defer putDigester(d)
	return d.verify(m, pub)
}

func (d *digester) verify(m *Message, pub ed25519.PublicKey) bool {
	return d.verifyCached(m, pub, nil, nil)
}

// verifyCached is verify through a VerifyCache and a DigestMemo (nil: none).
func (d *digester) verifyCached(m *Message, pub ed25519.PublicKey, c *VerifyCache, memo *DigestMemo) bool {
	if len(pub) != ed25519.PublicKeySize { // ed25519 panics on other sizes
		return false
	}
	sum, err := memo.digest(m, d)
	if err != nil {
		return false
	}
	return c.verify(pub, sum[:], m.Sig[:], messageOpts)
}

// claimSigned returns the bytes a claim's source signs: source, neighbor
// count, round, version, neighbors, laid out as in the claim body but
// without hop, reserved bytes and signature (doc.go, "Claim body").
func claimSigned(c *Claim) ([]byte, error) {
	if len(c.Neighbors) > maxEncodableNeighbors {
		return nil, reject(Oversize, fmt.Sprintf("%d neighbors, format allows %d", len(c.Neighbors), maxEncodableNeighbors))
	}
	b := make([]byte, claimNeighbors+4*len(c.Neighbors))
	putClaimSigned(b, c)
	// Drop the hop/reserved gap so hop is outside the signed bytes.
	return append(b[:24], b[claimNeighbors:]...), nil
}

// SignClaim sets c.Sig to the source's signature over every field of c but
// Hop. c.Source must be id's node.
func SignClaim(c *Claim, id *Identity) error {
	if c == nil || !id.valid() {
		return errors.New("wire: SignClaim with nil claim or identity without key")
	}
	if c.Source != id.id {
		return fmt.Errorf("wire: node %d cannot sign a claim of node %d", id.id, c.Source)
	}
	b, err := claimSigned(c)
	if err != nil {
		return err
	}
	sig, err := id.priv.Sign(nil, b, claimOpts)
	if err != nil {
		return fmt.Errorf("wire: signing claim: %w", err)
	}
	copy(c.Sig[:], sig)
	return nil
}

// VerifyClaim reports whether c.Sig is pub's signature over c (Hop aside).
func VerifyClaim(c *Claim, pub ed25519.PublicKey) bool {
	if c == nil || len(pub) != ed25519.PublicKeySize {
		return false
	}
	b, err := claimSigned(c)
	if err != nil {
		return false
	}
	return ed25519.VerifyWithOptions(pub, b, c.Sig[:], claimOpts) == nil
}
