package node

import (
	"testing"

	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// The trust layer's state survives SaveLayers / LoadLayers into a fresh
// node: the restored node forwards the claims the original chose, and
// none when it resumes rounds later (they would be stale).
func TestLayersStateAndSkippedRounds(t *testing.T) {
	ids, dir := wire.SimIdentities(3, 3)
	a, b := newTrustNode(t, 0, ids, dir), newTrustNode(t, 1, ids, dir)
	hood := Neighborhood{In: []int{0, 1, 2}}
	begin(t, 0, hood, a, b)
	for _, m := range outbox(t, b) {
		if err := a.Step(m); err != nil {
			t.Fatal(err)
		}
	}
	outbox(t, a)
	end(t, a, EndOptions{})
	if len(a.layers[0].(*TrustLayer).fwd) == 0 {
		t.Fatal("a chose no claim to forward: the test needs one")
	}
	st, err := a.SaveLayers()
	if err != nil {
		t.Fatal(err)
	}
	claims := func(n *Node, r int) int {
		t.Helper()
		begin(t, r, hood, n)
		k := 0
		for _, m := range outbox(t, n) {
			if m.Kind == wire.KindClaim {
				k++
			}
		}
		return k
	}
	for _, c := range []struct {
		round, want int
	}{{1, 2}, {5, 1}} { // own claim and b's forwarded; own claim only
		n := newTrustNode(t, 0, ids, dir)
		if err := n.LoadLayers(st); err != nil {
			t.Fatal(err)
		}
		if got := claims(n, c.round); got != c.want {
			t.Errorf("restored, round %d: %d claims sent, want %d", c.round, got, c.want)
		}
	}
	if err := newTrustNode(t, 0, ids, dir).LoadLayers(st[:len(st)-1]); err == nil {
		t.Error("a truncated layers state was loaded")
	}
	if err := newTestNode(t, 0, ids, dir, strategy.Local{}).LoadLayers(st); err == nil {
		t.Error("a trust layer's state was loaded into a node without one")
	}
}
