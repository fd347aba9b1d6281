package sim

import (
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// TestSameForAllSendsOneVector: with SameForAll a Byzantine node's crafted
// vector is the same for every recipient (LIGHTYEAR's malfunctions; like an
// honest broadcast, one payload may serve every recipient, since receivers
// never modify what they are delivered); without it, a noisy attack draws
// per recipient.
func TestSameForAllSendsOneVector(t *testing.T) {
	g, err := topology.Complete(4)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := wire.SimIdentities(3, 4)
	atk, err := attack.New("ana", attack.Params{Sigma: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, same := range []bool{false, true} {
		r := &runner{cfg: Config{Byzantine: []int{0}, Attack: atk, Identities: ids, Seed: 5, SameForAll: same},
			byz: []bool{true, false, false, false}}
		outbox := make([][]*wire.Message, 4)
		for j := range outbox {
			outbox[j] = []*wire.Message{{Header: wire.Header{Kind: wire.KindVector, From: uint32(j), To: wire.Broadcast},
				Payload: wire.Payload{Tag: "model", Data: []float32{1, 2, 3}}}}
		}
		if err := r.adversary(0, g, outbox); err != nil {
			t.Fatal(err)
		}
		sent := outbox[0]
		if len(sent) != 3 {
			t.Fatalf("same_for_all %v: %d messages, want one per neighbor", same, len(sent))
		}
		equal := slices.Equal(sent[0].Payload.Data, sent[1].Payload.Data) && slices.Equal(sent[1].Payload.Data, sent[2].Payload.Data)
		if equal != same {
			t.Errorf("same_for_all %v: payloads %v, %v, %v", same, sent[0].Payload.Data, sent[1].Payload.Data, sent[2].Payload.Data)
		}
	}
}

// TestEventsOfOmission: in the events form an omission liar (node 1, with
// node 3) withholds its events about honest nodes and its countersignature
// of an honest node's event, and passes its events about the coalition and
// the events it forwards; an inflation liar's events pass unchanged.
func TestEventsOfOmission(t *testing.T) {
	ids, _ := wire.SimIdentities(3, 4)
	byz := []bool{false, true, false, true}
	ev := func(source, peer uint32, ret bool, hop uint8) wire.Event {
		e := wire.Event{Source: source, Peer: peer, Round: 2, Version: 1, Op: wire.EventAdd}
		if err := wire.SignEvent(&e, ids[source]); err != nil {
			t.Fatal(err)
		}
		if ret {
			if err := wire.Countersign(&e, ids[peer]); err != nil {
				t.Fatal(err)
			}
			e.Return = true
		}
		e.Hop = hop
		return e
	}
	own := []wire.Event{ev(1, 0, false, 0), ev(1, 3, false, 0), ev(2, 0, false, 1)} // about honest 0, about liar 3, a forward
	msgs := []*wire.Message{
		wire.EventMessage(wire.Broadcast, own),
		wire.EventMessage(0, []wire.Event{ev(0, 1, true, 0)}),  // 1's countersignature for honest 0
		wire.EventMessage(0, []wire.Event{ev(1, 0, false, 0)}), // 1's proposal to honest 0
		{Header: wire.Header{Kind: wire.KindVector, To: wire.Broadcast}},
	}
	out, err := eventsOf(ClaimAttack{Liar: LiarOmission}, byz, 1, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 {
		t.Fatalf("%d messages, want the broadcast alone", len(out))
	}
	got, err := wire.DecodeEvents(nil, out[0].Blob.Data, 8)
	if err != nil || !slices.Equal(got, []wire.Event{own[1], own[2]}) {
		t.Fatalf("broadcast %+v (%v), want the coalition event and the forward", got, err)
	}
	if out, _ := eventsOf(ClaimAttack{Liar: LiarInflation}, byz, 1, msgs); len(out) != 3 {
		t.Errorf("inflation: %d event messages, want all 3", len(out))
	}
}
