package wire

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
)

func maskedMsg(t testing.TB, from uint32, data []uint32) *Message {
	t.Helper()
	m := &Message{Header: Header{Kind: KindMasked, From: from, To: 0, Round: testRound, Seq: 1}, Masked: Masked{Tag: "model", Data: data}}
	mustSign(t, m, from)
	return m
}

func blobMsg(t testing.TB, k Kind, from uint32, data []byte, tag string) *Message {
	t.Helper()
	m := &Message{Header: Header{Kind: k, From: from, To: 0, Round: testRound, Seq: 1}, Blob: Blob{Tag: tag, Data: data}}
	mustSign(t, m, from)
	return m
}

// The privacy kinds round-trip bit for bit, re-encode canonically, verify,
// and pass the validator when well formed.
func TestPrivacyKindsRoundTrip(t *testing.T) {
	key := make([]byte, 2*KeySize)
	for i := range key {
		key[i] = byte(i*7 + 1)
	}
	msgs := []*Message{
		maskedMsg(t, 1, []uint32{0, 1, 1 << 31, ^uint32(0), 7, 9}),
		blobMsg(t, KindKey, 2, key, "x25519"),
		blobMsg(t, KindShare, 3, []byte{1, 2, 3, 4, 5}, "seed"), // 5 bytes: padded to 8
		blobMsg(t, KindCipher, 1, bytes.Repeat([]byte{0xff}, 17), ""),
	}
	for _, m := range msgs {
		b := encode(t, m)
		if n, _ := EncodedSize(m); n != len(b) || len(b)%4 != 0 {
			t.Fatalf("%s: encoded %d bytes, EncodedSize %d (must be a multiple of 4)", m.Kind, len(b), n)
		}
		var got Message
		if err := Decode(b, &got); err != nil {
			t.Fatalf("%s: %v", m.Kind, err)
		}
		if got.Header != m.Header || got.Sig != m.Sig || !slices.Equal(got.Masked.Data, m.Masked.Data) ||
			got.Masked.Tag != m.Masked.Tag || !bytes.Equal(got.Blob.Data, m.Blob.Data) || got.Blob.Tag != m.Blob.Tag {
			t.Fatalf("%s: round trip changed the message", m.Kind)
		}
		if again := encode(t, &got); !bytes.Equal(again, b) {
			t.Fatalf("%s: re-encoding differs", m.Kind)
		}
		if !Verify(&got, testIDs[m.From].Public()) {
			t.Fatalf("%s: signature does not verify after the round trip", m.Kind)
		}
		if err := newTestValidator(t, Limits{}).Receive(b, &got); err != nil {
			t.Fatalf("%s: validator: %v", m.Kind, err)
		}
		// The signature covers the body: one changed element fails it.
		tampered := got
		if m.Kind == KindMasked {
			tampered.Masked.Data = slices.Clone(got.Masked.Data)
			tampered.Masked.Data[0] ^= 1
		} else {
			tampered.Blob.Data = slices.Clone(got.Blob.Data)
			tampered.Blob.Data[0] ^= 1
		}
		if Verify(&tampered, testIDs[m.From].Public()) {
			t.Fatalf("%s: a changed body still verifies", m.Kind)
		}
	}
}

// Each privacy kind has its own content rule, checked after the signature
// (so a failure is evidence), and its own size limit, checked before it.
func TestPrivacyKindsValidation(t *testing.T) {
	cases := []struct {
		name string
		m    *Message
		lim  Limits
		want Reason
	}{
		{"masked of the wrong length", maskedMsg(t, 1, []uint32{1, 2, 3}), Limits{}, WrongLength},
		{"masked over the limit", maskedMsg(t, 1, make([]uint32, testLen)), Limits{MaxFloats: testLen - 1}, Oversize},
		{"key of 31 bytes", blobMsg(t, KindKey, 1, make([]byte, 31), ""), Limits{}, WrongLength},
		{"empty key advertisement", blobMsg(t, KindKey, 1, nil, ""), Limits{}, WrongLength},
		{"empty share", blobMsg(t, KindShare, 2, nil, ""), Limits{}, WrongLength},
		{"empty ciphertext", blobMsg(t, KindCipher, 2, nil, ""), Limits{}, WrongLength},
		{"ciphertext over the limit", blobMsg(t, KindCipher, 2, make([]byte, 65), ""), Limits{MaxBlobBytes: 64}, Oversize},
		{"blob tag over the limit", blobMsg(t, KindShare, 2, []byte{1}, "a-long-tag"), Limits{MaxTagBytes: 4}, Oversize},
	}
	for _, tc := range cases {
		v := newTestValidator(t, tc.lim)
		err := v.Check(tc.m)
		if ReasonOf(err) != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		if tc.want.Signed() != (tc.want == WrongLength) {
			t.Fatalf("%s: test assumes WrongLength alone is signed evidence", tc.name)
		}
		// The same bytes through the decoder give the same verdict.
		b := encode(t, tc.m)
		var m Message
		if err := newTestValidator(t, tc.lim).Receive(b, &m); ReasonOf(err) != tc.want {
			t.Errorf("%s (received): got %v, want %v", tc.name, err, tc.want)
		}
	}
}

// Decoding a privacy kind rejects non-canonical bytes and every truncation.
func TestPrivacyKindsDecodeErrors(t *testing.T) {
	share := encode(t, blobMsg(t, KindShare, 2, []byte{1, 2, 3, 4, 5}, "s"))
	bad := slices.Clone(share)
	bad[len(bad)-SignatureSize-1] = 9 // the blob's zero padding
	var m Message
	if err := Decode(bad, &m); ReasonOf(err) != Malformed {
		t.Fatalf("nonzero blob padding: %v", err)
	}
	masked := encode(t, maskedMsg(t, 1, make([]uint32, testLen)))
	for _, b := range [][]byte{share, masked} {
		for n := range len(b) {
			if err := Decode(b[:n], &m); err == nil {
				t.Fatalf("truncation to %d of %d bytes decoded", n, len(b))
			}
		}
	}
	// A masked body declaring far more values than it carries is Oversize
	// under a limit, Malformed without one: never an allocation.
	huge := slices.Clone(masked)
	binary.LittleEndian.PutUint32(huge[HeaderSize:], 1<<30)
	if err := DecodeLimited(huge, &m, Limits{MaxFloats: 1 << 20}); ReasonOf(err) != Oversize {
		t.Fatalf("declared 2^30 values: %v", err)
	}
	// Decoding a vector into a message that held a blob leaves no blob.
	_ = Decode(share, &m)
	if err := Decode(encode(t, vectorMsg(t, 1)), &m); err != nil || len(m.Blob.Data) != 0 || len(m.Masked.Data) != 0 {
		t.Fatalf("stale body after decoding another kind: %v, blob %d", err, len(m.Blob.Data))
	}
}
