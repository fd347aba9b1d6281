package experiment

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/rundir"
)

// TestTernaryRunReportsDelta: a run with ternary quantization records
// every honest node's (0, δ), δ = rounds·C/B, for a level given and for
// one calibrated from delta (which the last round then meets), and
// PrivacyOf states it.
func TestTernaryRunReportsDelta(t *testing.T) {
	for _, c := range []struct {
		extra string
		want  float64
	}{
		{"[privacy]\nmode = \"ternary\"\nclip = 0.5\nlevel = 40.0\n", 0},
		{"[privacy]\nmode = \"ternary\"\nclip = 0.5\ndelta = 0.3\n", 0.3},
	} {
		cfg := tinyConfig(t, c.extra)
		want := c.want
		if want == 0 {
			want = float64(cfg.Rounds) * 0.5 / 40
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
			if nr.Epsilon == nil || *nr.Epsilon != 0 || nr.Delta == nil || math.Abs(*nr.Delta-want) > 1e-12 {
				t.Errorf("node %d: ε %v δ %v, want (0, %v)", nr.Node, nr.Epsilon, nr.Delta, want)
			}
		}
		if p := fin.Privacy; p == nil || p.HonestMaxEpsilon != 0 || math.Abs(p.Delta-want) > 1e-12 {
			t.Errorf("final privacy %+v, want (0, %v)", fin.Privacy, want)
		}
		_, err = PrivacyOf(cfg)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("ε = 0 and δ = %.6g after %d rounds", want, cfg.Rounds)) {
			t.Errorf("PrivacyOf: %v; want δ %.6g", err, want)
		}
	}
}

// The estimate counts the ternary layer's two model-sized buffers.
func TestTernaryEstimateCountsTheLayer(t *testing.T) {
	cfg := tinyConfig(t, "[privacy]\nmode = \"ternary\"\nlevel = 2.0\n")
	e, err := EstimateOf(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := part(t, e, "privacy layer (ternary quantization)")
	params := part(t, e, "model parameters")
	if !p.PerNode || p.Each != 2*params.Each || p.Count != cfg.Nodes {
		t.Errorf("privacy layer part %+v: want 2 × %d B for each of %d nodes", p, params.Each, cfg.Nodes)
	}
}
