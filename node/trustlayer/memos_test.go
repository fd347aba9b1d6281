package trustlayer

import (
	"reflect"
	"testing"

	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

// Shared memos change no result: a network of trust-layer nodes sharing a
// simulator's memos ends its rounds with the parameters and Ready of one
// without them; a node refuses memos once it ran a round.
func TestMemosChangeNoResult(t *testing.T) {
	tc := trust.DefaultConfig()
	mk := nodetest.NewNet(nodetest.Circulant(4, 1), func() strategy.Strategy { return &strategy.FedAvg{} }, func(_ int, _ *wire.Directory, c *node.Config) {
		withTrust(t, tc, nil)(c)
	})
	plain, shared := mk(t), mk(t)
	m := node.Memos{Verify: wire.NewVerifyCache(0), Global: node.NewEvalMemo(4)}
	for _, n := range shared.Nodes {
		if err := n.ShareMemos(m); err != nil {
			t.Fatal(err)
		}
	}
	for r := range 3 {
		a, b := plain.Round(r), shared.Round(r)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("round %d: Ready with memos %+v, without %+v", r, b, a)
		}
	}
	for i := range plain.Nodes {
		if !reflect.DeepEqual(plain.Nodes[i].Model().Params(), shared.Nodes[i].Model().Params()) {
			t.Fatalf("node %d: the memos changed its model", i)
		}
	}
	if err := shared.Nodes[0].ShareMemos(node.Memos{}); err == nil {
		t.Error("memos shared after a round")
	}
}
