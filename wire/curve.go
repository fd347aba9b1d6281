package wire

import (
	"crypto/ed25519"
	"crypto/sha512"
	"fmt"

	"filippo.io/edwards25519"
)

// A node's key for encrypted links (X25519, what ZeroMQ's CURVE
// mechanism uses) is its Ed25519 key carried over to the Montgomery form
// of the same curve, as libsodium's crypto_sign_ed25519_sk_to_curve25519
// and crypto_sign_ed25519_pk_to_curve25519 do: the secret scalar is the
// clamped first half of SHA-512(seed) (the scalar Ed25519 signs with),
// and the public key is the birational map u = (1 + y)/(1 − y) of the
// Edwards point. So the peers file that authenticates a node's signatures
// authenticates its links too, with no second key to distribute or to
// bind to the first; using one key for both Ed25519 signatures and X25519
// key agreement is the construction libsodium offers for it, shown secure
// for this pair of schemes.

// CurveSecret is x's X25519 secret key (the scalar its Ed25519 key signs
// with, clamped).
func (x *Identity) CurveSecret() [32]byte {
	h := sha512.Sum512(x.priv.Seed())
	var s [32]byte
	copy(s[:], h[:32])
	s[0] &= 248
	s[31] &= 127
	s[31] |= 64
	return s
}

// CurvePublic is the X25519 public key of the node whose Ed25519 public
// key is pub; a pub that is not a point of the curve is refused.
func CurvePublic(pub ed25519.PublicKey) ([32]byte, error) {
	var u [32]byte
	if len(pub) != ed25519.PublicKeySize {
		return u, fmt.Errorf("wire: Ed25519 public key of %d bytes, want %d", len(pub), ed25519.PublicKeySize)
	}
	p, err := new(edwards25519.Point).SetBytes(pub)
	if err != nil {
		return u, fmt.Errorf("wire: Ed25519 public key %x is not a point of the curve", []byte(pub))
	}
	copy(u[:], p.BytesMontgomery())
	return u, nil
}
