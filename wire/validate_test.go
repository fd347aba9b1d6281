package wire

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestValidatorRules crafts, for every rule, a message that breaks it (and
// only it), checks the Reason, and checks that exactly one rejection was
// counted, against the right sender and reason.
func TestValidatorRules(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	// resign re-signs after a change, so that only the intended rule breaks.
	resign := func(m *Message) *Message { mustSign(t, m, m.From); return m }
	vec := func(f func(m *Message)) func() *Message {
		return func() *Message { m := vectorMsg(t, 1); f(m); return m }
	}
	claim := func(source, from uint32, f func(m *Message)) func() *Message {
		return func() *Message { m := claimMsg(t, source, from); f(m); return m }
	}
	resignClaim := func(m *Message) {
		if err := SignClaim(&m.Claim, testIDs[m.Claim.Source]); err != nil {
			t.Fatal(err)
		}
		resign(m)
	}
	cases := []struct {
		name string
		msg  func() *Message
		lim  Limits
		want Reason
		from uint32 // counted against
	}{
		{"valid vector", vec(func(*Message) {}), Limits{}, None, 1},
		{"valid broadcast", vec(func(m *Message) { m.To = Broadcast; resign(m) }), Limits{}, None, 1},
		{"valid claim from its source", claim(1, 1, func(*Message) {}), Limits{}, None, 1},
		{"valid forwarded claim", claim(1, 2, func(*Message) {}), Limits{}, None, 2},
		{"forwarded again: only hop changed, claim signature intact", claim(1, 2, func(m *Message) { m.Claim.Hop = 2; resign(m) }), Limits{}, None, 2},

		{"nil-kind", vec(func(m *Message) { m.Kind = 0 }), Limits{}, UnknownKind, 1},
		{"reserved kind", vec(func(m *Message) { m.Kind = 77 }), Limits{}, UnknownKind, 1},
		{"oversize payload", vec(func(*Message) {}), Limits{MaxFloats: testLen - 1}, Oversize, 1},
		{"oversize tag", vec(func(m *Message) { m.Payload.Tag = strings.Repeat("x", 33); resign(m) }), Limits{}, Oversize, 1},
		{"oversize claim", claim(1, 1, func(*Message) {}), Limits{MaxNeighbors: 2}, Oversize, 1},
		{"oversize message", vec(func(*Message) {}), Limits{MaxMessageBytes: 100}, Oversize, 1},
		{"wrong recipient", vec(func(m *Message) { m.To = 2; resign(m) }), Limits{}, WrongRecipient, 1},
		{"unknown sender", vec(func(m *Message) { m.From = 99; resign(m) }), Limits{}, UnknownSender, 99},
		{"stale round", vec(func(m *Message) { m.Round = testRound - 1; resign(m) }), Limits{}, StaleRound, 1},
		{"round 0", vec(func(m *Message) { m.Round = 0; resign(m) }), Limits{}, StaleRound, 1},
		{"future round", vec(func(m *Message) { m.Round = testRound + 1; resign(m) }), Limits{}, FutureRound, 1},
		{"payload bit flipped", vec(func(m *Message) { m.Payload.Data[3] = math.Float32frombits(math.Float32bits(m.Payload.Data[3]) ^ 1) }), Limits{}, BadSignature, 1},
		{"tag changed", vec(func(m *Message) { m.Payload.Tag = "grad" }), Limits{}, BadSignature, 1},
		{"header bit flipped (seq)", vec(func(m *Message) { m.Seq ^= 1 << 40 }), Limits{}, BadSignature, 1},
		{"signature bit flipped", vec(func(m *Message) { m.Sig[17] ^= 0x20 }), Limits{}, BadSignature, 1},
		{"signed by another node", vec(func(m *Message) { m.From = 2; resign(m); m.From = 1 }), Limits{}, BadSignature, 1},
		{"forwarder changed hop without re-signing", claim(1, 2, func(m *Message) { m.Claim.Hop = 2 }), Limits{}, BadSignature, 2},
		{"wrong length", vec(func(m *Message) { m.Payload.Data = append(m.Payload.Data, 1); resign(m) }), Limits{}, WrongLength, 1},
		{"empty payload", vec(func(m *Message) { m.Payload.Data = nil; resign(m) }), Limits{}, WrongLength, 1},
		{"NaN first", vec(func(m *Message) { m.Payload.Data[0] = nan; resign(m) }), Limits{}, NonFinite, 1},
		{"NaN last", vec(func(m *Message) { m.Payload.Data[testLen-1] = nan; resign(m) }), Limits{}, NonFinite, 1},
		{"+Inf", vec(func(m *Message) { m.Payload.Data[2] = inf; resign(m) }), Limits{}, NonFinite, 1},
		{"-Inf", vec(func(m *Message) { m.Payload.Data[4] = -inf; resign(m) }), Limits{}, NonFinite, 1},
		{"claim neighbor list modified", claim(1, 1, func(m *Message) { m.Claim.Neighbors[2] = 4; resign(m) }), Limits{}, BadClaimSignature, 1},
		{"forwarded claim modified", claim(1, 2, func(m *Message) { m.Claim.Neighbors = m.Claim.Neighbors[:2]; resign(m) }), Limits{}, BadClaimSignature, 2},
		{"claim version changed", claim(1, 2, func(m *Message) { m.Claim.Version++; resign(m) }), Limits{}, BadClaimSignature, 2},
		{"claim signed by the forwarder", claim(1, 2, func(m *Message) {
			m.Claim.Source = 2
			if err := SignClaim(&m.Claim, testIDs[2]); err != nil {
				t.Fatal(err)
			}
			m.Claim.Source = 1
			resign(m)
		}), Limits{}, BadClaimSignature, 2},
		{"claim of unknown source", claim(1, 2, func(m *Message) { m.Claim.Source = 50; resign(m) }), Limits{}, UnknownSource, 2},
		{"forwarded with hop 0", claim(1, 2, func(m *Message) { m.Claim.Hop = 0; resign(m) }), Limits{}, BadHop, 2},
		{"source sends hop 1", claim(1, 1, func(m *Message) { m.Claim.Hop = 1; resign(m) }), Limits{}, BadHop, 1},
		{"unsorted neighbors", claim(1, 1, func(m *Message) { m.Claim.Neighbors = []uint32{0, 3, 2}; resignClaim(m) }), Limits{}, UnsortedNeighbors, 1},
		{"duplicate neighbor", claim(1, 1, func(m *Message) { m.Claim.Neighbors = []uint32{0, 2, 2, 3}; resignClaim(m) }), Limits{}, DuplicateNeighbor, 1},
		{"self as neighbor", claim(1, 1, func(m *Message) { m.Claim.Neighbors = []uint32{0, 1, 2}; resignClaim(m) }), Limits{}, SelfNeighbor, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := newTestValidator(t, tc.lim)
			m := tc.msg()
			// Through the struct path (the simulator's) and the bytes path
			// (a transport's) when the message is encodable.
			paths := []func(*Validator) error{func(v *Validator) error { return v.Check(m) }}
			if b, err := AppendEncode(nil, m); err == nil {
				paths = append(paths, func(v *Validator) error { return v.Receive(b, new(Message)) })
			}
			for i, check := range paths {
				if i > 0 {
					v = newTestValidator(t, tc.lim)
				}
				err := check(v)
				if got := ReasonOf(err); got != tc.want || (err == nil) != (tc.want == None) {
					t.Fatalf("path %d: got %v, want %v", i, err, tc.want)
				}
				c := v.Counts(tc.from)
				if tc.want == None {
					if c.Accepted != 1 || c.Total() != 0 {
						t.Fatalf("path %d: valid message counted as %+v", i, c)
					}
				} else if c.Rejected[tc.want] != 1 || c.Total() != 1 || c.Accepted != 0 {
					t.Fatalf("path %d: counts against node %d: %+v", i, tc.from, c)
				}
				if s := v.Senders(); !slices.Equal(s, []uint32{tc.from}) || v.Unattributed().Total() != 0 {
					t.Fatalf("path %d: records for %v, unattributed %+v", i, s, v.Unattributed())
				}
			}
		})
	}
}

