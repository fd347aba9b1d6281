package experiment

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/trellis-fl/trellis/rundir"
)

// A config with [timing] mode = "async" runs through the run directory
// as trellis run does: one summary record per window of virtual time, the
// run verified, and the same metrics bytes with one worker and with two.
func TestAsyncRunToDir(t *testing.T) {
	run := func(workers string) []byte {
		c := tinyConfig(t, "[strategy]\nname = \"async_mean\"\n[run]\nworkers = "+workers+
			"\n[timing]\nmode = \"async\"\nstragglers = 0.25\nslowdown = 3\nlatency = \"uniform\"\nlatency_a = 0.1\nlatency_b = 0.4\nwindow = 1\n")
		dir := filepath.Join(t.TempDir(), "run")
		fin, err := RunToDirWith(context.Background(), c, dir, RunOptions{Data: ptr(loadMNIST(t))})
		if err != nil {
			t.Fatal(err)
		}
		// 3 steps of 1 at most 3× slower: the last ends by t = 9, in window 9 at the latest.
		if fin.Rounds < 3 || fin.Rounds > 10 || !(fin.HonestGlobalAcc > 0) {
			t.Fatalf("%d windows, final accuracy %v", fin.Rounds, fin.HonestGlobalAcc)
		}
		if err := rundir.Verify(dir, c.Nodes, c.FinalRounds); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, rundir.MetricsFile))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if a, b := run("1"), run("2"); !bytes.Equal(a, b) {
		t.Fatal("one worker and two: other metrics")
	}
}

func ptr[T any](v T) *T { return &v }
