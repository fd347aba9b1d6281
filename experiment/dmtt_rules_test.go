package experiment

import (
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/trust"
)

// TestTrustRulesKeys: trust.rules, trust.disjoint_paths and trust.wd reach
// the trust layer's Config (issue 22); an unknown rule set is refused.
func TestTrustRulesKeys(t *testing.T) {
	base := "[model]\nhead = \"evidential\"\n[strategy]\nname = \"dmtt\"\n[trust]\n"
	for _, c := range []struct {
		keys string
		want trust.Rules
		wd   float64
	}{
		{"", trust.Rules{}, 1},
		{"rules = \"spec\"\nwd = 2.0", trust.Rules{}, 2},
		{"rules = \"screen\"\ndisjoint_paths = 1", trust.Rules{IndependentPaths: true, Conflict: true, Quorum: true, DisjointPaths: 1}, 1},
		{"rules = \"screen_unhopped\"", trust.Rules{IndependentPaths: true, Conflict: true, Quorum: true, Unhopped: true}, 1},
	} {
		cfg, err := ParseConfig([]byte(base+c.keys), "t")
		if err != nil {
			t.Fatalf("%q: %v", c.keys, err)
		}
		tc, err := cfg.trustConfig()
		if err != nil || tc.Rules != c.want || tc.Wd != c.wd {
			t.Errorf("%q: rules %+v, w_d %v (%v); want %+v, %v", c.keys, tc.Rules, tc.Wd, err, c.want, c.wd)
		}
	}
	for _, bad := range []string{"rules = \"lenient\"", "disjoint_paths = -1", "wd = -1"} {
		if _, err := ParseConfig([]byte(base+bad), "t"); err == nil || !strings.Contains(err.Error(), "trust") {
			t.Errorf("%q: error %v, want one naming the trust setting", bad, err)
		}
	}
}