// TestForgeryIsNotEvidence: a third party sending a non-finite payload in an
// honest node's name is refused for its signature, which is not evidence
// against that node, never for its content, which would be.
func TestForgeryIsNotEvidence(t *testing.T) {
	v := newTestValidator(t, Limits{})
	m := vectorMsg(t, 1)
	m.Payload.Data[0] = float32(math.NaN())
	m.Payload.Data = m.Payload.Data[:2]
	err := v.Check(m)
	if ReasonOf(err) != BadSignature || BadSignature.Signed() {
		t.Fatalf("got %v", err)
	}
	if c := v.Counts(1); c.SignedTotal() != 0 {
		t.Fatalf("forgery counted as signed evidence: %+v", c)
	}
}

func TestReplay(t *testing.T) {
	v := newTestValidator(t, Limits{})
	m := vectorMsg(t, 1)
	if err := v.Check(m); err != nil {
		t.Fatal(err)
	}
	if err := v.Check(m); ReasonOf(err) != Replay {
		t.Fatalf("second delivery: %v", err)
	}
	m.Seq = 0 // lower, properly signed
	mustSign(t, m, 1)
	if err := v.Check(m); ReasonOf(err) != Replay {
		t.Fatalf("lower seq: %v", err)
	}
	m.Seq = 2
	mustSign(t, m, 1)
	if err := v.Check(m); err != nil {
		t.Fatalf("higher seq: %v", err)
	}
	// A new round restarts the sequence.
	v.SetRound(testRound + 1)
	m.Round, m.Seq = testRound+1, 0
	mustSign(t, m, 1)
	if err := v.Check(m); err != nil || v.Round() != testRound+1 {
		t.Fatalf("seq 0 in a new round: %v", err)
	}
	if c := v.Counts(1); c.Accepted != 3 || c.Rejected[Replay] != 2 || c.Total() != 2 {
		t.Fatalf("counts %+v", c)
	}
	// Replaying a refused message counts as Replay, not as a second piece of
	// signed evidence against the sender.
	bad := vectorMsg(t, 2)
	bad.Payload.Data[1] = float32(math.Inf(-1))
	bad.Round = testRound + 1
	mustSign(t, bad, 2)
	for range 3 {
		v.Check(bad)
	}
	if c := v.Counts(2); c.Rejected[NonFinite] != 1 || c.Rejected[Replay] != 2 || c.SignedTotal() != 1 {
		t.Fatalf("counts %+v", c)
	}
}

