package experiment

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/rundir"
)

func tinyConfig(t *testing.T, extra string) config.Config {
	t.Helper()
	c, err := config.Parse([]byte(`
name = "tiny"
nodes = 4
rounds = 3
[data]
samples = 800
[model]
hidden = [16]
[evaluation]
global_test = 500
`+extra), "tiny.toml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkComplete parses every line of every JSON-lines file under dir.
func checkComplete(t *testing.T, dir string) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || filepath.Ext(p) != ".jsonl" {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var v map[string]any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				t.Errorf("%s: incomplete line %q", p, sc.Text())
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRunDirectoryIsReproducibleAcrossProcs(t *testing.T) {
	c := tinyConfig(t, "")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first []byte
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		dir := t.TempDir()
		fin, err := RunToDir(context.Background(), c, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fin.Rounds != 3 || fin.HonestGlobalAcc <= 0 {
			t.Errorf("final metrics %+v", fin)
		}
		for _, f := range []string{rundir.ConfigFile, rundir.ManifestFile, rundir.MetricsFile, rundir.RoundsFile, rundir.TimingsFile, rundir.SummaryFile} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("missing %s: %v", f, err)
			}
		}
		b, _ := os.ReadFile(filepath.Join(dir, rundir.MetricsFile))
		if first == nil {
			first = b
		} else if string(b) != string(first) {
			t.Error("metrics.jsonl differs between GOMAXPROCS 1 and 2")
		}
		checkComplete(t, dir)
		// The resolved config is itself a valid config.
		if _, err := config.Load(filepath.Join(dir, rundir.ConfigFile)); err != nil {
			t.Errorf("written config does not load: %v", err)
		}
	}
}

// TestSweepResumes: a sweep stopped
// mid-run finishes on restart without redoing finished runs, and every file
// is complete.
func TestSweepResumes(t *testing.T) {
	c := tinyConfig(t, `
[adversary]
attack = "gaussian"
[sweep]
seeds = [1, 2]
[sweep.grid]
"adversary.fraction" = [0.0, 0.25]
`)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	_, err := RunSweep(ctx, c, out, func(run, runs int, r config.SweepRun, round, rounds int) {
		if run == 2 && round == 1 {
			cancel() // stop in the middle of the third run
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted sweep: %v", err)
	}
	runs, _, _ := c.Expand()
	if len(runs) != 4 {
		t.Fatalf("%d runs, want 4", len(runs))
	}
	checkComplete(t, out)
	stamps := map[string]int64{}
	for i, r := range runs {
		_, err := os.Stat(filepath.Join(out, r.Dir, rundir.SummaryFile))
		if (i < 2) != (err == nil) {
			t.Errorf("run %d (%s): summary present = %v after the interruption", i, r.Dir, err == nil)
		}
		if st, err := os.Stat(filepath.Join(out, r.Dir, rundir.MetricsFile)); err == nil {
			stamps[r.Dir] = st.ModTime().UnixNano()
		}
	}
	var started []int
	res, err := RunSweep(context.Background(), c, out, func(run, runs int, r config.SweepRun, round, rounds int) {
		if round == 1 {
			started = append(started, run)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(started) != 2 || started[0] != 2 || started[1] != 3 {
		t.Errorf("resumed sweep ran runs %v, want [2 3]", started)
	}
	for _, r := range runs[:2] {
		st, _ := os.Stat(filepath.Join(out, r.Dir, rundir.MetricsFile))
		if st.ModTime().UnixNano() != stamps[r.Dir] {
			t.Errorf("finished run %s was redone", r.Dir)
		}
	}
	checkComplete(t, out)
	if len(res.Fin) != 4 || res.Fin[3].Rounds != 3 {
		t.Errorf("sweep result %+v", res.Fin)
	}
	rows, err := rundir.ReadSummary(out)
	if err != nil || len(rows) != 4 || rows[3]["adversary.fraction"] != "0.25" {
		t.Errorf("sweep summary: %v %v", rows, err)
	}
	// The resumed run's edges.jsonl is that of an uninterrupted run.
	fresh := t.TempDir()
	if _, err := RunToDir(context.Background(), runs[2].Config, fresh, nil); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(fresh, rundir.EdgesFile))
	b, _ := os.ReadFile(filepath.Join(out, runs[2].Dir, rundir.EdgesFile))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("%s of the resumed run differs from an uninterrupted run's (%d and %d bytes)", rundir.EdgesFile, len(b), len(a))
	}
}
