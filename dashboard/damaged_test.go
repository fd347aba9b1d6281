package dashboard

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/rundir"
)

// trellis serve over a finished run whose metrics.jsonl was cut short
// shows the run with the damage (the file and the line) as its error, and
// Warnings lists it; an intact run has neither.
func TestServeShowsDamagedRuns(t *testing.T) {
	root := t.TempDir()
	good, bad := filepath.Join(root, "good"), filepath.Join(root, "bad")
	if _, err := runTiny(t, tinyConfig(t, 3), good); err != nil {
		t.Fatal(err)
	}
	if err := rundir.Copy(good, bad); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(bad, rundir.MetricsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	if err := os.WriteFile(p, b[:bytes.LastIndexByte(b, '\n')+1], 0o644); err != nil {
		t.Fatal(err)
	}
	s := New("damaged")
	if n, err := s.LoadDirs(root); err != nil || n != 2 {
		t.Fatalf("LoadDirs: %d runs, %v", n, err)
	}
	want := filepath.Join(bad, rundir.MetricsFile) + " line 13 begins round 2, which has 5 node lines, want 6"
	if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], want) {
		t.Errorf("warnings %q, want one with %q", w, want)
	}
	for i := range 2 {
		info, _ := s.Run(i)
		if damaged := info.Dir == "bad"; damaged != strings.Contains(info.Error, want) {
			t.Errorf("run %s: error %q", info.Dir, info.Error)
		}
	}
}
