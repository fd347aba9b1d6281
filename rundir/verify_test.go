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

// summarized is round r of a three-node run (node 2 Byzantine), every
// round evaluated, its aggregates those of its node records.
func summarized(r int) *metrics.Round {
	a := 0.125 * float64(r+1)
	rd := &metrics.Round{Round: r, Evaluated: true, Nodes: []metrics.NodeRound{
		{Node: 0, Evaluated: true, LocalAcc: a, GlobalAcc: a / 2, LocalLoss: 1, ByzWeight: 0.25, BytesSent: 100},
		{Node: 1, Evaluated: true, LocalAcc: a + 0.25, GlobalAcc: a, LocalLoss: 2, ByzWeight: 0.5, BytesSent: 100},
		{Node: 2, Byzantine: true, Evaluated: true, LocalAcc: 0.5, BytesSent: 100}}}
	rd.Summarize()
	return rd
}

// verifiedRun writes a whole run of rounds rounds into a new directory
// (finished unless interrupted) and returns it.
func verifiedRun(t *testing.T, rounds int, interrupted bool) string {
	t.Helper()
	dir := t.TempDir()
	s := spec(0)
	s.Rounds = rounds
	w, err := Create(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	for r := range rounds {
		if err := w.Round(summarized(r)); err != nil {
			t.Fatal(err)
		}
	}
	var stop error
	if interrupted {
		stop = errors.New("interrupted")
	}
	if _, err := w.Close(stop); err != nil && !interrupted {
		t.Fatal(err)
	}
	return dir
}

// edit rewrites dir's file name with f.
func edit(t *testing.T, dir, name string, f func([]byte) []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, f(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// dropLastLine removes a file's last whole line.
func dropLastLine(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return b[:bytes.LastIndexByte(b, '\n')+1]
}

// A run directory as the writer left it verifies; cut short, or with a
// line or the summary changed, it does not, and the error names the file
// and the line. An interrupted run's torn last line is not damage.
func TestVerify(t *testing.T) {
	dir := verifiedRun(t, 4, false)
	if err := Verify(dir, 3, 2); err != nil {
		t.Fatalf("a whole run: %v", err)
	}
	for _, c := range []struct {
		name, file string
		change     func([]byte) []byte
		want       string
	}{
		{"node lines of the last round cut", MetricsFile, func(b []byte) []byte { return dropLastLine(dropLastLine(dropLastLine(b))) }, "metrics.jsonl line 9 ends with round 2, but rounds.jsonl has 4 rounds"},
		{"one node line cut", MetricsFile, dropLastLine, "metrics.jsonl line 10 begins round 3, which has 2 node lines, want 3"},
		{"torn last node line", MetricsFile, func(b []byte) []byte { return b[:len(b)-5] }, "metrics.jsonl line 12 is not a whole node record"},
		{"last round line cut", RoundsFile, dropLastLine, "rounds.jsonl line 3 holds 3 rounds, summary.csv counts 4"},
		{"a node's accuracy edited", MetricsFile, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"local_acc":0.625,`), []byte(`"local_acc":0.875,`), 1)
		}, "metrics.jsonl line 7 begins round 2, whose node lines (7–9) give honest_local_acc = 0.625, but rounds.jsonl line 3 says 0.5"},
		{"a round's accuracy edited", RoundsFile, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"honest_local_acc":0.25,`), []byte(`"honest_local_acc":0.95,`), 1)
		}, "metrics.jsonl line 1 begins round 0, whose node lines (1–3) give honest_local_acc = 0.25, but rounds.jsonl line 1 says 0.95"},
		{"rounds out of order", RoundsFile, func(b []byte) []byte { return bytes.Replace(b, []byte(`"round":1,`), []byte(`"round":2,`), 1) }, "rounds.jsonl line 2 is round 2, want 1"},
		{"summary edited", SummaryFile, func(b []byte) []byte {
			return bytes.Replace(b, []byte(",0.5625,"), []byte(",0.925,"), 1)
		}, "summary.csv line 2 final_honest_local_acc = 0.925, but the mean of the last 2 evaluated rounds of rounds.jsonl is 0.5625"},
		{"manifest corrupt", ManifestFile, func(b []byte) []byte { return b[:len(b)/2] }, "manifest.json does not decode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := verifiedRun(t, 4, false)
			edit(t, d, c.file, c.change)
			err := Verify(d, 3, 2)
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), filepath.Join(d, c.want)) {
				t.Fatalf("got %v\nwant ErrDamaged with %q", err, filepath.Join(d, c.want))
			}
		})
	}

	// An interrupted run: a torn last line is where it stopped; a bad line
	// before it is damage.
	d := verifiedRun(t, 3, true)
	edit(t, d, MetricsFile, func(b []byte) []byte { return append(b, `{"round":3,"node":0,"byz`...) })
	edit(t, d, RoundsFile, func(b []byte) []byte { return append(b, `{"round":3,"eval`...) })
	if err := Verify(d, 3, 2); err != nil {
		t.Errorf("an interrupted run with torn last lines: %v", err)
	}
	edit(t, d, MetricsFile, func(b []byte) []byte {
		return bytes.Replace(b, []byte(`{"round":1,"node":1`), []byte(`{"round":1,"node":1,,`), 1)
	})
	if err := Verify(d, 3, 2); err == nil || !strings.Contains(err.Error(), MetricsFile+" line 5 is not a whole node record") {
		t.Errorf("an interrupted run with a bad line inside: %v", err)
	}
}
