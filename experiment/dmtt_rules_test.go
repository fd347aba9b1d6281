package experiment

import (
	"bytes"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/trust"
)

// TestTrustRulesKeys: trust.rules, trust.disjoint_paths and trust.wd reach
// the trust layer's Config, the screen rules by default; an unknown rule
// set is refused.
func TestTrustRulesKeys(t *testing.T) {
	base := "[model]\nhead = \"evidential\"\n[strategy]\nname = \"dmtt\"\n[trust]\n"
	for _, c := range []struct {
		keys string
		want trust.Rules
		wd   float64
	}{
		{"", trust.ScreenRules(), 1},
		{"rules = \"spec\"\nwd = 2.0", trust.Rules{}, 2},
		{"rules = \"screen\"\ndisjoint_paths = 1", trust.Rules{IndependentPaths: true, Conflict: true, Quorum: true, DisjointPaths: 1}, 1},
		{"rules = \"screen_unhopped\"", trust.Rules{IndependentPaths: true, Conflict: true, Quorum: true, Unhopped: true}, 1},
	} {
		cfg, err := config.Parse([]byte(base+c.keys), "t")
		if err != nil {
			t.Fatalf("%q: %v", c.keys, err)
		}
		tc, err := cfg.TrustLayer()
		if err != nil || tc.Rules != c.want || tc.Wd != c.wd {
			t.Errorf("%q: rules %+v, w_d %v (%v); want %+v, %v", c.keys, tc.Rules, tc.Wd, err, c.want, c.wd)
		}
	}
	for _, bad := range []string{"rules = \"lenient\"", "disjoint_paths = -1", "wd = -1"} {
		if _, err := config.Parse([]byte(base+bad), "t"); err == nil || !strings.Contains(err.Error(), "trust") {
			t.Errorf("%q: error %v, want one naming the trust setting", bad, err)
		}
	}
}

// TestTrustClaimsKeys: trust.claims and trust.digest_every reach the trust
// layer's Config; the default (no key) is the lists form and leaves the
// resolved config's hash as it was; bad values, digest_every without the
// events form, misspelt keys and the claim forgery/replay/flood attacks in
// the events form are refused with the key named; a liar is accepted.
func TestTrustClaimsKeys(t *testing.T) {
	base := "[model]\nhead = \"evidential\"\n[strategy]\nname = \"dmtt\"\n[trust]\n"
	for _, c := range []struct {
		keys   string
		claims string
		digest int
	}{
		{"", "", 5},
		{"claims = \"lists\"", "", 5},
		{"claims = \"events\"", trust.ClaimsEvents, 5},
		{"claims = \"events\"\ndigest_every = 3", trust.ClaimsEvents, 3},
	} {
		cfg, err := config.Parse([]byte(base+c.keys), "t")
		if err != nil {
			t.Fatalf("%q: %v", c.keys, err)
		}
		tc, err := cfg.TrustLayer()
		if err != nil || tc.Claims != c.claims || tc.DigestEvery != c.digest {
			t.Errorf("%q: claims %q, digest %d (%v); want %q, %d", c.keys, tc.Claims, tc.DigestEvery, err, c.claims, c.digest)
		}
	}
	plain, err := config.Parse([]byte(base), "t")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(plain); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "claims") || strings.Contains(b.String(), "digest_every") {
		t.Errorf("the default claim form shows in the resolved TOML (ConfigHash's input): existing configs' hashes would change")
	}
	for _, bad := range []struct{ keys, want string }{
		{"claims = \"edges\"", "claims"},
		{"digest_every = 3", "digest_every"},
		{"claims = \"events\"\ndigest_every = -1", "digest_every"},
		{"claim = \"events\"", "claim"},
		{"claims = \"events\"\n[adversary]\nclaim_flood = true\nfraction = 0.1", "claim_flood"},
	} {
		if _, err := config.Parse([]byte(base+bad.keys), "t"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want one naming %s", bad.keys, err, bad.want)
		}
	}
}

// TestTrustEventsWithLiar: adversary.liar is accepted in the events form
// (sim.eventsOf acts for it).
func TestTrustEventsWithLiar(t *testing.T) {
	text := "[model]\nhead = \"evidential\"\n[strategy]\nname = \"dmtt\"\n[trust]\nclaims = \"events\"\n[adversary]\nliar = \"omission\"\nfraction = 0.1\n"
	if _, err := config.Parse([]byte(text), "t"); err != nil {
		t.Fatalf("liar in the events form refused: %v", err)
	}
}
