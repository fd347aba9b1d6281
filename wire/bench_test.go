package wire

import (
	"math"
	"testing"
)

// mlpParams is the parameter count of the MLP 784-256-128-10 of the round
// benchmark: 784·256+256 + 256·128+128 + 128·10+10.
const mlpParams = 784*256 + 256 + 256*128 + 128 + 128*10 + 10

func benchModel(b *testing.B) *Message {
	if mlpParams != 235146 {
		b.Fatal("parameter count")
	}
	m := &Message{Header: Header{Kind: KindVector, From: 1, To: 0, Round: testRound, Seq: 1}, Payload: Payload{Tag: "model", Data: make([]float32, mlpParams)}}
	for i := range m.Payload.Data {
		m.Payload.Data[i] = float32(math.Sin(float64(i)))
	}
	mustSign(b, m, 1)
	return m
}

func BenchmarkEncodeMLP(b *testing.B) {
	m := benchModel(b)
	buf := encode(b, m)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendEncode(buf[:0], m)
	}
}

func BenchmarkDecodeMLP(b *testing.B) {
	buf := encode(b, benchModel(b))
	var m Message
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Decode(buf, &m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSignMLP(b *testing.B) {
	m := benchModel(b)
	b.SetBytes(4 * mlpParams)
	b.ReportAllocs()
	for b.Loop() {
		if err := Sign(m, testIDs[1]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyMLP(b *testing.B) {
	m := benchModel(b)
	pub := testIDs[1].Public()
	b.SetBytes(4 * mlpParams)
	b.ReportAllocs()
	for b.Loop() {
		if !Verify(m, pub) {
			b.Fatal("does not verify")
		}
	}
}

// BenchmarkDigestMLP is the SHA-256 of one model's encoding, the bulk of
// signing and verifying it: hashed in place (little-endian hosts) and
// through the scratch buffer (the portable path, as before in-place hashing).
func BenchmarkDigestMLP(b *testing.B) {
	m := benchModel(b)
	for _, c := range []struct {
		name    string
		inPlace bool
	}{{"in_place", true}, {"scratch", false}} {
		b.Run(c.name, func(b *testing.B) {
			d := newDigester()
			d.inPlace = c.inPlace
			b.SetBytes(4 * mlpParams)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.digest(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCheckMLP is the whole receive gate for one model: signature,
// length and finiteness.
func BenchmarkCheckMLP(b *testing.B) {
	m := benchModel(b)
	v, err := NewValidator(ValidatorConfig{Self: 0, Directory: testDir, Round: testRound, PayloadLen: mlpParams})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(4 * mlpParams)
	b.ReportAllocs()
	for b.Loop() {
		v.peer(1).hasSeq = false // the same message again is not a replay here
		if err := v.Check(m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFiniteScanMLP(b *testing.B) {
	xs := benchModel(b).Payload.Data
	b.SetBytes(4 * mlpParams)
	for b.Loop() {
		if firstNonFinite(xs) >= 0 {
			b.Fatal("non-finite")
		}
	}
}

func BenchmarkSignClaim(b *testing.B) {
	c := Claim{Source: 1, Round: 1, Version: 1, Neighbors: []uint32{0, 2, 3, 4, 5}}
	b.ReportAllocs()
	for b.Loop() {
		if err := SignClaim(&c, testIDs[1]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyClaim(b *testing.B) {
	c := Claim{Source: 1, Round: 1, Version: 1, Neighbors: []uint32{0, 2, 3, 4, 5}}
	if err := SignClaim(&c, testIDs[1]); err != nil {
		b.Fatal(err)
	}
	pub := testIDs[1].Public()
	b.ReportAllocs()
	for b.Loop() {
		if !VerifyClaim(&c, pub) {
			b.Fatal("does not verify")
		}
	}
}
