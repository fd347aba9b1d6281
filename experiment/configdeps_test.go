package experiment

import (
	"fmt"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
)

// config restates three things of packages it may not import (they sit
// above it, next to the node); these tests hold each copy equal to its
// source.

// TestEvaluationsCountsTheScheduledRounds: config.Evaluations agrees with
// the rounds metrics.Evaluated selects, and with counts worked out by hand.
func TestEvaluationsCountsTheScheduledRounds(t *testing.T) {
	for _, c := range [][3]int{{40, 5, 8}, {41, 5, 9}, {3, 1, 3}, {7, 0, 7}, {10, 20, 1}, {1, 3, 1}} {
		n := 0
		for round := range c[0] {
			if metrics.Evaluated(round, c[0], c[1]) {
				n++
			}
		}
		if got := config.Evaluations(c[0], c[1]); got != n || got != c[2] {
			t.Errorf("rounds %d, eval_every %d: Evaluations = %d, Evaluated selects %d, want %d", c[0], c[1], got, n, c[2])
		}
	}
}

// TestConfigLiarNamesAreAdversarys: the liar variants config accepts are
// the ones adversary implements.
func TestConfigLiarNamesAreAdversarys(t *testing.T) {
	if config.LiarOmission != adversary.LiarOmission || config.LiarInflation != adversary.LiarInflation {
		t.Fatalf("config's liars %q, %q; adversary's %q, %q", config.LiarOmission, config.LiarInflation, adversary.LiarOmission, adversary.LiarInflation)
	}
	c := config.Default()
	c.Adversary.Liar, c.Adversary.ClaimReplay, c.Adversary.ClaimFlood = config.LiarInflation, true, true
	if a := ClaimAttack(c); a != (adversary.ClaimAttack{Liar: adversary.LiarInflation, Replay: true, Flood: true}) {
		t.Errorf("ClaimAttack = %+v, want the inflation liar replaying and flooding", a)
	}
	for _, liar := range []string{"", config.LiarOmission, config.LiarInflation} {
		if err := ClaimAttack(config.Config{Adversary: config.Adversary{Liar: liar}}).Validate(); err != nil {
			t.Errorf("liar %q: %v", liar, err)
		}
	}
}

// TestDeclaredFractionCountsChoosesSet: the Byzantine share config derives
// f = "auto" from, and the count its "no honest node left" check uses,
// are the size of the set adversary.Choose picks, for fractions (rounded
// half away from zero, at least 1) and for ids (repeats counted once).
func TestDeclaredFractionCountsChoosesSet(t *testing.T) {
	cases := []struct {
		nodes    int
		fraction float64
		ids      []int
		want     int // worked out by hand
	}{
		{10, 0, nil, 0}, {10, 0.3, nil, 3}, {10, 0.25, nil, 3}, {10, 0.24, nil, 2}, {7, 0.01, nil, 1},
		{4, 0.9, nil, 4}, {1, 0.3, nil, 1}, {10, 0, []int{3, 1, 3}, 2}, {3, 0, []int{0, 1, 2}, 3},
	}
	for _, cs := range cases {
		c := config.Default()
		c.Nodes, c.Seed = cs.nodes, 7
		c.Adversary.Fraction, c.Adversary.IDs = cs.fraction, cs.ids
		ids := ByzantineIDs(c)
		if len(ids) != cs.want {
			t.Errorf("%+v: Choose picks %v, want %d nodes", cs, ids, cs.want)
		}
		want := cs.fraction
		if len(cs.ids) > 0 {
			want = float64(cs.want) / float64(cs.nodes)
		}
		if got := c.DeclaredFraction(); got != want {
			t.Errorf("%+v: DeclaredFraction = %v, want %v", cs, got, want)
		}
		err := c.Validate()
		all := err != nil && strings.Contains(err.Error(), "nodes Byzantine")
		if all != (len(ids) >= cs.nodes) || all && !strings.Contains(err.Error(), fmt.Sprintf("all %d nodes Byzantine", len(ids))) {
			t.Errorf("%+v: Choose picks %v of %d nodes, Validate says %v", cs, ids, cs.nodes, err)
		}
	}
}
