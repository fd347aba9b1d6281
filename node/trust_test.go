package node

import (
	"math/rand/v2"
	"testing"

	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

func newTrustNode(t *testing.T, id int, ids []*wire.Identity, dir *wire.Directory) *Node {
	t.Helper()
	tc := trust.DefaultConfig()
	return newTestNode(t, id, ids, dir, strategy.Local{}, func(c *Config) { c.Trust = &tc })
}

// TestClaimsFlowThroughTheNode: a node with a trust layer sends its signed
// claim first; a peer's claim delivered to it reaches the layer, and the
// sender counts as heard.
func TestClaimsFlowThroughTheNode(t *testing.T) {
	ids, dir := wire.SimIdentities(3, 3)
	a, b := newTrustNode(t, 0, ids, dir), newTrustNode(t, 1, ids, dir)
	hood := Neighborhood{In: []int{0, 1, 2}}
	for _, n := range []*Node{a, b} {
		if _, err := n.Train(0, hood); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.Outbox()
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Kind != wire.KindClaim || out[0].Claim.Source != 1 || len(out[0].Claim.Neighbors) != 2 {
		t.Fatalf("outbox %+v, want b's claim of {0, 2}", out)
	}
	if err := a.Deliver(out[0]); err != nil {
		t.Fatal(err)
	}
	if st := a.Trust().Stats(); st.Accepted != 1 {
		t.Errorf("a accepted %d claims, want 1", st.Accepted)
	}
	if _, err := a.Combine(); err != nil {
		t.Fatal(err)
	}
	if ev := a.Trust().Peer(1).Evidence; ev.D != 1 {
		t.Errorf("b's claim lists a and b delivered: evidence %+v, want d = 1", ev)
	}
}

// TestMalformedClaimsNeverPanic delivers random claim messages, properly
// signed by the sending peer (so they pass the message signature and reach
// the claim checks): none may panic, and the node keeps working.
func TestMalformedClaimsNeverPanic(t *testing.T) {
	ids, dir := wire.SimIdentities(5, 4)
	n := newTrustNode(t, 0, ids, dir)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 3 {
		if _, err := n.Train(round, Neighborhood{In: []int{1, 2, 3}}); err != nil {
			t.Fatal(err)
		}
		for k := range 300 {
			from := 1 + rng.IntN(3)
			c := wire.Claim{Source: uint32(rng.IntN(6)), Round: uint64(rng.IntN(5)), Version: uint64(rng.IntN(4)),
				Hop: uint8(rng.IntN(4))}
			for range rng.IntN(6) {
				c.Neighbors = append(c.Neighbors, uint32(rng.IntN(7)))
			}
			if rng.IntN(2) == 0 && int(c.Source) < len(ids) {
				_ = wire.SignClaim(&c, ids[c.Source]) // sometimes a valid source signature
			}
			m := &wire.Message{Header: wire.Header{Kind: wire.KindClaim, From: uint32(from), To: wire.Broadcast,
				Round: uint64(round + rng.IntN(2)), Seq: uint64(k + 1)}, Claim: c}
			if rng.IntN(4) > 0 {
				_ = wire.Sign(m, ids[from])
			}
			_ = n.Deliver(m) // must not panic
		}
		if err := n.Deliver(nil); err == nil {
			t.Error("nil message accepted")
		}
		if _, err := n.Combine(); err != nil {
			t.Fatal(err)
		}
	}
	if st := n.Trust().Stats(); st.Rejected[trust.Forged] == 0 || st.Rejected[trust.Malformed] == 0 {
		t.Errorf("stats %+v: want forged and malformed claims refused", st)
	}
}
