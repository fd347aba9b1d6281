package experiment

import (
	"testing"

	"github.com/trellis-fl/trellis/privacy"
)

// privacy.accountant = "pld" reports every node's ε with the PLD
// accountant, below RDP's for the same noise, and says so in the round
// summary; target_epsilon calibrates with it.
func TestPrivacyAccountantPLD(t *testing.T) {
	if testing.Short() {
		t.Skip("five DP runs")
	}
	run := func(mode, extra string) (eps float64, acct string) {
		fin := finalOfConfig(t, dpConfig(mode, extra))
		if fin.Privacy == nil {
			t.Fatal("a DP run without ε")
		}
		return fin.Privacy.HonestMaxEpsilon, fin.Privacy.Accountant
	}
	for _, mode := range []string{"sample", "node"} {
		rdp, a := run(mode, "noise_multiplier = 0.9")
		if a != "" {
			t.Errorf("%s: the default accountant is named %q in the summary, want it absent", mode, a)
		}
		pld, a := run(mode, "noise_multiplier = 0.9\naccountant = \"pld\"")
		t.Logf("%s: ε by RDP %v, by PLD %v", mode, rdp, pld)
		if a != "pld" || !(pld < rdp) || !(pld > 0.5*rdp) {
			t.Errorf("%s: PLD ε %v (accountant %q), RDP ε %v: want a PLD ε a little below RDP's", mode, pld, a, rdp)
		}
	}
	// Calibration at node level (the exact Gaussian PLD: fast; DP-SGD's
	// calibration is CalibrateWith's, tested in package privacy).
	cal, a := run("node", "target_epsilon = 8\naccountant = \"pld\"")
	if a != "pld" || cal > 8*(1+1e-6) || cal < 8*0.99 {
		t.Errorf("calibrated to ε = 8 with PLD, the run reports ε = %v by %q", cal, a)
	}
}

// The node's ε under PLD at node level is the Gaussian mechanism's exact
// one after its releases.
func TestNodeDPReadingPLD(t *testing.T) {
	dp, err := privacy.NewNodeDP(1, 2, 1e-5, privacy.NewSeededSource(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := dp.UseAccountant(privacy.MethodPLD); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := dp.Release(make([]float32, 3)); err != nil {
			t.Fatal(err)
		}
	}
	r := dp.Reading()
	want, err := privacy.EpsilonPLD(privacy.GaussianEvent{Multiplier: 2, Sampling: privacy.Unamplified()}, 4, 1e-5)
	if err != nil || r.Accountant != privacy.MethodPLD || r.Epsilon != want || r.Fallback != "" {
		t.Errorf("reading %+v, want ε = %v by pld (%v)", r, want, err)
	}
	// Another kind of release in the same accountant: PLD of one event
	// cannot stand for it, so RDP answers and says why.
	if err := dp.Accountant().Compose(privacy.LaplaceEvent{Epsilon: 0.1}, 1); err != nil {
		t.Fatal(err)
	}
	if r := dp.Reading(); r.Accountant != privacy.MethodRDP || r.Fallback == "" {
		t.Errorf("mixed releases: reading %+v, want RDP with the reason", r)
	}
	if err := dp.UseAccountant("prv"); err == nil {
		t.Error("an unknown accountant accepted")
	}
}