func TestReceiveAttribution(t *testing.T) {
	v := newTestValidator(t, Limits{MaxFloats: 100}) // keeps the oversize input small
	b := encode(t, vectorMsg(t, 3))
	var m Message
	if err := v.Receive(b, &m); err != nil || !sameBits(m.Payload.Data, payload()) {
		t.Fatalf("valid bytes: %v", err)
	}
	if err := v.Receive(b[:len(b)-1], &m); ReasonOf(err) != Malformed {
		t.Fatalf("truncated: %v", err)
	}
	if err := v.Receive(b[:HeaderSize], &m); ReasonOf(err) != Malformed {
		t.Fatalf("header only: %v", err)
	}
	big := make([]byte, v.lim.MaxMessageBytes+1)
	copy(big, b[:HeaderSize])
	if err := v.Receive(big, &m); ReasonOf(err) != Oversize {
		t.Fatalf("oversize: %v", err)
	}
	if err := v.Receive(b, nil); ReasonOf(err) != Malformed {
		t.Fatalf("nil message: %v", err)
	}
	if err := v.Check(nil); ReasonOf(err) != Malformed {
		t.Fatalf("nil message: %v", err)
	}
	// A header's worth of bytes names the sender; shorter input, or a nil
	// message, cannot be attributed.
	if c := v.Counts(3); c.Accepted != 1 || c.Rejected[Malformed] != 1 || c.Rejected[Oversize] != 1 || c.Total() != 2 {
		t.Fatalf("node 3: %+v", c)
	}
	if u := v.Unattributed(); u.Rejected[Malformed] != 3 || u.Total() != 3 {
		t.Fatalf("unattributed: %+v", u)
	}
}

