package wire

import (
	"math"
	"testing"
)

// The fixture: four simulated nodes 0..3 of experiment seed 42. Node 0
// receives; messages are for round 5.
const (
	testSeed  = 42
	testRound = 5
	testLen   = 6
)

var testIDs, testDir = SimIdentities(testSeed, 4)

// payload returns testLen finite floats, including the awkward ones.
func payload() []float32 {
	return []float32{1.5, float32(math.Copysign(0, -1)), math.Float32frombits(1), -math.MaxFloat32, 3, math.Float32frombits(0x007fffff)}
}

// vectorMsg is a valid, signed vector message from node from to node 0.
func vectorMsg(t testing.TB, from uint32) *Message {
	t.Helper()
	m := &Message{
		Header:  Header{Kind: KindVector, From: from, To: 0, Round: testRound, Seq: 1},
		Payload: Payload{Tag: "model", Data: payload()},
	}
	mustSign(t, m, from)
	return m
}

// claimMsg is a valid claim of source, sent (hop 0) or forwarded (hop 1) by
// from to node 0, both signatures in place.
func claimMsg(t testing.TB, source, from uint32) *Message {
	t.Helper()
	c := Claim{Source: source, Round: testRound, Version: 9, Neighbors: []uint32{0, 2, 3}}
	if source == 2 {
		c.Neighbors = []uint32{0, 1, 3}
	}
	if err := SignClaim(&c, testIDs[source]); err != nil {
		t.Fatal(err)
	}
	if from != source {
		c.Hop = 1
	}
	m := &Message{Header: Header{Kind: KindClaim, From: from, To: 0, Round: testRound, Seq: 1}, Claim: c}
	mustSign(t, m, from)
	return m
}

func mustSign(t testing.TB, m *Message, from uint32) {
	t.Helper()
	id := NewIdentity(testSeed, from) // testIDs[from] for nodes 0..3
	if int(from) < len(testIDs) {
		id = testIDs[from]
	}
	if err := Sign(m, id); err != nil {
		t.Fatal(err)
	}
}

func newTestValidator(t testing.TB, lim Limits) *Validator {
	t.Helper()
	v, err := NewValidator(ValidatorConfig{Self: 0, Directory: testDir, Round: testRound, PayloadLen: testLen, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func encode(t testing.TB, m *Message) []byte {
	t.Helper()
	b, err := AppendEncode(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}
