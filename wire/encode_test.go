package wire

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
)

// awkward holds every float class whose bits a careless codec could change.
var awkward = []float32{
	0, float32(math.Copysign(0, -1)), 1, -1, math.Pi,
	math.Float32frombits(1),          // smallest subnormal
	math.Float32frombits(0x007fffff), // largest subnormal
	math.Float32frombits(0x80000001), // negative subnormal
	math.MaxFloat32, -math.MaxFloat32,
	float32(math.Inf(1)), float32(math.Inf(-1)),
	math.Float32frombits(0x7fc00001), // quiet NaN with payload
	math.Float32frombits(0xff812345), // negative signalling NaN with payload
}

func TestRoundTripVector(t *testing.T) {
	lim := Limits{MaxTagBytes: MaxTagLen}
	for _, tag := range []string{"", "g", "gr", "gra", "grad", "model", strings.Repeat("t", MaxTagLen)} {
		for _, n := range []int{0, 1, 3, len(awkward)} {
			m := &Message{
				Header:  Header{Kind: KindVector, From: 7, To: Broadcast, Round: math.MaxUint64, Seq: 1<<40 + 3},
				Payload: Payload{Tag: tag, Data: awkward[:n]},
			}
			for i := range m.Sig {
				m.Sig[i] = byte(i * 3)
			}
			b := encode(t, m)
			if size, _ := EncodedSize(m); len(b) != size {
				t.Fatalf("tag %q n %d: encoded %d bytes, EncodedSize %d", tag, n, len(b), size)
			}
			if off := HeaderSize + (vectorFixed+len(tag)+3)&^3; off%4 != 0 {
				t.Fatalf("floats at unaligned offset %d", off)
			}
			var got Message
			if err := DecodeLimited(b, &got, lim); err != nil {
				t.Fatalf("tag %q n %d: %v", tag, n, err)
			}
			if got.Header != m.Header || got.Payload.Tag != tag || got.Sig != m.Sig || !sameBits(got.Payload.Data, m.Payload.Data) {
				t.Fatalf("tag %q n %d: round trip changed the message:\n got %+v\nwant %+v", tag, n, got, *m)
			}
			if again := encode(t, &got); !bytes.Equal(again, b) {
				t.Fatalf("tag %q n %d: re-encoding differs", tag, n)
			}
		}
	}
}

func TestRoundTripClaim(t *testing.T) {
	for _, nb := range [][]uint32{nil, {0}, {1, 2, 3, 1000, math.MaxUint32 - 1}} {
		m := &Message{
			Header: Header{Kind: KindClaim, From: 2, To: 0, Round: 11, Seq: 4},
			Claim:  Claim{Source: 3, Round: 10, Version: 1<<63 + 5, Neighbors: nb, Hop: 255},
		}
		m.Claim.Sig[0], m.Claim.Sig[63], m.Sig[5] = 1, 2, 3
		b := encode(t, m)
		if len(b) != HeaderSize+92+4*len(nb)+SignatureSize {
			t.Fatalf("claim of %d neighbors encodes to %d bytes", len(nb), len(b))
		}
		var got Message
		if err := Decode(b, &got); err != nil {
			t.Fatal(err)
		}
		c := got.Claim
		if got.Header != m.Header || got.Sig != m.Sig || c.Source != 3 || c.Round != 10 || c.Version != m.Claim.Version ||
			c.Hop != 255 || c.Sig != m.Claim.Sig || !slices.Equal(c.Neighbors, nb) {
			t.Fatalf("round trip changed the claim:\n got %+v\nwant %+v", got, *m)
		}
	}
}