// TestUnknownSendersBounded: spraying sender ids cannot grow the validator
// without bound; known peers keep their own records regardless.
func TestUnknownSendersBounded(t *testing.T) {
	v := newTestValidator(t, Limits{})
	m := vectorMsg(t, 1)
	for id := uint32(100); id < 100+maxUnknownTracked+50; id++ {
		m.From = id
		if err := v.Check(m); ReasonOf(err) != UnknownSender {
			t.Fatal(err)
		}
	}
	m.From = 1
	m.Sig[0] ^= 1
	v.Check(m)
	if n := len(v.Senders()); n != maxUnknownTracked+1 {
		t.Fatalf("%d senders tracked", n)
	}
	if u := v.Unattributed(); u.Rejected[UnknownSender] != 50 {
		t.Fatalf("unattributed %+v", u)
	}
	if c := v.Counts(1); c.Rejected[BadSignature] != 1 {
		t.Fatalf("known peer %+v", c)
	}
}

func TestNewValidatorErrors(t *testing.T) {
	for _, cfg := range []ValidatorConfig{
		{},
		{Directory: testDir, PayloadLen: -1},
		{Directory: testDir, Limits: Limits{MaxTagBytes: 300}},
	} {
		if _, err := NewValidator(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	// PayloadLen 0 accepts any length.
	v, err := NewValidator(ValidatorConfig{Self: 0, Directory: testDir, Round: testRound})
	if err != nil {
		t.Fatal(err)
	}
	m := vectorMsg(t, 1)
	m.Payload.Data = m.Payload.Data[:1]
	mustSign(t, m, 1)
	if err := v.Check(m); err != nil {
		t.Fatal(err)
	}
}

func TestReasons(t *testing.T) {
	seen := map[string]bool{}
	for r := range Reason(NumReasons) {
		s := r.String()
		if s == "" || seen[s] || strings.HasPrefix(s, "reason(") {
			t.Errorf("reason %d named %q", r, s)
		}
		seen[s] = true
	}
	if Reason(200).String() != "reason(200)" || Reason(200).Signed() || None.Signed() {
		t.Error("out-of-range reason")
	}
	for _, r := range []Reason{WrongLength, NonFinite, UnknownSource, BadHop, SelfNeighbor, DuplicateNeighbor, UnsortedNeighbors, BadClaimSignature} {
		if !r.Signed() {
			t.Errorf("%v not Signed", r)
		}
	}
	for _, r := range []Reason{Malformed, Oversize, WrongRecipient, UnknownSender, StaleRound, FutureRound, BadSignature, Replay} {
		if r.Signed() {
			t.Errorf("%v Signed", r)
		}
	}
	err := fmt.Errorf("receiving: %w", reject(NonFinite, "payload[3] = NaN"))
	if ReasonOf(err) != NonFinite || ReasonOf(nil) != None || ReasonOf(errors.New("x")) != None {
		t.Error("ReasonOf")
	}
	if got := err.Error(); got != "receiving: wire: non_finite: payload[3] = NaN" {
		t.Errorf("message %q", got)
	}
	if KindVector.String() != "vector" || KindClaim.String() != "claim" || Kind(9).String() != "kind(9)" {
		t.Error("Kind.String")
	}
}
