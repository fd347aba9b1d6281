package wire

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestIdentityDeterministic(t *testing.T) {
	a, b := NewIdentity(7, 3), NewIdentity(7, 3)
	if !a.Public().Equal(b.Public()) || a.ID() != 3 {
		t.Fatal("same (seed, id) gave different keys")
	}
	seen := map[string]bool{}
	for _, x := range []*Identity{a, NewIdentity(7, 4), NewIdentity(8, 3), NewIdentity(3, 7)} {
		k := string(x.Public())
		if seen[k] {
			t.Fatal("two (seed, id) pairs share a key")
		}
		seen[k] = true
	}
	// The derivation spelled out, byte by byte, as documented.
	in := append([]byte("trellis/wire/v1 identity\x00"), 7, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0)
	s := sha256.Sum256(in)
	if !ed25519.NewKeyFromSeed(s[:]).Public().(ed25519.PublicKey).Equal(a.Public()) {
		t.Fatal("NewIdentity does not follow the documented derivation")
	}
	// Pinned so that a change of derivation, which would change every
	// simulated signature byte, cannot go unnoticed.
	const pinned = "00add2f1e5aa6185fe2884196be7de912698fc8b76210dcfc3853416a358762d"
	if got := hex.EncodeToString(NewIdentity(1, 0).Public()); got != pinned {
		t.Fatalf("NewIdentity(1, 0) public key %s, pinned %s", got, pinned)
	}
	// Ed25519 signing is deterministic, so simulated messages are too.
	m1, m2 := vectorMsg(t, 1), vectorMsg(t, 1)
	if m1.Sig != m2.Sig {
		t.Fatal("signing the same message twice gave different signatures")
	}
}

func TestGenerateIdentity(t *testing.T) {
	x, err := GenerateIdentity(5, rand.Reader)
	if err != nil || x.ID() != 5 {
		t.Fatal(err)
	}
	m := &Message{Header: Header{Kind: KindVector, From: 5}}
	if err := Sign(m, x); err != nil || !Verify(m, x.Public()) {
		t.Fatalf("generated identity cannot sign: %v", err)
	}
	if _, err := GenerateIdentity(5, bytes.NewReader(nil)); err == nil {
		t.Fatal("GenerateIdentity from an empty reader succeeded")
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	y, err := IdentityFromKey(6, priv)
	if err != nil || !y.Public().Equal(priv.Public()) {
		t.Fatal(err)
	}
	if _, err := IdentityFromKey(6, priv[:10]); err == nil {
		t.Fatal("short private key accepted")
	}
}

func TestDirectory(t *testing.T) {
	var zero Directory // usable without NewDirectory
	if _, ok := zero.Key(1); ok || zero.Add(1, NewIdentity(1, 1).Public()) != nil || zero.Len() != 1 {
		t.Fatal("zero Directory")
	}
	d := NewDirectory()
	k1 := NewIdentity(1, 1).Public()
	k2 := NewIdentity(1, 2).Public()
	if err := d.Add(9, k2); err != nil {
		t.Fatal(err)
	}
	if err := d.Add(1, k1); err != nil {
		t.Fatal(err)
	}
	if err := d.Add(1, k1); err != nil {
		t.Fatalf("re-adding the same key: %v", err)
	}
	if err := d.Add(1, k2); err == nil {
		t.Fatal("a known id's key was replaced")
	}
	if err := d.Add(2, k1[:31]); err == nil {
		t.Fatal("short key accepted")
	}
	if err := d.Add(Broadcast, k1); err == nil {
		t.Fatal("Broadcast accepted as a node id")
	}
	if ids := d.IDs(); len(ids) != 2 || ids[0] != 1 || ids[1] != 9 || d.Len() != 2 {
		t.Fatalf("IDs %v", ids)
	}
	k2[0] ^= 1 // the directory keeps its own copy
	if k, ok := d.Key(9); !ok || !k.Equal(NewIdentity(1, 2).Public()) {
		t.Fatal("directory aliases the caller's key")
	}
	if _, ok := d.Key(2); ok {
		t.Fatal("unknown id found")
	}
	ids, dir := SimIdentities(1, 3)
	for i, x := range ids {
		if k, ok := dir.Key(uint32(i)); !ok || !k.Equal(NewIdentity(1, uint32(i)).Public()) || x.ID() != uint32(i) {
			t.Fatalf("SimIdentities node %d", i)
		}
	}
}
