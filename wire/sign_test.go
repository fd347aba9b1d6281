package wire

import (
	"crypto/ed25519"
	"crypto/sha256"
	"math"
	"math/rand/v2"
	"testing"
)

func TestSignVerify(t *testing.T) {
	m := vectorMsg(t, 1)
	if !Verify(m, testIDs[1].Public()) {
		t.Fatal("a signed message does not verify")
	}
	if Verify(m, testIDs[2].Public()) {
		t.Fatal("verifies under another node's key")
	}
	if Verify(m, testIDs[1].Public()[:16]) || Verify(nil, testIDs[1].Public()) {
		t.Fatal("verifies with a short key or a nil message")
	}
	if err := Sign(m, testIDs[2]); err == nil {
		t.Fatal("node 2 signed a message from node 1")
	}
	if err := Sign(nil, testIDs[1]); err == nil {
		t.Fatal("signed nil")
	}
	if Sign(&Message{Header: Header{Kind: KindVector}}, &Identity{}) == nil || Sign(m, nil) == nil ||
		SignClaim(&Claim{}, &Identity{}) == nil {
		t.Fatal("signed with an identity without key")
	}
	bad := &Message{Header: Header{Kind: 9, From: 1}}
	if err := Sign(bad, testIDs[1]); err == nil || Verify(bad, testIDs[1].Public()) {
		t.Fatal("signed or verified an unencodable message")
	}
}

// TestDigestMatchesEncoding checks that the streamed digest, hashed in
// place and through the scratch buffer alike, is SHA-256 of the encoding
// itself: random vector and masked payloads with the awkward finite floats
// (±0, subnormals, ±max), lengths around and beyond the scratch buffer, and
// payloads that start unaligned within their backing array.
func TestDigestMatchesEncoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	edge := []float32{float32(math.Copysign(0, -1)), 0, math.Float32frombits(1), math.Float32frombits(0x807fffff),
		math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32, 1}
	for _, n := range []int{0, 1, 2, 3, 2047, 2048, 2049, 5000, 3*2048 + 17} {
		for _, kind := range []Kind{KindVector, KindMasked} {
			m := &Message{Header: Header{Kind: kind, From: 1, To: Broadcast, Round: 3, Seq: rng.Uint64()}}
			switch kind {
			case KindVector:
				backing := make([]float32, n+1)
				for i := range backing {
					if rng.IntN(4) == 0 {
						backing[i] = edge[rng.IntN(len(edge))]
					} else {
						// Any finite bit pattern: an all-ones exponent loses
						// its lowest bit.
						x := rng.Uint32()
						if x&0x7f800000 == 0x7f800000 {
							x ^= 1 << 23
						}
						backing[i] = math.Float32frombits(x)
					}
				}
				m.Payload = Payload{Tag: "abc", Data: backing[1:]} // offset 4 bytes into its array
			case KindMasked:
				m.Masked = Masked{Tag: "secagg/x", Data: make([]uint32, n)}
				for i := range m.Masked.Data {
					m.Masked.Data[i] = rng.Uint32()
				}
			}
			b := encode(t, m)
			want := sha256.Sum256(b[:len(b)-SignatureSize])
			for _, inPlace := range []bool{true, false} {
				d := newDigester()
				d.inPlace = inPlace
				got, err := d.digest(m)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("kind %d, n=%d, in place %v: digest differs from the encoding's", kind, n, inPlace)
				}
			}
			mustSign(t, m, 1)
			if !Verify(m, testIDs[1].Public()) {
				t.Fatalf("kind %d, n=%d: signed message does not verify", kind, n)
			}
		}
	}
	if !littleEndian {
		t.Log("big-endian host: digests are never hashed in place here")
	}
}

// TestEveryBitFlip flips each bit of a signed vector message and of a signed
// forwarded claim: every variant either fails to decode or fails to verify,
// under the original sender's key and under the key of whichever sender the
// flipped header names.
func TestEveryBitFlip(t *testing.T) {
	for _, orig := range []*Message{vectorMsg(t, 1), claimMsg(t, 1, 2)} {
		b := encode(t, orig)
		var m Message
		for i := range 8 * len(b) {
			b[i/8] ^= 1 << (i % 8)
			if Decode(b, &m) == nil {
				if Verify(&m, testIDs[orig.From].Public()) {
					t.Fatalf("%v: flipping bit %d still verifies", orig.Kind, i)
				}
				if k, ok := testDir.Key(m.From); ok && Verify(&m, k) {
					t.Fatalf("%v: flipping bit %d verifies as node %d", orig.Kind, i, m.From)
				}
			}
			b[i/8] ^= 1 << (i % 8)
		}
	}
}

func TestClaimSignature(t *testing.T) {
	pub := testIDs[1].Public()
	base := claimMsg(t, 1, 1).Claim
	if !VerifyClaim(&base, pub) {
		t.Fatal("a signed claim does not verify")
	}
	mod := func(f func(c *Claim)) *Claim {
		c := base
		c.Neighbors = append([]uint32(nil), base.Neighbors...)
		f(&c)
		return &c
	}
	if c := mod(func(c *Claim) { c.Hop = 2 }); !VerifyClaim(c, pub) {
		t.Fatal("changing only hop broke the claim signature")
	}
	for name, c := range map[string]*Claim{
		"neighbor changed": mod(func(c *Claim) { c.Neighbors[1] = 4 }),
		"neighbor added":   mod(func(c *Claim) { c.Neighbors = append(c.Neighbors, 7) }),
		"neighbor removed": mod(func(c *Claim) { c.Neighbors = c.Neighbors[:2] }),
		"round":            mod(func(c *Claim) { c.Round++ }),
		"version":          mod(func(c *Claim) { c.Version++ }),
		"source":           mod(func(c *Claim) { c.Source = 2 }),
		"signature":        mod(func(c *Claim) { c.Sig[10] ^= 4 }),
	} {
		if VerifyClaim(c, pub) || VerifyClaim(c, testIDs[2].Public()) {
			t.Errorf("%s: claim still verifies", name)
		}
	}
	if VerifyClaim(&base, pub[:5]) || VerifyClaim(nil, pub) {
		t.Fatal("verified with a short key or nil claim")
	}
	if SignClaim(&base, testIDs[2]) == nil || SignClaim(nil, testIDs[1]) == nil {
		t.Fatal("signed a claim of another node, or nil")
	}
}

// TestSignatureDomains: the same bytes signed in the message context do not
// pass as a claim signature, so one kind of signature cannot be lifted into
// the other.
func TestSignatureDomains(t *testing.T) {
	c := claimMsg(t, 1, 1).Claim
	b, err := claimSigned(&c)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := testIDs[1].priv.Sign(nil, b, &ed25519.Options{Context: messageContext})
	if err != nil {
		t.Fatal(err)
	}
	copy(c.Sig[:], sig)
	if VerifyClaim(&c, testIDs[1].Public()) {
		t.Fatal("a message-context signature verified as a claim signature")
	}
}