// TestLayout builds a message byte by byte from the table in doc.go, not
// from the encoder, and checks the encoder agrees.
func TestLayout(t *testing.T) {
	le := binary.LittleEndian
	var want []byte
	want = append(want, 1, 1, 0, 0)             // version, kind vector, flags
	want = le.AppendUint32(want, 0x01020304)    // from
	want = le.AppendUint32(want, 9)             // to
	want = le.AppendUint64(want, 0x1122334455)  // round
	want = le.AppendUint64(want, 77)            // seq
	want = le.AppendUint32(want, 5+2+1+8)       // body: n, T, "ab", 1 pad, 2 floats
	want = le.AppendUint32(want, 2)             // n
	want = append(want, 2, 'a', 'b', 0)         // T, tag, pad to 8
	want = append(want, 0x00, 0x00, 0xc0, 0x3f) // 1.5
	want = append(want, 0x00, 0x00, 0x00, 0x80) // -0
	sig := bytes.Repeat([]byte{0xee}, 64)
	want = append(want, sig...)

	m := &Message{
		Header:  Header{Kind: KindVector, From: 0x01020304, To: 9, Round: 0x1122334455, Seq: 77},
		Payload: Payload{Tag: "ab", Data: []float32{1.5, float32(math.Copysign(0, -1))}},
	}
	copy(m.Sig[:], sig)
	if got := encode(t, m); !bytes.Equal(got, want) {
		t.Fatalf("vector layout\n got % x\nwant % x", got, want)
	}

	want = want[:0]
	want = append(want, 1, 2, 0, 0)
	want = le.AppendUint32(want, 3)
	want = le.AppendUint32(want, 4)
	want = le.AppendUint64(want, 6)
	want = le.AppendUint64(want, 1)
	want = le.AppendUint32(want, 92+8)
	want = le.AppendUint32(want, 5) // source
	want = le.AppendUint32(want, 2) // k
	want = le.AppendUint64(want, 6) // claim round
	want = le.AppendUint64(want, 8) // version
	want = append(want, 1, 0, 0, 0) // hop, reserved
	want = le.AppendUint32(want, 4) // neighbors
	want = le.AppendUint32(want, 7) //
	want = append(want, bytes.Repeat([]byte{0xcc}, 64)...)
	want = append(want, sig...)
	m = &Message{
		Header: Header{Kind: KindClaim, From: 3, To: 4, Round: 6, Seq: 1},
		Claim:  Claim{Source: 5, Round: 6, Version: 8, Neighbors: []uint32{4, 7}, Hop: 1},
	}
	copy(m.Claim.Sig[:], bytes.Repeat([]byte{0xcc}, 64))
	copy(m.Sig[:], sig)
	if got := encode(t, m); !bytes.Equal(got, want) {
		t.Fatalf("claim layout\n got % x\nwant % x", got, want)
	}
}

func TestAppendEncodeKeepsPrefix(t *testing.T) {
	m := vectorMsg(t, 1)
	prefix := []byte("abc")
	b, err := AppendEncode(slices.Clip(prefix), m)
	if err != nil || string(b[:3]) != "abc" || !bytes.Equal(b[3:], encode(t, m)) {
		t.Fatalf("AppendEncode lost the prefix or the message: %v", err)
	}
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(10, func() { buf, _ = AppendEncode(buf[:0], m) }); n != 0 {
		t.Fatalf("encoding into a large enough buffer allocates %v times", n)
	}
}

func TestAppendEncodeErrors(t *testing.T) {
	for _, tc := range []struct {
		m    *Message
		want Reason
	}{
		{nil, Malformed},
		{&Message{}, UnknownKind},
		{&Message{Header: Header{Kind: 8}}, UnknownKind},
		{&Message{Header: Header{Kind: KindShare}, Blob: Blob{Tag: strings.Repeat("x", 256)}}, Oversize},
		{&Message{Header: Header{Kind: KindMasked}, Masked: Masked{Tag: strings.Repeat("x", 256)}}, Oversize},
		{&Message{Header: Header{Kind: KindVector}, Payload: Payload{Tag: strings.Repeat("x", 256)}}, Oversize},
	} {
		if _, err := AppendEncode(nil, tc.m); ReasonOf(err) != tc.want {
			t.Errorf("%+v: got %v, want %v", tc.m, err, tc.want)
		}
		if _, err := EncodedSize(tc.m); ReasonOf(err) != tc.want {
			t.Errorf("EncodedSize %+v: got %v, want %v", tc.m, err, tc.want)
		}
	}
}

