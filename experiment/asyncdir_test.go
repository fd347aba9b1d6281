package experiment

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/sim"
)

const asyncSteps = "[strategy]\nname = \"async_mean\"\n[timing]\nmode = \"async\"\nstragglers = 0.25\nslowdown = 3\n" +
	"latency = \"uniform\"\nlatency_a = 0.1\nlatency_b = 0.4\n"

// An asynchronous run writes one line per node step to steps.jsonl, at the
// virtual times the seed's clock gives (node i's k-th step ends at
// (k+1)·its step time, recomputed here from sim.NewSchedule), and the
// manifest records the clock: the default window (the median step, 1,
// times max(1, eval_every)) and the synchronous round (the slowest
// node's step plus its slowest out-link). rundir.Verify checks the steps
// against the windows.
func TestAsyncRunWritesSteps(t *testing.T) {
	c := tinyConfig(t, asyncSteps)
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := RunToDirWith(context.Background(), c, dir, RunOptions{Data: ptr(loadMNIST(t))}); err != nil {
		t.Fatal(err)
	}
	if err := rundir.Verify(dir, c.Nodes, c.FinalRounds); err != nil {
		t.Fatal(err)
	}
	steps, err := rundir.ReadSteps(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != c.Nodes*c.Rounds {
		t.Fatalf("%d steps, want nodes × rounds = %d", len(steps), c.Nodes*c.Rounds)
	}
	t0 := c.Timing
	sched, err := sim.NewSchedule(sim.Async{Compute: sim.Dist{Kind: t0.Compute, A: t0.ComputeA, B: t0.ComputeB},
		Latency: sim.Dist{Kind: t0.Latency, A: t0.LatencyA, B: t0.LatencyB}, Stragglers: t0.Stragglers, Slowdown: t0.Slowdown}, c.Nodes, c.Seed)
	if err != nil {
		t.Fatal(err)
	}
	slowest := 0.0
	for _, s := range sched.Step {
		slowest = max(slowest, s)
	}
	for _, s := range steps {
		if want := float64(s.Step+1) * sched.Step[s.Node]; math.Abs(s.Time-want) > 1e-9 {
			t.Errorf("node %d step %d ends at %v, want %v", s.Node, s.Step, s.Time, want)
		}
		if s.Inputs > 0 && s.MaxStaleness > s.Step {
			t.Errorf("node %d step %d: staleness %d above its own step", s.Node, s.Step, s.MaxStaleness)
		}
	}
	man, err := rundir.ReadManifest(dir)
	if err != nil || man.Async == nil {
		t.Fatalf("manifest async = %v, %v", man.Async, err)
	}
	// constant compute 1, links of 0.1–0.4: a round lasts the 3× slower
	// straggler's step and one of its links.
	if man.Async.Window != float64(max(1, c.EvalEvery)) || !(man.Async.SyncRound > slowest+0.1-1e-12 && man.Async.SyncRound <= slowest+0.4) {
		t.Errorf("clock %+v, slowest step %v", *man.Async, slowest)
	}
	if man.Records[rundir.StepsFile] == "" {
		t.Error("the finished run's manifest keeps no digest of steps.jsonl")
	}
}

// An interrupted asynchronous run (its last rounds and steps gone, a torn
// step line) resumes to the files of an uninterrupted one; a step line on
// file that the run does not recompute is refused.
func TestAsyncResumeSteps(t *testing.T) {
	c := tinyConfig(t, asyncSteps+"window = 1\n")
	o := RunOptions{Data: ptr(loadMNIST(t))}
	full := filepath.Join(t.TempDir(), "full")
	if _, err := RunToDirWith(context.Background(), c, full, o); err != nil {
		t.Fatal(err)
	}
	cut := func(dir string, edit func(steps []string) []string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{rundir.ConfigFile, rundir.ManifestFile, rundir.TimingsFile} {
			b, _ := os.ReadFile(filepath.Join(full, name))
			os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
		keep := func(name string, n func(lines []string) int) {
			b, _ := os.ReadFile(filepath.Join(full, name))
			lines := strings.SplitAfter(string(b), "\n")
			if name == rundir.StepsFile {
				lines = edit(lines)
			}
			os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines[:n(lines)], "")), 0o644)
		}
		keep(rundir.RoundsFile, func([]string) int { return 2 })
		keep(rundir.MetricsFile, func([]string) int { return 2 * c.Nodes })
		keep(rundir.StepsFile, func(l []string) int { return len(l) })
	}
	resumed := filepath.Join(t.TempDir(), "resumed")
	cut(resumed, func(l []string) []string { return append(l[:5:5], l[5][:len(l[5])/2]) })
	if _, err := RunToDirWith(context.Background(), c, resumed, o); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{rundir.StepsFile, rundir.MetricsFile, rundir.RoundsFile} {
		a, _ := os.ReadFile(filepath.Join(full, name))
		b, _ := os.ReadFile(filepath.Join(resumed, name))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs after resume", name)
		}
	}
	if err := rundir.Verify(resumed, c.Nodes, c.FinalRounds); err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(t.TempDir(), "changed")
	cut(changed, func(l []string) []string {
		l[2] = strings.Replace(l[2], `"inputs":`, `"inputs":1`, 1)
		return l[:4]
	})
	_, err := RunToDirWith(context.Background(), c, changed, o)
	if err == nil || !strings.Contains(err.Error(), "recomputes differently") {
		t.Fatalf("a changed step on file: %v", err)
	}
}

// A synchronous run writes no steps.jsonl.
func TestSyncRunWritesNoSteps(t *testing.T) {
	c := tinyConfig(t, "")
	dir := t.TempDir()
	if _, err := RunToDirWith(context.Background(), c, dir, RunOptions{Data: ptr(loadMNIST(t))}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.StepsFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("steps.jsonl of a run in rounds: %v", err)
	}
	if man, _ := rundir.ReadManifest(dir); man.Async != nil {
		t.Errorf("manifest of a run in rounds has a clock %+v", *man.Async)
	}
}
