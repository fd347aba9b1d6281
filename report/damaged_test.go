package report

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/rundir"
)

// A finished run whose record files were cut short or edited, or whose
// manifest no longer decodes, is refused by the report with the file and
// the line, not reported as if whole.
func TestResultsRefuseDamagedRuns(t *testing.T) {
	out := sweepInto(t, "", func(c *config.Config) { c.Model.Kind = "logreg" })
	found, _ := filepath.Glob(filepath.Join(out, "*", rundir.SummaryFile))
	if len(found) != 1 {
		t.Fatalf("the run's directory under %s: %v", out, found)
	}
	whole := filepath.Dir(found[0])
	if _, err := Results(whole); err != nil {
		t.Fatalf("the whole run: %v", err)
	}
	cut := func(b []byte) []byte { // the last line gone
		b = bytes.TrimSuffix(b, []byte("\n"))
		return b[:bytes.LastIndexByte(b, '\n')+1]
	}
	for _, c := range []struct {
		file   string
		change func([]byte) []byte
		want   string
	}{
		{rundir.MetricsFile, cut, rundir.MetricsFile + " line 9 begins round 2, which has 3 node lines, want 4"},
		{rundir.RoundsFile, cut, rundir.RoundsFile + " line 2 holds 2 rounds, summary.csv counts 3"},
		{rundir.MetricsFile, func(b []byte) []byte { return bytes.Replace(b, []byte(`"local_acc":`), []byte(`"local_acc":1`), 1) }, rundir.MetricsFile + " line 1 begins round 0, whose node lines (1–4) give honest_local_acc"},
		{rundir.ManifestFile, func(b []byte) []byte { return b[:len(b)/2] }, rundir.ManifestFile + " does not decode"},
	} {
		dir := t.TempDir()
		if err := rundir.Copy(whole, dir); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, c.file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, c.change(b), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = Results(dir)
		if !errors.Is(err, rundir.ErrDamaged) || !strings.Contains(err.Error(), filepath.Join(dir, c.want)) {
			t.Errorf("%s changed: %v\nwant an error with %q", c.file, err, c.want)
		}
	}
}