func TestDecodeReusesBuffers(t *testing.T) {
	v1, v2 := vectorMsg(t, 1), vectorMsg(t, 2)
	v2.Payload.Data[0] = 42
	b1, b2 := encode(t, v1), encode(t, v2)
	c := encode(t, claimMsg(t, 1, 1))
	var m Message
	if err := Decode(b1, &m); err != nil {
		t.Fatal(err)
	}
	data := &m.Payload.Data[0]
	if n := testing.AllocsPerRun(20, func() {
		if err := Decode(b2, &m); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("decoding into a warm message allocates %v times", n)
	}
	if &m.Payload.Data[0] != data || m.Payload.Data[0] != 42 {
		t.Fatal("decode did not reuse the payload slice")
	}
	// Switching kinds empties the other kind's fields and keeps capacity.
	if err := Decode(c, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Payload.Data) != 0 || len(m.Claim.Neighbors) != 3 || m.Kind != KindClaim {
		t.Fatalf("after a claim: %+v", m)
	}
	if err := Decode(b1, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Claim.Neighbors) != 0 || &m.Payload.Data[0] != data || !sameBits(m.Payload.Data, v1.Payload.Data) {
		t.Fatalf("after a vector again: %+v", m)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := encode(t, vectorMsg(t, 1))
	claim := encode(t, claimMsg(t, 1, 1))
	edit := func(b []byte, f func([]byte) []byte) []byte { return f(slices.Clone(b)) }
	le := binary.LittleEndian
	cases := []struct {
		name string
		b    []byte
		lim  Limits
		want Reason
	}{
		{"empty", nil, Limits{}, Malformed},
		{"header only", good[:HeaderSize], Limits{}, Malformed},
		{"trailing byte", append(slices.Clone(good), 0), Limits{}, Malformed},
		{"version 0", edit(good, func(b []byte) []byte { b[0] = 0; return b }), Limits{}, BadVersion},
		{"version 2", edit(good, func(b []byte) []byte { b[0] = 2; return b }), Limits{}, BadVersion},
		{"kind 0", edit(good, func(b []byte) []byte { b[1] = 0; return b }), Limits{}, UnknownKind},
		{"kind 8", edit(good, func(b []byte) []byte { b[1] = 8; return b }), Limits{}, UnknownKind},
		{"flags", edit(good, func(b []byte) []byte { b[3] = 1; return b }), Limits{}, Malformed},
		{"body length", edit(good, func(b []byte) []byte { le.PutUint32(b[28:], le.Uint32(b[28:])+4); return b }), Limits{}, Malformed},
		{"float count", edit(good, func(b []byte) []byte { le.PutUint32(b[32:], 5); return b }), Limits{}, Malformed},
		{"padding", edit(good, func(b []byte) []byte { b[HeaderSize+vectorFixed+5] = 1; return b }), Limits{}, Malformed},
		{"kind vector on claim body", edit(claim, func(b []byte) []byte { b[1] = byte(KindVector); return b }), Limits{}, Malformed},
		{"claim reserved", edit(claim, func(b []byte) []byte { b[HeaderSize+26] = 1; return b }), Limits{}, Malformed},
		{"claim count", edit(claim, func(b []byte) []byte { le.PutUint32(b[HeaderSize+4:], 2); return b }), Limits{}, Malformed},
		// Oversize is judged from the declared size, before the bytes are
		// even compared with it: a 100-byte message declaring 2^31 floats.
		{"declares 2^31 floats", edit(good, func(b []byte) []byte { le.PutUint32(b[32:], 1<<31); return b }), Limits{}, Oversize},
		{"floats over limit", good, Limits{MaxFloats: testLen - 1}, Oversize},
		{"tag over limit", good, Limits{MaxTagBytes: 4}, Oversize},
		{"declares 2^30 neighbors", edit(claim, func(b []byte) []byte { le.PutUint32(b[HeaderSize+4:], 1<<30); return b }), Limits{}, Oversize},
		{"neighbors over limit", claim, Limits{MaxNeighbors: 2}, Oversize},
		{"message over limit", good, Limits{MaxMessageBytes: len(good) - 1}, Oversize},
	}
	for _, tc := range cases {
		var m Message
		err := DecodeLimited(tc.b, &m, tc.lim)
		if ReasonOf(err) != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
	// Every truncation of a valid message is an error, never a panic.
	for _, b := range [][]byte{good, claim} {
		for n := range len(b) {
			var m Message
			if err := Decode(b[:n], &m); err == nil {
				t.Fatalf("a %d-byte prefix of a %d-byte message decoded", n, len(b))
			}
		}
	}
	if err := Decode(good, nil); ReasonOf(err) != Malformed {
		t.Errorf("nil message: %v", err)
	}
	if err := DecodeLimited(good, &Message{}, Limits{MaxFloats: -1}); err == nil {
		t.Error("negative limit accepted")
	}
}

func TestLimits(t *testing.T) {
	d := DefaultLimits()
	if d.MaxFloats != 1<<24 || d.MaxNeighbors != 4096 || d.MaxTagBytes != 32 ||
		d.MaxMessageBytes != HeaderSize+vectorBodySize(32, 1<<24)+SignatureSize {
		t.Fatalf("defaults %+v", d)
	}
	if (Limits{MaxFloats: 100, MaxNeighbors: 1}).withDefaults().MaxMessageBytes != HeaderSize+40+400+SignatureSize {
		t.Fatal("MaxMessageBytes does not follow MaxFloats")
	}
	for _, l := range []Limits{{MaxFloats: -1}, {MaxTagBytes: 256}, {MaxFloats: maxEncodableFloats + 1}, {MaxNeighbors: maxEncodableNeighbors + 1}, {MaxMessageBytes: -5}} {
		if l.Validate() == nil {
			t.Errorf("%+v validated", l)
		}
	}
}
