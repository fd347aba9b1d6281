package rundir

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/metrics"
)

// round is round r of a two-node run: node 1 Byzantine, evaluated every
// other round, node 0's local accuracy acc.
func round(r int, acc float64) *metrics.Round {
	return &metrics.Round{Round: r, Evaluated: r%2 == 1, HonestLocalAcc: acc, DeltaMax: 0.25,
		Nodes: []metrics.NodeRound{{Node: 0, LocalAcc: acc, Evaluated: r%2 == 1}, {Node: 1, Byzantine: true}}}
}

func spec(resume int) Spec {
	m := NewManifest("tiny", 7, "seeded")
	m.ConfigHash = "abc"
	return Spec{Config: []byte("name = \"tiny\"\n"), Manifest: m, Rounds: 4, FinalRounds: 2, Edges: true, Resume: resume}
}

// writeRun writes rounds 0..n-1 (round r's accuracy accs[r]) and closes
// the run with err.
func writeRun(t *testing.T, dir string, s Spec, accs []float64, runErr error) (Final, error) {
	t.Helper()
	w, err := Create(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	for r, a := range accs {
		rd := round(r, a)
		rd.Live = &metrics.Live{Weights: []map[int]float64{{0: 0.5, 1: 0.5}, nil}}
		if err := w.Round(rd); err != nil {
			w.Close(err)
			return Final{}, err
		}
		w.Timing(metrics.Timing{Round: r})
	}
	return w.Close(runErr)
}

func read(t *testing.T, dir string, names ...string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = b
	}
	return out
}

