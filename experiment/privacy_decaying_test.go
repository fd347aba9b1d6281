package experiment

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/rundir"
)

// TestDecayingRunReportsTheGeometricSum: a run with decaying Laplace noise
// records every honest node's ε, δ = 0, equal to Σ_k 2C·p^k/(c·q^k) over
// the run's rounds (summed here term by term): c given, and c calibrated
// from target_epsilon, which the last round then meets.
func TestDecayingRunReportsTheGeometricSum(t *testing.T) {
	for _, c := range []struct {
		extra string
		want  float64
	}{
		{"[privacy]\nmode = \"laplace_decaying\"\nnoise_scale = 4.0\nnoise_decay = 0.8\nstep_decay = 0.5\nclip = 2.0\n", 0},
		{"[privacy]\nmode = \"laplace_decaying\"\ntarget_epsilon = 5.0\nclip = 3.0\n", 5},
	} {
		cfg := tinyConfig(t, c.extra)
		want := c.want
		if want == 0 {
			for k := range cfg.Rounds {
				want += 2 * 2.0 * math.Pow(0.5, float64(k)) / (4.0 * math.Pow(0.8, float64(k)))
			}
		}
		dir := t.TempDir()
		fin, err := RunToDir(context.Background(), cfg, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, recs, err := rundir.LastRound(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			t.Fatal("no node records")
		}
		for _, nr := range recs {
			if nr.Epsilon == nil || nr.Delta == nil || *nr.Delta != 0 {
				t.Fatalf("node %d: ε %v δ %v, want an ε at δ = 0", nr.Node, nr.Epsilon, nr.Delta)
			}
			if math.Abs(*nr.Epsilon-want) > 1e-9 {
				t.Errorf("node %d: ε %v, want the geometric sum %v", nr.Node, *nr.Epsilon, want)
			}
		}
		if p := fin.Privacy; p == nil || math.Abs(p.HonestMaxEpsilon-want) > 1e-9 {
			t.Errorf("final privacy %+v, want ε %v", fin.Privacy, want)
		}
	}
}

// The estimate counts the layer's two model-sized buffers per node.
func TestDecayingEstimateCountsTheLayer(t *testing.T) {
	cfg := tinyConfig(t, "[privacy]\nmode = \"laplace_decaying\"\nnoise_scale = 1.0\nclip = 1.0\n")
	e, err := EstimateOf(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := part(t, e, "privacy layer (decaying Laplace)")
	params := part(t, e, "model parameters")
	if !p.PerNode || p.Each != 2*params.Each || p.Count != cfg.Nodes {
		t.Errorf("privacy layer part %+v: want 2 × %d B (a model vector) for each of %d nodes", p, params.Each, cfg.Nodes)
	}
}

// PrivacyOf, which lists the Gaussian modes' per-node calibration, answers
// for this mode with its one ε, the closed form's.
func TestDecayingPrivacyOfSaysTheEpsilon(t *testing.T) {
	cfg := tinyConfig(t, "[privacy]\nmode = \"laplace_decaying\"\nnoise_scale = 4.0\nnoise_decay = 0.8\nstep_decay = 0.5\nclip = 2.0\n")
	var want float64
	for k := range cfg.Rounds {
		want += 2 * 2.0 * math.Pow(0.5, float64(k)) / (4.0 * math.Pow(0.8, float64(k)))
	}
	_, err := PrivacyOf(cfg)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("ε = %.6g after %d rounds", want, cfg.Rounds)) {
		t.Fatalf("PrivacyOf: %v; want the pure ε %.6g after %d rounds", err, want, cfg.Rounds)
	}
}
