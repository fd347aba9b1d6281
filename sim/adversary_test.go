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
