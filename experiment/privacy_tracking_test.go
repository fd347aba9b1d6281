package experiment

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
)

const trackingTOML = "[strategy]\nname = \"gradient_tracking\"\n"

// TestDecayingTrackingRunReportsTwoGeometricSums: gradient tracking with
// decaying Laplace noise records every honest node's ε, δ = 0, equal to
// Σ_k 2 · 2C·p^k/(c·q^k) (two releases a round, summed here term by term),
// and PrivacyOf states that ε.
func TestDecayingTrackingRunReportsTwoGeometricSums(t *testing.T) {
	cfg := tinyConfig(t, trackingTOML+"[privacy]\nmode = \"laplace_decaying\"\nnoise_scale = 4.0\nnoise_decay = 0.8\nstep_decay = 0.5\nclip = 2.0\n")
	var want float64
	for k := range cfg.Rounds {
		want += 2 * 2 * 2.0 * math.Pow(0.5, float64(k)) / (4.0 * math.Pow(0.8, float64(k)))
	}
	dir := t.TempDir()
	fin, err := RunToDir(context.Background(), cfg, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, recs, err := rundir.LastRound(dir)
	if err != nil || len(recs) == 0 {
		t.Fatalf("records: %v (%d)", err, len(recs))
	}
	for _, nr := range recs {
		if nr.Epsilon == nil || nr.Delta == nil || *nr.Delta != 0 || math.Abs(*nr.Epsilon-want) > 1e-9 {
			t.Errorf("node %d: ε %v δ %v, want %v at δ = 0", nr.Node, nr.Epsilon, nr.Delta, want)
		}
	}
	if p := fin.Privacy; p == nil || math.Abs(p.HonestMaxEpsilon-want) > 1e-9 {
		t.Errorf("final privacy %+v, want ε %v", fin.Privacy, want)
	}
	_, err = PrivacyOf(cfg)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("ε = %.6g after %d rounds, two releases a round", want, cfg.Rounds)) {
		t.Errorf("PrivacyOf: %v; want ε %.6g", err, want)
	}
	// target_epsilon calibrates c for both releases: the run ends at it.
	cfg = tinyConfig(t, trackingTOML+"[privacy]\nmode = \"laplace_decaying\"\ntarget_epsilon = 7.0\nclip = 3.0\n")
	dir = t.TempDir()
	if fin, err = RunToDir(context.Background(), cfg, dir, nil); err != nil {
		t.Fatal(err)
	}
	if p := fin.Privacy; p == nil || math.Abs(p.HonestMaxEpsilon-7) > 1e-9 {
		t.Errorf("target ε 7: final privacy %+v", fin.Privacy)
	}
}

// TestDecayingTrackingWithHugeEpsilonIsGradientTracking: with a clip that
// never binds (L1 10⁶) and noise of scale 10⁻⁹ (ε ≈ 10¹⁶), a run ends
// where plain gradient tracking does: every node's final loss and accuracy
// within 10⁻³ (the noise moves a parameter by ~10⁻⁹).
func TestDecayingTrackingWithHugeEpsilonIsGradientTracking(t *testing.T) {
	run := func(extra string) []metrics.NodeRound {
		t.Helper()
		dir := t.TempDir()
		if _, err := RunToDir(context.Background(), tinyConfig(t, trackingTOML+extra), dir, nil); err != nil {
			t.Fatal(err)
		}
		_, recs, err := rundir.LastRound(dir)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	plain := run("")
	dp := run("[privacy]\nmode = \"laplace_decaying\"\nnoise_scale = 1e-9\nclip = 1e6\nnoise_decay = 1.0\nstep_decay = 1.0\n")
	if len(plain) != len(dp) || len(plain) == 0 {
		t.Fatalf("%d and %d node records", len(plain), len(dp))
	}
	for i := range plain {
		a, b := plain[i], dp[i]
		if math.Abs(a.GlobalLoss-b.GlobalLoss) > 1e-3 || math.Abs(a.GlobalAcc-b.GlobalAcc) > 1e-3 {
			t.Errorf("node %d: plain loss %.6f acc %.4f, with DP %.6f %.4f", a.Node, a.GlobalLoss, a.GlobalAcc, b.GlobalLoss, b.GlobalAcc)
		}
	}
}

// The estimate counts the tracking layer's three model-sized buffers.
func TestDecayingTrackingEstimateCountsTheLayer(t *testing.T) {
	cfg := tinyConfig(t, trackingTOML+"[privacy]\nmode = \"laplace_decaying\"\nnoise_scale = 1.0\n")
	e, err := EstimateOf(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := part(t, e, "privacy layer (decaying Laplace, gradient tracking)")
	params := part(t, e, "model parameters")
	if !p.PerNode || p.Each != 3*params.Each || p.Count != cfg.Nodes {
		t.Errorf("privacy layer part %+v: want 3 × %d B for each of %d nodes", p, params.Each, cfg.Nodes)
	}
}
