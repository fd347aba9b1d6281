package experiment

import (
	"testing"

	"github.com/trellis-fl/trellis/strategy"
)

// An R-DPFL run records each honest node's correction every round: the
// prediction follows the R-DPFL paper, Algorithm 2 (round 1 "self", then the
// warm-up's "previous"), and the factors lie in (0, 1]. Other strategies
// record none.
func TestRDPFLRecordsItsCorrection(t *testing.T) {
	rd := func() strategy.Strategy {
		s, err := strategy.New("rdpfl", strategy.Params{Rule: "median"})
		if err != nil {
			panic(err)
		}
		return s
	}
	rs := setup{strategy: rd, rounds: 3, pool: 2000, nodes: 6}.run(t)
	for _, r := range rs {
		for _, n := range r.Nodes {
			c := n.Correction
			if c == nil {
				t.Fatalf("round %d node %d: no correction recorded", r.Round, n.Node)
			}
			want := "previous"
			if r.Round == 0 {
				want = "self"
			}
			if c.Empty || c.Prediction != want || !(c.ClipFactor > 0 && c.ClipFactor <= 1) || !(c.GdFactor > 0 && c.GdFactor <= 1) {
				t.Errorf("round %d node %d: correction %+v, want prediction %q and factors in (0, 1]", r.Round, n.Node, *c, want)
			}
		}
	}
	for _, n := range (setup{strategy: fedavg, rounds: 1, pool: 2000, nodes: 4}.run(t))[0].Nodes {
		if n.Correction != nil {
			t.Errorf("fedavg node %d recorded an R-DPFL correction", n.Node)
		}
	}
}
