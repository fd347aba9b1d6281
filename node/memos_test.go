package node

import (
	"reflect"
	"testing"

	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

// Shared memos change no result: a network of trust-layer nodes sharing a
// simulator's memos ends its rounds with the parameters and Ready of one
// without them; a node refuses memos once it ran a round.
func TestMemosChangeNoResult(t *testing.T) {
	tc := trust.DefaultConfig()
	mk := net(circulant(4, 1), func() strategy.Strategy { return &strategy.FedAvg{} }, func(_ int, _ *wire.Directory, c *Config) {
		c.Trust = &tc
	})
	plain, shared := mk(t), mk(t)
	m := Memos{Verify: wire.NewVerifyCache(0), Global: NewEvalMemo(4)}
	for _, n := range shared.nodes {
		if err := n.ShareMemos(m); err != nil {
			t.Fatal(err)
		}
	}
	for r := range 3 {
		a, b := plain.round(r), shared.round(r)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("round %d: Ready with memos %+v, without %+v", r, b, a)
		}
	}
	for i := range plain.nodes {
		if !reflect.DeepEqual(plain.nodes[i].Model().Params(), shared.nodes[i].Model().Params()) {
			t.Fatalf("node %d: the memos changed its model", i)
		}
	}
	if err := shared.nodes[0].ShareMemos(Memos{}); err == nil {
		t.Error("memos shared after a round")
	}
}