// A run's files: the records read back as written, the final metrics the
// mean of the last two evaluated rounds (rounds 1 and 3), the summary
// read back equal; Previous then sees a finished run.
func TestWriterAndReaders(t *testing.T) {
	dir := t.TempDir()
	fin, err := writeRun(t, dir, spec(0), []float64{0.1, 0.2, 0.3, 0.6}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Final{HonestLocalAcc: (0.2 + 0.6) / 2, DeltaMax: 0.25, Rounds: 4, DivergedRound: -1}
	if fin != want {
		t.Errorf("final %+v, want %+v", fin, want)
	}
	if got, ok := ReadFinal(dir); !ok || got != want {
		t.Errorf("summary read back %+v, %v", got, ok)
	}
	rounds, err := ReadRounds(dir)
	if err != nil || len(rounds) != 4 || rounds[3].HonestLocalAcc != 0.6 || rounds[3].Nodes != nil {
		t.Fatalf("rounds %v, %v", rounds, err)
	}
	nodes, err := ReadNodes(dir)
	if err != nil || len(nodes) != 8 || nodes[6].Round != 3 || nodes[6].LocalAcc != 0.6 || !nodes[7].Byzantine {
		t.Fatalf("nodes %v, %v", nodes, err)
	}
	last, recs, err := LastRound(dir)
	if err != nil || last != 3 || len(recs) != 2 || recs[0].LocalAcc != 0.6 {
		t.Errorf("last round %d %v, %v", last, recs, err)
	}
	var honest []int
	if err := EachHonestNode(dir, "local_acc", func(n *metrics.NodeRound) { honest = append(honest, n.Node) }); err != nil || len(honest) != 4 {
		t.Errorf("honest records of nodes %v, %v", honest, err)
	}
	edges, err := ReadEdges(dir)
	if err != nil || len(edges) != 4 || len(edges[0].Edges) != 2 {
		t.Errorf("edges %v, %v", edges, err)
	}
	if n, err := Previous(dir, "abc", 4, false); n != Finished || err != nil {
		t.Errorf("Previous of a finished run: %d, %v", n, err)
	}
	man, err := ReadManifest(dir)
	if err != nil || man.Rounds != 4 || man.End.IsZero() || man.ConfigHash != "abc" {
		t.Errorf("manifest %+v, %v", man, err)
	}
}

// An interrupted run (no summary, a torn last line) resumes after its
// complete rounds; replaying them unchanged ends with the files of an
// uninterrupted run, a replayed round that differs is refused.
func TestResume(t *testing.T) {
	accs := []float64{0.1, 0.2, 0.3, 0.6}
	whole := t.TempDir()
	if _, err := writeRun(t, whole, spec(0), accs, nil); err != nil {
		t.Fatal(err)
	}
	files := []string{MetricsFile, RoundsFile, TimingsFile, EdgesFile, SummaryFile}
	want := read(t, whole, files...)

	cut := t.TempDir()
	if _, err := writeRun(t, cut, spec(0), accs[:3], errors.New("interrupted")); err == nil {
		t.Fatal("an interrupted run closed without its error")
	}
	if Has(cut, SummaryFile) {
		t.Fatal("an interrupted run wrote its summary")
	}
	// Round 2's aggregate line torn: rounds 0 and 1 are complete.
	b := read(t, cut, RoundsFile)[RoundsFile]
	if err := os.WriteFile(filepath.Join(cut, RoundsFile), b[:len(b)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := Previous(cut, "abc", 4, false)
	if err != nil || n != 2 {
		t.Fatalf("Previous: %d, %v; want 2 complete rounds", n, err)
	}
	if _, err := writeRun(t, cut, spec(n), accs, nil); err != nil {
		t.Fatal(err)
	}
	for name, w := range want {
		if got := read(t, cut, name)[name]; !bytes.Equal(got, w) {
			t.Errorf("%s of the resumed run:\n%s\nwant\n%s", name, got, w)
		}
	}
	if man, _ := ReadManifest(cut); len(man.Resumed) != 1 {
		t.Errorf("manifest resumed %v, want one time", man.Resumed)
	}

	// A replayed round that recomputes differently is refused.
	bad := t.TempDir()
	if _, err := writeRun(t, bad, spec(0), accs[:2], errors.New("interrupted")); err == nil {
		t.Fatal("no error")
	}
	_, err = writeRun(t, bad, spec(2), []float64{0.1, 0.25}, nil)
	if err == nil || !strings.Contains(err.Error(), "round 1 of node 0 recomputes differently") {
		t.Errorf("a replay that differs: %v", err)
	}
}

// Previous refuses another config's directory (or one without a
// manifest) unless forced, and force removes the run files only.
func TestPreviousOtherConfig(t *testing.T) {
	dir := t.TempDir()
	if n, err := Previous(dir, "abc", 4, false); n != 0 || err != nil {
		t.Errorf("an empty directory: %d, %v", n, err)
	}
	if _, err := writeRun(t, dir, spec(0), []float64{0.1}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Previous(dir, "other", 4, false); !errors.Is(err, ErrOtherConfig) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("another config: %v", err)
	}
	if _, _, err := FinishedRun(dir, "other"); !errors.Is(err, ErrOtherConfig) {
		t.Errorf("FinishedRun of another config: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := Previous(dir, "other", 4, true); n != 0 || err != nil {
		t.Fatalf("forced: %d, %v", n, err)
	}
	if Has(dir, MetricsFile) || Has(dir, ManifestFile) || !Has(dir, "notes.txt") {
		t.Error("force removed the wrong files")
	}
	if err := os.WriteFile(filepath.Join(dir, MetricsFile), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Previous(dir, "abc", 4, false); !errors.Is(err, ErrOtherConfig) {
		t.Errorf("run files without a manifest: %v", err)
	}
}

// summary.csv: the privacy and audit columns only when a row has them
// (empty cells for the rows that do not), floats in shortest form.
func TestSummaryColumns(t *testing.T) {
	dir := t.TempDir()
	rows := []SummaryRow{
		{Name: "a", Seed: 1, Params: map[string]string{"k": "x"}, Final: Final{HonestLocalAcc: 0.5, Rounds: 3, DivergedRound: -1,
			Privacy: &metrics.PrivacyRound{HonestMaxEpsilon: 2, HonestMeanEpsilon: 1.5, Delta: 1e-5}}},
		{Name: "b", Seed: 2, Params: map[string]string{"k": "y"}, Final: Final{HonestLocalAcc: 0.25, Rounds: 3, DivergedRound: 1, Diverged: 2}},
	}
	if err := WriteSummary(dir, []string{"k"}, rows); err != nil {
		t.Fatal(err)
	}
	want := "name,seed,k,final_honest_local_acc,final_honest_global_acc,final_all_acc,final_honest_loss,final_delta_max,final_mean_byz_weight,rounds,diverged_round,diverged_nodes,final_honest_max_epsilon,final_honest_mean_epsilon,final_delta\n" +
		"a,1,x,0.5,0,0,0,0,0,3,-1,0,2,1.5,1e-05\n" +
		"b,2,y,0.25,0,0,0,0,0,3,1,2,,,\n"
	if got := read(t, dir, SummaryFile)[SummaryFile]; string(got) != want {
		t.Errorf("summary.csv:\n%s\nwant\n%s", got, want)
	}
	if _, ok := ReadFinal(dir); ok {
		t.Error("a sweep's summary read as one run's")
	}
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSummary(dir); err == nil {
		t.Error("an empty summary.csv read without error")
	}
}

// Checkpoints finds the index file's directories down to three levels
// below the run directory, not deeper.
func TestCheckpoints(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{ModelDir(0), ModelDir(1), "cluster/node-2.state", "a/b/c/d"} {
		p := filepath.Join(dir, d)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "index.json"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Checkpoints(dir, "index.json")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "cluster/node-2.state"), filepath.Join(dir, "models/node-0"), filepath.Join(dir, "models/node-1")}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("checkpoints %v, want %v", got, want)
	}
}
