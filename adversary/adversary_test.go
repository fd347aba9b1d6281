package adversary

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
		adv, err := New(Config{Nodes: 4, Byzantine: []int{0}, Attack: atk, Seed: 5, SameForAll: same}, ids, nil)
		if err != nil {
			t.Fatal(err)
		}
		outbox := make([][]*wire.Message, 4)
		for j := range outbox {
			outbox[j] = []*wire.Message{{Header: wire.Header{Kind: wire.KindVector, From: uint32(j), To: wire.Broadcast},
				Payload: wire.Payload{Tag: "model", Data: []float32{1, 2, 3}}}}
		}
		if err := adv.Rewrite(0, g, outbox); err != nil {
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

// TestAloneRewritesAsTheSimulator: for an attack a process can run, the
// adversary of one Byzantine node alone, handed only that node's outbox,
// sends the same bytes (crafted vectors, lied claims, a privacy layer's
// message, numbers, signatures) as the simulator's adversary handed every
// outbox, over two phases of two rounds.
func TestAloneRewritesAsTheSimulator(t *testing.T) {
	const n = 5
	g, err := topology.Ring(n)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := wire.SimIdentities(9, n)
	atk, err := attack.New("gaussian", attack.Params{Sigma: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Nodes: n, Byzantine: []int{1, 3}, Attack: atk, Claims: ClaimAttack{Liar: LiarInflation, Replay: true}, Seed: 4}
	all, err := New(cfg, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	alone := map[int]*Adversary{}
	for _, b := range cfg.Byzantine {
		if alone[b], err = Alone(cfg, b, ids[b]); err != nil {
			t.Fatal(err)
		}
	}
	phase := func(round, p int) [][]*wire.Message {
		outbox := make([][]*wire.Message, n)
		for j := range outbox {
			if p == 0 {
				outbox[j] = []*wire.Message{{Header: wire.Header{Kind: wire.KindKey, From: uint32(j), To: wire.Broadcast, Round: uint64(round)},
					Blob: wire.Blob{Data: make([]byte, wire.KeySize)}}}
				continue
			}
			c := wire.Claim{Source: uint32(j), Round: uint64(round), Version: 1, Neighbors: []uint32{uint32((j + 1) % n)}}
			if err := wire.SignClaim(&c, ids[j]); err != nil {
				t.Fatal(err)
			}
			outbox[j] = []*wire.Message{
				{Header: wire.Header{Kind: wire.KindClaim, From: uint32(j), To: wire.Broadcast, Round: uint64(round)}, Claim: c},
				{Header: wire.Header{Kind: wire.KindVector, From: uint32(j), To: wire.Broadcast, Round: uint64(round)},
					Payload: wire.Payload{Tag: "model", Data: []float32{float32(j), 1, -2}}},
			}
		}
		return outbox
	}
	encode := func(msgs []*wire.Message) [][]byte {
		var out [][]byte
		for _, m := range msgs {
			b, err := wire.AppendEncode(nil, m)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
		return out
	}
	for round := range 2 {
		for p := range 2 {
			outbox := phase(round, p)
			if err := all.Rewrite(round, g, outbox); err != nil {
				t.Fatal(err)
			}
			for _, b := range cfg.Byzantine {
				got, err := alone[b].RewriteOne(round, g, b, phase(round, p)[b])
				if err != nil {
					t.Fatal(err)
				}
				want := encode(outbox[b])
				if len(want) == 0 || !slices.EqualFunc(encode(got), want, slices.Equal) {
					t.Fatalf("round %d phase %d node %d: alone sent %d messages, the simulator's adversary %d, or different bytes", round, p, b, len(got), len(want))
				}
			}
		}
	}
	if _, err := Alone(Config{Nodes: n, Byzantine: []int{1}, Attack: mustAttack(t, "alie")}, 1, ids[1]); err == nil {
		t.Error("Alone accepted alie, which reads every honest payload")
	}
}

func mustAttack(t *testing.T, name string) attack.Attack {
	t.Helper()
	a, err := attack.New(name, attack.Params{Z: 1})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
