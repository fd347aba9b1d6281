package wire

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"golang.org/x/crypto/curve25519"
)

// TestCurveKeysMatchLibsodium: the X25519 keys of an Ed25519 key are
// libsodium's (crypto_sign_ed25519_sk_to_curve25519 and
// crypto_sign_ed25519_pk_to_curve25519 of the seed 00 01 … 1f, computed
// with python3-nacl), and for random keys the public key derived from the
// Ed25519 public key is the one X25519 computes from the secret.
func TestCurveKeysMatchLibsodium(t *testing.T) {
	seed := make([]byte, 32)
	for i := range seed {
		seed[i] = byte(i)
	}
	x, err := IdentityFromKey(0, ed25519.NewKeyFromSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	sec := x.CurveSecret()
	pub, err := CurvePublic(x.Public())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := hex.EncodeToString(sec[:]), "3894eea49c580aef816935762be049559d6d1440dede12e6a125f1841fff8e6f"; got != want {
		t.Errorf("secret %s, libsodium %s", got, want)
	}
	if got, want := hex.EncodeToString(pub[:]), "4701d08488451f545a409fb58ae3e58581ca40ac3f7f114698cd71deac73ca01"; got != want {
		t.Errorf("public %s, libsodium %s", got, want)
	}
	for i := range 20 {
		x, err := GenerateIdentity(uint32(i), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		sec := x.CurveSecret()
		want, err := curve25519.X25519(sec[:], curve25519.Basepoint)
		if err != nil {
			t.Fatal(err)
		}
		got, err := CurvePublic(x.Public())
		if err != nil || hex.EncodeToString(got[:]) != hex.EncodeToString(want) {
			t.Fatalf("key %d: public from Ed25519 %x (%v), from the secret %x", i, got, err, want)
		}
	}
	bad := make([]byte, 32)
	bad[0] = 2 // y = 2 is on no point of the curve
	if _, err := CurvePublic(bad); err == nil {
		t.Error("a key off the curve was accepted")
	}
	if _, err := CurvePublic(bad[:31]); err == nil {
		t.Error("a 31-byte key was accepted")
	}
}
