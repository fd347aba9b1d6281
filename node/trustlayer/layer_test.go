package trustlayer

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

// withTrust is a node option: a trust layer with cfg, first among the
// node's layers, kept in *l when l is not nil.
func withTrust(t testing.TB, cfg trust.Config, l **Layer) func(*node.Config) {
	return func(c *node.Config) {
		tl, err := New(c.Identity, c.Directory, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if l != nil {
			*l = tl
		}
		c.Layers = append([]node.Layer{tl}, c.Layers...)
	}
}

// newTrustNode is node id with the trust layer (default parameters) and
// no strategy of its own.
func newTrustNode(t *testing.T, id int, ids []*wire.Identity, dir *wire.Directory) (*node.Node, *Layer) {
	t.Helper()
	var l *Layer
	return nodetest.NewNode(t, id, ids, dir, strategy.Local{}, withTrust(t, trust.DefaultConfig(), &l)), l
}

// TestClaimsFlowThroughTheNode: a node with a trust layer sends its signed
// claim first; a peer's claim delivered to it reaches the layer, and the
// sender counts as heard.
func TestClaimsFlowThroughTheNode(t *testing.T) {
	ids, dir := wire.SimIdentities(3, 3)
	a, la := newTrustNode(t, 0, ids, dir)
	b, _ := newTrustNode(t, 1, ids, dir)
	hood := node.Neighborhood{In: []int{0, 1, 2}}
	nodetest.Begin(t, 0, hood, a, b)
	out := nodetest.Outbox(t, b)
	if len(out) != 1 || out[0].Kind != wire.KindClaim || out[0].Claim.Source != 1 || len(out[0].Claim.Neighbors) != 2 {
		t.Fatalf("outbox %+v, want b's claim of {0, 2}", out)
	}
	if err := a.Step(out[0]); err != nil {
		t.Fatal(err)
	}
	nodetest.Outbox(t, a)
	rd := nodetest.End(t, a, node.EndOptions{})
	tr := nodetest.Trust(rd)
	if tr == nil || tr.ClaimsAccepted != 1 {
		t.Fatalf("trust report %+v: want one claim accepted", tr)
	}
	ts := la.ts
	if ev := ts.Peer(1).Evidence; ev.D != 1 {
		t.Errorf("b's claim lists a and b delivered: evidence %+v, want d = 1", ev)
	}
	// The report is the layer's state: trust per peer, the screen, the view.
	if len(tr.Trust) != 3 || tr.Trust[0] != 0 || tr.Trust[1] != ts.Trust(1) || tr.Trust[2] != ts.Trust(2) {
		t.Errorf("reported trust %v, state %v %v", tr.Trust, ts.Trust(1), ts.Trust(2))
	}
	var screened []int
	for _, j := range ts.Screened() {
		screened = append(screened, int(j))
	}
	if !slices.Equal(tr.Screened, screened) || len(tr.Edges) != len(ts.Edges()) {
		t.Errorf("reported screen %v edges %v, state %v %v", tr.Screened, tr.Edges, screened, ts.Edges())
	}
}

// TestMalformedClaimsNeverPanic delivers random claim messages, properly
// signed by the sending peer (so they pass the message signature and reach
// the claim checks): none may panic, and the node keeps working.
func TestMalformedClaimsNeverPanic(t *testing.T) {
	ids, dir := wire.SimIdentities(5, 4)
	n, l := newTrustNode(t, 0, ids, dir)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 3 {
		nodetest.Begin(t, round, node.Neighborhood{In: []int{1, 2, 3}}, n)
		nodetest.Outbox(t, n)
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
			_ = n.Step(m) // must not panic
		}
		if err := n.Step(nil); err == nil {
			t.Error("nil message accepted")
		}
		nodetest.End(t, n, node.EndOptions{})
	}
	if st := l.ts.Stats(); st.Rejected[trust.Forged] == 0 || st.Rejected[trust.Malformed] == 0 {
		t.Errorf("stats %+v: want forged and malformed claims refused", st)
	}
}

// TestEventsFlowThroughTheNode: in the events claim form a round has the
// three phases of the co-signing round trip. Node 2 joins 0 and 1 at round
// 1: each endpoint proposes its addition to the other, which countersigns
// it, and the attested events reach the third node, whose view then holds
// the edge 1–2 with both endpoints as witnesses, no evidence against
// anyone.
func TestEventsFlowThroughTheNode(t *testing.T) {
	ids, dir := wire.SimIdentities(3, 3)
	tc := trust.DefaultConfig()
	tc.Claims = trust.ClaimsEvents
	nodes := make([]*node.Node, 3)
	var l0 *Layer
	for i := range nodes {
		l := &l0
		if i > 0 {
			l = nil
		}
		nodes[i] = nodetest.NewNode(t, i, ids, dir, strategy.Local{}, withTrust(t, tc, l))
	}
	hoods := [][]node.Neighborhood{
		{{In: []int{0, 1}}, {In: []int{0, 1}}, {In: []int{2}}},
		{{In: []int{0, 1, 2}}, {In: []int{0, 1, 2}}, {In: []int{0, 1, 2}}},
	}
	var rds []node.Ready
	for r, hs := range hoods {
		for i, n := range nodes {
			nodetest.Begin(t, r, hs[i], n)
		}
		for phase := 0; ; phase++ {
			more := false
			var sent [][]*wire.Message
			for _, n := range nodes {
				out, m, err := n.Outbox()
				if err != nil {
					t.Fatal(err)
				}
				more = m
				sent = append(sent, out)
			}
			for i, out := range sent {
				for _, m := range out {
					for j, n := range nodes {
						if j == i || !slices.Contains(hs[j].In, i) || (m.To != wire.Broadcast && m.To != uint32(j)) {
							continue
						}
						if err := n.Step(m); err != nil {
							t.Fatalf("round %d phase %d: %d→%d %s: %v", r, phase, i, j, m.Kind, err)
						}
					}
				}
			}
			if !more {
				if phase != 2 {
					t.Fatalf("round %d: %d phases, want 3", r, phase+1)
				}
				break
			}
		}
		rds = rds[:0]
		for _, n := range nodes {
			rds = append(rds, nodetest.End(t, n, node.EndOptions{}))
		}
	}
	ts := l0.ts
	st, ok := ts.EdgeStatus(1, 2)
	if !ok || !st.Accepted || st.Pools.Supporters != 2 || st.Pools.Opposers != 0 {
		t.Fatalf("node 0's evaluation of 1–2: %+v (%v)", st, ok)
	}
	if got := ts.Stats().Events; got != 3 {
		t.Errorf("node 0 took %d events, want 3 (1's and 2's additions of 1–2, 2's of 0–2)", got)
	}
	for i, rd := range rds {
		if nodetest.Trust(rd) == nil || len(nodetest.Trust(rd).ClaimsRejected) != 0 {
			t.Errorf("node %d: trust report %+v, want no evidence refusals", i, nodetest.Trust(rd))
		}
	}
}
