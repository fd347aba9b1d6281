package experiment

import (
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/configs"
	"github.com/trellis-fl/trellis/metrics"
)

func TestDMTTConfigErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"[strategy]\nname = \"dmtt\"", `model.head = "softmax"`},
		{"[model]\nhead = \"evidential\"\n[strategy]\nname = \"murmura\"\n[partition]\nsplit = [0.8, 0.0, 0.2]", "validation split"},
		{"[adversary]\nliar = \"omission\"", "need the trust layer"},
		{"[adversary]\nliar = \"fibber\"\n[trust]\nenabled = true", `adversary.liar = "fibber"`},
		{"[trust]\nenabled = true\nbudget = 0", "Budget"},
		{"[model]\nhead = \"evidential\"\n[strategy]\nname = \"dmtt\"\n[strategy.options]\nb = 2.5", "b = 2.5"},
		{"[model]\nhead = \"evidential\"\n[strategy]\nname = \"dmtt\"\n[strategy.options]\ntau_trust = 1.5", "tau_trust = 1.5"},
	} {
		_, err := config.Parse([]byte(c.text), "t")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one mentioning %q", c.text, err, c.want)
		}
	}
	ok := "[model]\nhead = \"evidential\"\n[strategy]\nname = \"dmtt\"\n[strategy.options]\ntau_trust = 0.5\n[trust]\nlambda = 0.7\n[adversary]\nfraction = 0.2\nliar = \"inflation\"\nclaim_flood = true"
	c, err := config.Parse([]byte(ok), "t")
	if err != nil {
		t.Fatal(err)
	}
	tc, err := c.TrustLayer()
	if err != nil || tc == nil || tc.TauTrust != 0.5 || tc.Lambda != 0.7 {
		t.Errorf("trust config %+v, %v: want τ_trust 0.5 from the dmtt option and λ 0.7", tc, err)
	}
	if a := c.ClaimAttack(); a.Liar != adversary.LiarInflation || !a.Flood || a.Forge {
		t.Errorf("claim attack %+v", a)
	}
}

// TestDMTTQuickPresetRunsShort runs every variant of the quick main
// comparison for 2 rounds on 10 nodes: a smoke test of the committed preset.
func TestDMTTQuickPresetRunsShort(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	b, ok := configs.Read("dmtt/main-quick")
	if !ok {
		t.Fatal("preset dmtt/main-quick missing")
	}
	c, err := config.Parse(b, "dmtt/main-quick")
	if err != nil {
		t.Fatal(err)
	}
	runs, _, err := c.Expand()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]bool{}
	for _, r := range runs {
		rc := r.Config
		if rc.Adversary.Fraction != 0.5 {
			continue
		}
		rc.Nodes, rc.Rounds, rc.Data.Samples = 10, 2, 1000
		rc.Model.Hidden = []int{16}
		s, err := SetupOf(rc, loadMNIST(t))
		if err != nil {
			t.Fatalf("%s: %v", rc.Label(), err)
		}
		var final *metrics.Round
		if err := s.Run(t.Context(), metrics.SinkFunc(func(r *metrics.Round) error { final = r; return nil })); err != nil {
			t.Fatalf("%s: %v", rc.Label(), err)
		}
		labels[rc.Label()] = true
		if rc.Strategy.Name == "dmtt" && (final.Trust == nil || final.DeltaMax != 0) {
			t.Errorf("dmtt: trust diagnostics %v, delta_max %v", final.Trust, final.DeltaMax)
		}
	}
	if len(labels) != 8 {
		t.Errorf("ran %d methods, want 8: %v", len(labels), labels)
	}
}
