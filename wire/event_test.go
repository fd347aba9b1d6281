package wire

import (
	"bytes"
	"slices"
	"testing"
)

// testEvent is node source's signed event about its edge to peer, version 3
// of round testRound, countersigned by peer when attested.
func testEvent(t testing.TB, source, peer uint32, attested bool) Event {
	t.Helper()
	e := Event{Source: source, Peer: peer, Round: testRound, Version: 3, Op: EventAdd}
	if err := SignEvent(&e, testIDs[source]); err != nil {
		t.Fatal(err)
	}
	if attested {
		if err := Countersign(&e, testIDs[peer]); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func eventMsg(t testing.TB, from, to uint32, evs ...Event) *Message {
	t.Helper()
	m := EventMessage(to, evs)
	m.From, m.Round, m.Seq = from, testRound, 1
	mustSign(t, m, from)
	return m
}

// Events round-trip bit for bit, re-encode canonically, and a batch of an
// own one-sided event, an attested one and a forward passes the validator.
func TestEventRoundTrip(t *testing.T) {
	fwd := testEvent(t, 2, 3, true)
	fwd.Hop = 1
	evs := []Event{testEvent(t, 1, 0, false), testEvent(t, 1, 2, true), fwd}
	m := eventMsg(t, 1, Broadcast, evs...)
	b := encode(t, m)
	var got Message
	if err := Decode(b, &got); err != nil {
		t.Fatal(err)
	}
	dec, err := DecodeEvents(nil, got.Blob.Data, 16)
	if err != nil || !slices.Equal(dec, evs) {
		t.Fatalf("decoded %+v (%v), want %+v", dec, err, evs)
	}
	if !bytes.Equal(AppendEvents(nil, dec), m.Blob.Data) {
		t.Fatal("re-encoding differs")
	}
	if err := newTestValidator(t, Limits{}).Receive(b, &got); err != nil {
		t.Fatalf("validator: %v", err)
	}
	// The countersignature round trip: peer 0... here node 2 returns its
	// countersignature on node 1's event to node 1 (the validator is node
	// 0's, so address it to a validator of node 1).
	ret := testEvent(t, 1, 2, true)
	ret.Return = true
	rm := eventMsg(t, 2, 1, ret)
	v1, err := NewValidator(ValidatorConfig{Self: 1, Directory: testDir, Round: testRound})
	if err != nil {
		t.Fatal(err)
	}
	if err := v1.Check(rm); err != nil {
		t.Fatalf("returned countersignature refused: %v", err)
	}
}

// Malformed, forged, misrouted and oversize events are refused with the
// reason named, and never reach the layer.
func TestEventValidation(t *testing.T) {
	other := testEvent(t, 1, 3, false)
	tests := []struct {
		name string
		m    func() *Message
		lim  Limits
		want Reason
	}{
		{"empty batch", func() *Message { return eventMsg(t, 1, 0) }, Limits{}, WrongLength},
		{"truncated event", func() *Message {
			m := eventMsg(t, 1, 0, testEvent(t, 1, 2, false))
			m.Blob.Data = m.Blob.Data[:EventSize-4]
			mustSign(t, m, 1)
			return m
		}, Limits{}, WrongLength},
		{"unknown op", func() *Message {
			e := testEvent(t, 1, 2, false)
			e.Op = 3
			return eventMsg(t, 1, 0, e)
		}, Limits{}, WrongLength},
		{"countersignature bytes without the flag", func() *Message {
			e := testEvent(t, 1, 2, true)
			m := eventMsg(t, 1, 0, e)
			m.Blob.Data[26] = 0
			mustSign(t, m, 1)
			return m
		}, Limits{}, WrongLength},
		{"oversize batch", func() *Message {
			e := testEvent(t, 1, 2, false)
			return eventMsg(t, 1, 0, e, e, e)
		}, Limits{MaxNeighbors: 2}, WrongLength},
		{"unknown source", func() *Message {
			e := testEvent(t, 1, 2, false)
			e.Source, e.Hop = 99, 1
			return eventMsg(t, 1, 0, e)
		}, Limits{}, UnknownSource},
		{"about itself", func() *Message {
			e := Event{Source: 1, Peer: 1, Round: testRound, Version: 1, Op: EventAdd}
			if err := SignEvent(&e, testIDs[1]); err != nil {
				t.Fatal(err)
			}
			return eventMsg(t, 1, 0, e)
		}, Limits{}, SelfNeighbor},
		{"hop 0 from a forwarder", func() *Message { return eventMsg(t, 2, 0, testEvent(t, 1, 3, false)) }, Limits{}, BadHop},
		{"wrong signer", func() *Message {
			e := testEvent(t, 1, 2, false)
			e.Sig = testEvent(t, 2, 1, false).Sig
			return eventMsg(t, 1, 0, e)
		}, Limits{}, BadClaimSignature},
		{"signature over another event", func() *Message {
			e := testEvent(t, 1, 2, false)
			e.Sig = other.Sig
			return eventMsg(t, 1, 0, e)
		}, Limits{}, BadClaimSignature},
		{"changed op", func() *Message {
			e := testEvent(t, 1, 2, false)
			e.Op = EventRemove
			return eventMsg(t, 1, 0, e)
		}, Limits{}, BadClaimSignature},
		{"countersigned by the source", func() *Message {
			e := testEvent(t, 1, 2, false)
			e.Attested, e.Counter = true, e.Sig
			return eventMsg(t, 1, 0, e)
		}, Limits{}, BadClaimSignature},
		{"countersignature over another event", func() *Message {
			e := testEvent(t, 1, 2, true)
			e.Version++
			if err := SignEvent(&e, testIDs[1]); err != nil {
				t.Fatal(err)
			}
			e.Attested, e.Counter = true, testEvent(t, 1, 2, true).Counter
			return eventMsg(t, 1, 0, e)
		}, Limits{}, BadClaimSignature},
		{"return sent by the source", func() *Message {
			e := testEvent(t, 1, 2, true)
			e.Return = true
			return eventMsg(t, 1, 0, e)
		}, Limits{}, BadHop},
		{"return not to the source", func() *Message {
			e := testEvent(t, 1, 2, true)
			e.Return = true
			return eventMsg(t, 2, 0, e)
		}, Limits{}, BadHop},
	}
	for _, tt := range tests {
		m := tt.m()
		err := newTestValidator(t, tt.lim).Check(m)
		if ReasonOf(err) != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
		// Every refusal comes after the sender's signature held: evidence
		// against it.
		if !tt.want.Signed() {
			t.Errorf("%s: %v is not evidence against the sender", tt.name, tt.want)
		}
	}
}

// FuzzDecodeEvents: no bytes panic DecodeEvents or the validator's event
// check, and what decodes re-encodes to the input.
func FuzzDecodeEvents(f *testing.F) {
	f.Add(AppendEvents(nil, []Event{testEvent(f, 1, 2, true), testEvent(f, 2, 3, false)}))
	f.Add([]byte{1, 2, 3})
	ids, dir := SimIdentities(testSeed, 4)
	f.Fuzz(func(t *testing.T, b []byte) {
		evs, err := DecodeEvents(nil, b, 64)
		if err == nil && !bytes.Equal(AppendEvents(nil, evs), b) {
			t.Fatal("re-encoding differs")
		}
		m := &Message{Header: Header{Kind: KindEvent, From: 1, To: Broadcast, Round: 0, Seq: 1}, Blob: Blob{Data: b}}
		if err := Sign(m, ids[1]); err != nil {
			t.Fatal(err)
		}
		v, _ := NewValidator(ValidatorConfig{Directory: dir})
		_ = v.Check(m)
	})
}
