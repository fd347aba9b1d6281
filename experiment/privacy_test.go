package experiment

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/privacy/audit"
	"github.com/trellis-fl/trellis/rundir"
)

// TestPrivacyKeysAreChecked: every bad [privacy] value is an error naming
// the key, the value and the allowed range.
func TestPrivacyKeysAreChecked(t *testing.T) {
	for _, c := range []struct{ toml, want string }{
		{`mode = "nodes"`, `privacy.mode = "nodes": want "none", "node" or "sample"`},
		{`mode = "node"`, "privacy.noise_multiplier = 0: mode = \"node\" needs noise_multiplier > 0 or target_epsilon > 0"},
		{"mode = \"node\"\nnoise_multiplier = -1.0", "privacy.noise_multiplier = -1: need a finite value > 0"},
		{"mode = \"node\"\nnoise_multiplier = 1.0\ntarget_epsilon = 2.0", "privacy.noise_multiplier = 1: set noise_multiplier or target_epsilon, not both"},
		{"mode = \"sample\"\ntarget_epsilon = -2.0", "privacy.target_epsilon = -2: need a finite value > 0"},
		{"mode = \"node\"\nnoise_multiplier = 1.0\nclip = 0.0", "privacy.clip = 0: need a finite value > 0"},
		{"mode = \"node\"\nnoise_multiplier = 1.0\ndelta = 1.0", "privacy.delta = 1: allowed range (0, 1)"},
		{"mode = \"sample\"\nnoise_multiplier = 1.0\nsampling = \"random\"", `privacy.sampling = "random": want "poisson" or "shuffle"`},
	} {
		_, err := config.Parse([]byte("[privacy]\n"+c.toml+"\n"), "p.toml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.toml, err, c.want)
		}
	}
	_, err := config.Parse([]byte("[privacy]\nmode = \"node\"\nnoise_multiplier = 1.0\nclipp = 1.0\n"), "p.toml")
	if err == nil || !strings.Contains(err.Error(), `unknown key "privacy.clipp" (did you mean "privacy.clip"?)`) {
		t.Errorf("misspelt key: %v", err)
	}
	_, err = config.Parse([]byte("[strategy]\nname = \"gradient_tracking\"\n[privacy]\nmode = \"node\"\nnoise_multiplier = 1.0\n"), "p.toml")
	if err == nil || !strings.Contains(err.Error(), "node-level DP cannot cover") {
		t.Errorf("gradient tracking with node-level DP: %v", err)
	}
}

// TestPrivacyRunReportsTheAccountantsEpsilon: a node-level DP run records
// every honest node's ε each round, equal to the accountant's for that many
// releases at the node's δ; a target ε is met after the last round; and the
// summary carries the final ε.
func TestPrivacyRunReportsTheAccountantsEpsilon(t *testing.T) {
	for _, extra := range []string{
		"[privacy]\nmode = \"node\"\nnoise_multiplier = 2.0\nclip = 0.5\n",
		"[privacy]\nmode = \"node\"\ntarget_epsilon = 3.0\nclip = 0.5\ndelta = 1e-4\n",
	} {
		c := tinyConfig(t, extra)
		dir := t.TempDir()
		fin, err := RunToDir(context.Background(), c, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, recs, err := rundir.LastRound(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, nr := range recs {
			if nr.Epsilon == nil || nr.Delta == nil {
				t.Fatalf("node %d: no ε recorded", nr.Node)
			}
			if c.Privacy.NoiseMultiplier > 0 {
				want, _, _ := privacy.EpsilonAfter(privacy.GaussianEvent{Multiplier: 2, Sampling: privacy.Unamplified()}, c.Rounds, *nr.Delta, nil)
				if *nr.Epsilon != want {
					t.Errorf("node %d: ε %v, accountant %v", nr.Node, *nr.Epsilon, want)
				}
			} else if math.Abs(*nr.Epsilon-3) > 1e-3 || *nr.Delta != 1e-4 {
				t.Errorf("node %d: ε %v at δ %v, want the target 3 at 1e-4", nr.Node, *nr.Epsilon, *nr.Delta)
			}
		}
		if p := fin.Privacy; p == nil || p.Nodes != c.Nodes || p.HonestMaxEpsilon < p.HonestMeanEpsilon || p.HonestMaxEpsilon != *recs[0].Epsilon && c.Privacy.NoiseMultiplier > 0 {
			t.Errorf("final privacy %+v", fin.Privacy)
		}
		rows, err := rundir.ReadSummary(dir)
		if err != nil || rows[0]["final_honest_max_epsilon"] == "" {
			t.Errorf("summary %v, %v: no final ε", rows, err)
		}
	}
}

// TestAuditSeesOverfittingAndDPHidesIt: the loss-threshold attack on
// deliberately overfit local models (few samples, many epochs, no sharing)
// reaches an AUC well above 0.5; with DP-SGD at ε = 0.5 the AUC is near
// 0.5, and no certified lower bound exceeds the accountant's ε.
func TestAuditSeesOverfittingAndDPHidesIt(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs and two re-runs")
	}
	base := "[training]\nlr = 0.1\nepochs = 15\n[strategy]\nname = \"local\"\n[partition]\nmethod = \"iid\"\n"
	audit := func(extra string) *audit.Report {
		c := tinyConfig(t, base+extra)
		c.Rounds, c.FinalRounds = 2, 1
		dir := t.TempDir()
		if _, err := RunToDir(context.Background(), c, dir, nil); err != nil {
			t.Fatal(err)
		}
		rep, err := Audit(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	plain := audit("")
	if plain.MeanAUC < 0.7 || plain.MeanReferenceAUC < 0.6 {
		t.Errorf("overfit without DP: mean AUC %.3f (reference-model attack %.3f), want well above 0.5\n%s", plain.MeanAUC, plain.MeanReferenceAUC, plain)
	}
	dp := audit("[privacy]\nmode = \"sample\"\ntarget_epsilon = 0.5\nclip = 1.0\n")
	if math.Abs(dp.MeanAUC-0.5) > 0.08 {
		t.Errorf("DP-SGD at ε = 0.5: mean AUC %.3f, want near 0.5\n%s", dp.MeanAUC, dp)
	}
	for _, n := range dp.Nodes {
		if n.Accountant == nil || n.Reference == nil || n.Violation || n.EpsilonLower > *n.Accountant || n.Reference.EpsilonLower > *n.Accountant {
			t.Errorf("node %d: lower bound %v, accountant %v", n.Node, n.EpsilonLower, n.Accountant)
		}
	}
	t.Logf("no DP:\n%s\nDP-SGD ε = 0.5:\n%s", plain, dp)
}
