package adversary

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// viewSpy records the views it is handed and sends the own vector.
type viewSpy struct{ views []*attack.View }

func (s *viewSpy) Name() string { return "spy" }
func (s *viewSpy) Craft(dst []float32, v *attack.View, honest []float32, from, to int, _ *rand.Rand) error {
	s.views = append(s.views, v)
	copy(dst, honest)
	return nil
}

func vecMsg(from int, step int, data ...float32) *wire.Message {
	return &wire.Message{Header: wire.Header{Kind: wire.KindVector, From: uint32(from), To: wire.Broadcast, Round: uint64(step)},
		Payload: wire.Payload{Tag: "model", Data: data}}
}

// RewriteAt crafts against the honest vectors it is handed, in sender-id
// order, Byzantine entries left out, with the coalition's size as the
// attackers (alie's m); ALIE with z = 1 sends μ + σ of those vectors,
// worked by hand: {1, 2}, {3, 6}, {5, 10} have μ = (3, 6) and population
// σ = (√(8/3), √(32/3)). Every message carries the step, numbers 1, 2, …
// within it and b's valid signature.
func TestRewriteAtView(t *testing.T) {
	g, err := topology.Complete(5)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := wire.SimIdentities(3, 5)
	known := [][]*wire.Message{{vecMsg(0, 4, 1, 2)}, {vecMsg(1, 9, 3, 6)}, {vecMsg(2, 1, 5, 10)}, {vecMsg(3, 2, 100, 100)}, nil}
	spy := &viewSpy{}
	adv, err := New(Config{Nodes: 5, Byzantine: []int{3, 4}, Attack: spy, Seed: 1}, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adv.RewriteAt(7, g, 4, []*wire.Message{vecMsg(4, 7, 0, 0)}, known, Stale{}); err != nil {
		t.Fatal(err)
	}
	if len(spy.views) != 4 {
		t.Fatalf("%d crafts, want one per out-neighbour (4)", len(spy.views))
	}
	v := spy.views[0]
	if !slices.Equal(v.From, []int{0, 1, 2}) || len(v.Honest) != 3 || v.Honest[1][1] != 6 || v.Attackers != 2 || v.Senders != 5 || v.Round != 7 {
		t.Fatalf("view from %v, honest %v, attackers %d, round %d", v.From, v.Honest, v.Attackers, v.Round)
	}
	alie, err := attack.New("alie", attack.Params{Z: 1})
	if err != nil {
		t.Fatal(err)
	}
	adv, err = New(Config{Nodes: 5, Byzantine: []int{3, 4}, Attack: alie, Seed: 1}, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := adv.RewriteAt(7, g, 4, []*wire.Message{vecMsg(4, 7, 0, 0)}, known, Stale{})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{3 + math.Sqrt(8.0/3), 6 + math.Sqrt(32.0/3)}
	for k, m := range out {
		for c, w := range want {
			if math.Abs(float64(m.Payload.Data[c])-w) > 1e-5 {
				t.Fatalf("message %d coordinate %d = %v, want %v", k, c, m.Payload.Data[c], w)
			}
		}
		if m.Round != 7 || m.Seq != uint64(k+1) || m.From != 4 || m.To != uint32(k) || !wire.Verify(m, ids[4].Public()) {
			t.Fatalf("message %d: round %d seq %d from %d to %d, or a bad signature", k, m.Round, m.Seq, m.From, m.To)
		}
	}
	// An honest node is not the adversary's to rewrite.
	if _, err := adv.RewriteAt(7, g, 1, nil, known, Stale{}); err == nil {
		t.Fatal("RewriteAt of an honest node")
	}
}

// Stale from step 1: steps 0 and 1 go out as made, steps 2 and 3 carry
// step 1's vectors, under their own step and fresh numbers.
func TestRewriteAtStale(t *testing.T) {
	g, err := topology.Complete(3)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := wire.SimIdentities(3, 3)
	adv, err := New(Config{Nodes: 3, Byzantine: []int{2}, Seed: 1}, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	known := make([][]*wire.Message, 3)
	for s := range 4 {
		out, err := adv.RewriteAt(s, g, 2, []*wire.Message{vecMsg(2, s, float32(s), float32(10*s))}, known, Stale{On: true, Step: 1})
		if err != nil {
			t.Fatal(err)
		}
		want := []float32{float32(min(s, 1)), float32(10 * min(s, 1))}
		if len(out) != 1 || !slices.Equal(out[0].Payload.Data, want) || out[0].Round != uint64(s) || out[0].Seq != 1 || !wire.Verify(out[0], ids[2].Public()) {
			t.Fatalf("step %d: %+v, want data %v", s, out, want)
		}
	}
}
