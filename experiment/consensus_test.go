package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/consensus/task"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
)

// consensusConfig is a small consensus config: 6 nodes on a ring, a vector
// of 2 values, method m.
func consensusConfig(t *testing.T, m string, extra string) config.Config {
	t.Helper()
	c, err := config.Parse([]byte(`name = "cons"
nodes = 6
rounds = 150
seed = 4
[topology]
kind = "ring"
[consensus]
dim = 2
lo = -1.0
hi = 3.0
method = "`+m+`"
`+extra), "cons.toml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// lastRound is the last record of dir's rounds.jsonl.
func lastRound(t *testing.T, dir string) metrics.Round {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rundir.RoundsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	var r metrics.Round
	if err := json.Unmarshal(lines[len(lines)-1], &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestConsensusRunDir: a consensus config runs into a run directory that
// rundir verifies, with one round per iteration; an exact method ends
// within 1e-12 (MSE) of the float64 mean of the initial values computed
// here, a DP method does not and reports its ε; a second run with the
// same seed writes the same record files byte for byte, and one with
// another seed another rounds.jsonl.
func TestConsensusRunDir(t *testing.T) {
	ctx := context.Background()
	c := consensusConfig(t, "plain", "colluders = 1\ntarget = 3\n")
	if err := Check(c); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "plain")
	fin, err := RunToDir(ctx, c, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rundir.Verify(dir, c.Nodes, c.FinalRounds); err != nil {
		t.Fatal(err)
	}
	// The independent value: the mean of the initial values, and the
	// final MSE of the run's own estimates against it.
	spec, err := ConsensusSpec(c)
	if err != nil {
		t.Fatal(err)
	}
	res, err := task.Execute(spec)
	if err != nil {
		t.Fatal(err)
	}
	mse := 0.0
	for k := range 2 {
		s := 0.0
		for i := range 6 {
			if v := spec.X0[i][k]; v < -1 || v >= 3 {
				t.Fatalf("x_%d(0)[%d] = %v, outside [lo, hi)", i, k, v)
			}
			s += spec.X0[i][k]
		}
		for i := range 6 {
			d := res.Final[i][k] - s/6
			mse += d * d / 12
		}
	}
	last := lastRound(t, dir)
	cr := fin.Consensus
	if cr == nil || last.Round != 149 || last.Consensus == nil || mse > 1e-12 || cr.MSE > 1e-12 || cr.MSE != last.Consensus.MSE ||
		cr.Epsilon != nil || cr.ReconRMSE == nil || *cr.ReconRMSE != 0 {
		t.Fatalf("plain: final %+v, last round %d %+v, MSE to the mean %g", cr, last.Round, last.Consensus, mse)
	}
	if got, ok := rundir.ReadFinal(dir); !ok || got.Consensus == nil || got.Consensus.MSE != cr.MSE || got.Consensus.ReconRMSE == nil {
		t.Errorf("summary.csv reads back as %+v", got.Consensus)
	}
	// A DP method: its error is noise, and it says its ε.
	dp := consensusConfig(t, "dp_laplace_nozari", "epsilon = 2.0\n")
	dpDir := filepath.Join(t.TempDir(), "dp")
	dfin, err := RunToDir(ctx, dp, dpDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := dfin.Consensus; d == nil || !(d.MSE > 1e-6) || d.Epsilon == nil || *d.Epsilon != 2 {
		t.Fatalf("dp_laplace_nozari: %+v", d)
	}
	// Same seed, same bytes; another seed, other rounds.
	again := filepath.Join(t.TempDir(), "dp")
	if _, err := RunToDir(ctx, dp, again, nil); err != nil {
		t.Fatal(err)
	}
	other := dp
	other.Seed = 5
	otherDir := filepath.Join(t.TempDir(), "dp")
	if _, err := RunToDir(ctx, other, otherDir, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{rundir.MetricsFile, rundir.RoundsFile, rundir.SummaryFile} {
		a, _ := os.ReadFile(filepath.Join(dpDir, f))
		b, err := os.ReadFile(filepath.Join(again, f))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs of one seed (%v)", f, err)
		}
	}
	a, _ := os.ReadFile(filepath.Join(dpDir, rundir.RoundsFile))
	b, _ := os.ReadFile(filepath.Join(otherDir, rundir.RoundsFile))
	if bytes.Equal(a, b) {
		t.Error("seeds 4 and 5 wrote the same rounds.jsonl")
	}
}

// TestConsensusResume: a finished run is kept; an interrupted one (no
// summary) is redone from the start into the same files; another config
// is refused.
func TestConsensusResume(t *testing.T) {
	ctx := context.Background()
	c := consensusConfig(t, "offsets", "")
	dir := filepath.Join(t.TempDir(), "r")
	if _, err := RunToDir(ctx, c, dir, nil); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(dir, rundir.RoundsFile))
	if err := os.Remove(filepath.Join(dir, rundir.SummaryFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := RunToDir(ctx, c, dir, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, rundir.RoundsFile))
	if !bytes.Equal(got, want) || !rundir.Has(dir, rundir.SummaryFile) {
		t.Error("the redone run differs from the first")
	}
	if _, err := RunToDir(ctx, c, dir, nil); err != nil {
		t.Errorf("a finished run: %v", err)
	}
	d := c
	d.Seed = 9
	if _, err := RunToDir(ctx, d, dir, nil); err == nil || !strings.Contains(err.Error(), "another config") {
		t.Errorf("another config's run: %v", err)
	}
}

// TestConsensusSweepOneRunPerMethod: a sweep over methods writes one run
// directory per method and a summary row for each, with the method.
func TestConsensusSweepOneRunPerMethod(t *testing.T) {
	c := consensusConfig(t, "plain", `
[sweep.grid]
"consensus.method" = ["plain", "state_decomposition", "dp_gossip"]
`)
	out := t.TempDir()
	res, err := RunSweep(context.Background(), c, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := rundir.ReadSummary(out)
	if err != nil || len(rows) != 3 || len(res.Runs) != 3 {
		t.Fatalf("%d rows, %d runs, %v", len(rows), len(res.Runs), err)
	}
	for i, m := range []string{"plain", "state_decomposition", "dp_gossip"} {
		if rows[i]["consensus.method"] != m || rows[i]["final_consensus_mse"] == "" {
			t.Errorf("row %d: %v", i, rows[i])
		}
		if !rundir.Has(filepath.Join(out, "consensus.method="+m, "seed-4"), rundir.SummaryFile) {
			t.Errorf("no finished run of %s", m)
		}
	}
	if rows[2]["final_consensus_epsilon"] != "1" || rows[0]["final_consensus_epsilon"] != "" {
		t.Errorf("ε column: %q, %q", rows[2]["final_consensus_epsilon"], rows[0]["final_consensus_epsilon"])
	}
}

// TestConsensusCheck: a disconnected graph and too many colluders for the
// target's degree are refused before anything runs.
func TestConsensusCheck(t *testing.T) {
	c := consensusConfig(t, "plain", "colluders = 3\n")
	if err := Check(c); err == nil || !strings.Contains(err.Error(), "consensus.colluders = 3") {
		t.Errorf("colluders: %v", err)
	}
	c = consensusConfig(t, "plain", "")
	c.Topology = config.Topology{Kind: "erdos_renyi", P: 0}
	if err := Check(c); err == nil || !strings.Contains(err.Error(), "not connected") {
		t.Errorf("disconnected: %v", err)
	}
}

// TestConsensusRunDirVerify: rundir.Verify accepts a consensus run with
// no node lines, and refuses one whose summary's consensus error is not
// its last round's or whose rounds.jsonl was cut short.
func TestConsensusRunDirVerify(t *testing.T) {
	c := consensusConfig(t, "plain", "")
	c.Rounds = 20
	dir := filepath.Join(t.TempDir(), "v")
	fin, err := RunToDir(context.Background(), c, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rundir.Verify(dir, c.Nodes, c.FinalRounds); err != nil {
		t.Fatal(err)
	}
	sum := filepath.Join(dir, rundir.SummaryFile)
	orig, _ := os.ReadFile(sum)
	mse := strconvG(fin.Consensus.MSE)
	if !bytes.Contains(orig, []byte(mse)) {
		t.Fatalf("summary.csv lacks the MSE %s:\n%s", mse, orig)
	}
	_ = os.WriteFile(sum, bytes.Replace(orig, []byte(mse), []byte("0.5"), 1), 0o644)
	if err := rundir.Verify(dir, c.Nodes, c.FinalRounds); err == nil || !strings.Contains(err.Error(), "consensus error") {
		t.Errorf("an edited summary: %v", err)
	}
	_ = os.WriteFile(sum, orig, 0o644)
	rounds := filepath.Join(dir, rundir.RoundsFile)
	b, _ := os.ReadFile(rounds)
	_ = os.WriteFile(rounds, b[:bytes.LastIndexByte(b[:len(b)-1], '\n')+1], 0o644)
	if err := rundir.Verify(dir, c.Nodes, c.FinalRounds); err == nil {
		t.Error("a rounds.jsonl cut short passed")
	}
}

func strconvG(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
