package privacy

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
)

// The primitives of secure aggregation (Bonawitz et al. 2017, §4): X25519
// key agreement (RFC 7748, crypto/ecdh), HKDF-SHA-256 to turn an agreed
// secret into a key bound to (round, group, pair), AES-256-CTR as the
// keyed PRG that expands a key into a mask of 32-bit words, and
// AES-256-GCM to send Shamir shares through the group's aggregator, which
// relays them but cannot read, alter or replay them.

// x25519Key makes an X25519 key pair from 32 bytes of rand (drawn here
// rather than by ecdh.GenerateKey so that a seeded simulation repeats).
func x25519Key(rand io.Reader) (*ecdh.PrivateKey, error) {
	var b [32]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return nil, fmt.Errorf("secagg: randomness: %w", err)
	}
	return ecdh.X25519().NewPrivateKey(b[:])
}

// Labels of the derived keys: each purpose its own, so no key serves two.
const (
	labelPair  = "trellis/secagg/v1 pairwise mask"
	labelSelf  = "trellis/secagg/v1 self mask"
	labelShare = "trellis/secagg/v1 share encryption"
)

// deriveKey is HKDF-SHA-256 of secret with info = label ‖ round ‖ group ‖
// ids (little-endian).
func deriveKey(secret []byte, label string, round uint64, group uint32, ids ...uint32) [32]byte {
	info := make([]byte, 0, len(label)+12+4*len(ids))
	info = append(info, label...)
	info = binary.LittleEndian.AppendUint64(info, round)
	info = binary.LittleEndian.AppendUint32(info, group)
	for _, id := range ids {
		info = binary.LittleEndian.AppendUint32(info, id)
	}
	k, err := hkdf.Key(sha256.New, secret, nil, string(info), 32)
	if err != nil {
		panic(err) // only for a key length HKDF cannot give; 32 always works
	}
	return [32]byte(k)
}

// pairKey is the pairwise mask key of members lo < hi, from their X25519
// agreement.
func pairKey(shared []byte, round uint64, group, lo, hi uint32) [32]byte {
	return deriveKey(shared, labelPair, round, group, lo, hi)
}

// maskChunk is how many bytes of keystream are made at a time.
const maskChunk = 1 << 14

// addMask adds (sign > 0) or subtracts the PRG's words under key to y,
// modulo 2^32: AES-256-CTR from a zero IV (every key is used for one
// mask only), its keystream read as little-endian uint32.
func addMask(y []uint32, key *[32]byte, sign int) {
	block, err := aes.NewCipher(key[:])
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	var iv [aes.BlockSize]byte
	ctr := cipher.NewCTR(block, iv[:])
	var buf [maskChunk]byte
	for off := 0; off < len(y); off += maskChunk / 4 {
		w := y[off:min(len(y), off+maskChunk/4)]
		b := buf[:4*len(w)]
		clear(b)
		ctr.XORKeyStream(b, b)
		if sign > 0 {
			for i := range w {
				w[i] += binary.LittleEndian.Uint32(b[4*i:])
			}
		} else {
			for i := range w {
				w[i] -= binary.LittleEndian.Uint32(b[4*i:])
			}
		}
	}
}

// shareAEAD returns the AES-256-GCM of the share channel from member from
// to member to of (round, group), keyed by their X25519 agreement; the key
// is unique to the direction, so a zero nonce is safe, and the additional
// data binds round, group and both ids.
func shareAEAD(shared []byte, round uint64, group, from, to uint32) (cipher.AEAD, []byte) {
	k := deriveKey(shared, labelShare, round, group, from, to)
	block, err := aes.NewCipher(k[:])
	if err != nil {
		panic(err)
	}
	g, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	ad := binary.LittleEndian.AppendUint64([]byte(labelShare), round)
	ad = binary.LittleEndian.AppendUint32(ad, group)
	ad = binary.LittleEndian.AppendUint32(ad, from)
	ad = binary.LittleEndian.AppendUint32(ad, to)
	return g, ad
}

// readerFunc makes an io.Reader of a uint64 source (a math/rand/v2 stream
// in simulation, crypto/rand through seed.Crypto in deployment).
type uint64Reader struct {
	next func() uint64
	buf  [8]byte
	n    int
}

// NewStreamReader returns an io.Reader over a source of uint64 values.
func NewStreamReader(next func() uint64) io.Reader { return &uint64Reader{next: next} }

func (r *uint64Reader) Read(p []byte) (int, error) {
	for i := range p {
		if r.n == 0 {
			binary.LittleEndian.PutUint64(r.buf[:], r.next())
			r.n = 8
		}
		p[i] = r.buf[8-r.n]
		r.n--
	}
	return len(p), nil
}
