package trustlayer

import (
	"testing"

	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

// The trust layer's state: claims to forward, pools, Beta trust.
func TestSnapshotRestoreTrustNode(t *testing.T) {
	tc := trust.DefaultConfig()
	orig, _ := nodetest.RestartIsInvisible(t, nodetest.NewNet(nodetest.Circulant(5, 1, 2), func() strategy.Strategy { return strategy.Local{} }, func(_ int, _ *wire.Directory, c *node.Config) {
		withTrust(t, tc, nil)(c)
	}))
	if nodetest.Trust(orig[0]) == nil || len(nodetest.Trust(orig[0]).Screened) == 0 {
		t.Fatalf("trust of the round: %+v: the comparison saw no trust", nodetest.Trust(orig[0]))
	}
}

// The trust layer's state survives a restore into a fresh node: the
// restored node forwards the claims the original chose, and none when it
// resumes rounds later (they would be stale).
func TestTrustStateAndSkippedRounds(t *testing.T) {
	ids, dir := wire.SimIdentities(3, 3)
	a, la := newTrustNode(t, 0, ids, dir)
	b, _ := newTrustNode(t, 1, ids, dir)
	hood := node.Neighborhood{In: []int{0, 1, 2}}
	nodetest.Begin(t, 0, hood, a, b)
	for _, m := range nodetest.Outbox(t, b) {
		if err := a.Step(m); err != nil {
			t.Fatal(err)
		}
	}
	nodetest.Outbox(t, a)
	nodetest.End(t, a, node.EndOptions{})
	if len(la.fwd) == 0 {
		t.Fatal("a chose no claim to forward: the test needs one")
	}
	st, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	claims := func(n *node.Node, r int) int {
		t.Helper()
		nodetest.Begin(t, r, hood, n)
		k := 0
		for _, m := range nodetest.Outbox(t, n) {
			if m.Kind == wire.KindClaim {
				k++
			}
		}
		return k
	}
	for _, c := range []struct {
		round, want int
	}{{1, 2}, {5, 1}} { // own claim and b's forwarded; own claim only
		n, _ := newTrustNode(t, 0, ids, dir)
		if err := n.Restore(st); err != nil {
			t.Fatal(err)
		}
		if got := claims(n, c.round); got != c.want {
			t.Errorf("restored, round %d: %d claims sent, want %d", c.round, got, c.want)
		}
	}
}
