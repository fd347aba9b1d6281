package experiment

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/rundir"
)

// TestShardsPartition: for every count, the shards' runs are disjoint and
// together every run, each in Expand order.
func TestShardsPartition(t *testing.T) {
	for _, runs := range []int{0, 1, 5, 12, 48} {
		for n := 1; n <= 7; n++ {
			seen := make([]int, runs)
			for i := range n {
				ks := ShardRuns(runs, Shard{Index: i, Count: n})
				if !slices.IsSorted(ks) {
					t.Errorf("%d runs, shard %d/%d: %v not in order", runs, i, n, ks)
				}
				for _, k := range ks {
					seen[k]++
					if k%n != i {
						t.Errorf("run %d in shard %d/%d", k, i, n)
					}
				}
			}
			for k, c := range seen {
				if c != 1 {
					t.Errorf("%d runs, %d shards: run %d in %d shards", runs, n, k, c)
				}
			}
		}
	}
	if got := ShardRuns(3, Shard{}); len(got) != 3 {
		t.Errorf("the zero shard owns %v, want every run", got)
	}
}

func TestParseShard(t *testing.T) {
	for text, want := range map[string]Shard{"0/4": {0, 4}, "3/4": {3, 4}, " 1 / 2 ": {1, 2}, "0/1": {0, 1}} {
		got, err := ParseShard(text)
		if err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for _, text := range []string{"4/4", "-1/4", "1", "a/b", "1/0", "", "1/2/3"} {
		_, err := ParseShard(text)
		if err == nil || !strings.Contains(err.Error(), "want I/N") {
			t.Errorf("ParseShard(%q): %v, want an error naming the form I/N", text, err)
		}
	}
}

func TestShardFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cases := []struct {
		env   func(string) string
		count int
		want  Shard
		err   string
	}{
		{env(EnvSlurmTaskID, "2", EnvSlurmTaskCount, "4"), 0, Shard{2, 4}, ""},
		{env(EnvSlurmTaskID, "4", EnvSlurmTaskCount, "4", EnvSlurmTaskMin, "1"), 0, Shard{3, 4}, ""},
		{env(EnvSlurmTaskID, "4", EnvSlurmTaskCount, "4"), 0, Shard{}, "want 0 ≤ index < count"},
		{env(EnvSlurmTaskID, "1"), 0, Shard{}, EnvSlurmTaskCount},
		{env(EnvSlurmTaskID, "1"), 3, Shard{1, 3}, ""},
		{env(EnvSlurmTaskID, "x", EnvSlurmTaskCount, "4"), 0, Shard{}, "not an integer"},
		{env(EnvK8sIndex, "5"), 10, Shard{5, 10}, ""},
		{env(EnvK8sIndex, "5", EnvShardCount, "8"), 0, Shard{5, 8}, ""},
		{env(EnvK8sIndex, "5"), 0, Shard{}, EnvShardCount},
		{env(), 0, Shard{}, "neither SLURM_ARRAY_TASK_ID"},
	}
	for i, c := range cases {
		got, err := ShardFromEnv(c.env, c.count)
		if c.err == "" && (err != nil || got != c.want) {
			t.Errorf("case %d: %v, %v; want %v", i, got, err, c.want)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("case %d: %v, want an error containing %q", i, err, c.err)
		}
	}
}

// TestMergeShards is the sharded sweep's end-to-end check: 3 shards run into one
// directory (a shared file system) and 3 shards into three (none) merge into
// a summary.csv byte for byte the unsharded sweep's; a merge with a shard
// missing names its runs and writes no summary.
func TestMergeShards(t *testing.T) {
	c := tinyConfig(t, `
[adversary]
attack = "gaussian"
[sweep]
seeds = [1, 2]
[sweep.grid]
"adversary.fraction" = [0.0, 0.25]
[strategy]
name = "robust"
`)
	c.Rounds, c.Data.Samples, c.Evaluation.GlobalTest = 2, 240, 100
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	whole := t.TempDir()
	if _, err := RunSweep(ctx, c, whole, nil); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(whole, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	runs, _, _ := c.Expand()
	const n = 3

	shared := t.TempDir()
	for i := range n {
		var ran []int
		_, err := RunSweepWith(ctx, c, shared, SweepOptions{Shard: Shard{i, n}, Progress: func(run, _ int, _ config.SweepRun, round, _ int) {
			if round == 1 {
				ran = append(ran, run)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ran, ShardRuns(len(runs), Shard{i, n})) {
			t.Errorf("shard %d/%d ran %v", i, n, ran)
		}
		if _, err := os.Stat(filepath.Join(shared, rundir.SummaryFile)); err == nil {
			t.Errorf("shard %d/%d wrote the sweep's summary", i, n)
		}
		if i == n-2 {
			// Shard n-1 not run yet: the merge names its runs.
			_, err := MergeSweep(c, shared, nil)
			var miss *MissingRunsError
			if !errors.As(err, &miss) || !slices.Equal(miss.Missing, ShardRuns(len(runs), Shard{n - 1, n})) {
				t.Fatalf("merge before the last shard: %v", err)
			}
			if !strings.Contains(err.Error(), runs[n-1].Dir) {
				t.Errorf("the error does not name the missing run %s: %v", runs[n-1].Dir, err)
			}
			if _, err := os.Stat(filepath.Join(shared, rundir.SummaryFile)); err == nil {
				t.Errorf("an incomplete merge wrote a summary")
			}
		}
	}
	if _, err := MergeSweep(c, shared, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(shared, rundir.SummaryFile)); !bytes.Equal(got, want) {
		t.Errorf("merged summary (one directory):\n%s\nunsharded:\n%s", got, want)
	}

	// Shards that wrote into directories of their own: each shard's runs
	// moved out of the shared one (running them again would give the same
	// files).
	var dirs []string
	for i := range n {
		d := t.TempDir()
		for _, k := range ShardRuns(len(runs), Shard{i, n}) {
			dst := filepath.Join(d, runs[k].Dir)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(shared, runs[k].Dir), dst); err != nil {
				t.Fatal(err)
			}
		}
		dirs = append(dirs, d)
	}
	out := filepath.Join(t.TempDir(), "merged")
	if _, err := MergeSweep(c, out, dirs); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(out, rundir.SummaryFile)); !bytes.Equal(got, want) {
		t.Errorf("merged summary (%d directories):\n%s\nunsharded:\n%s", n, got, want)
	}
	for _, r := range runs {
		for _, f := range []string{rundir.MetricsFile, rundir.RoundsFile, rundir.SummaryFile} {
			a, _ := os.ReadFile(filepath.Join(whole, r.Dir, f))
			b, err := os.ReadFile(filepath.Join(out, r.Dir, f))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s/%s differs from the unsharded run's (%v)", r.Dir, f, err)
			}
		}
	}

	// A run directory of another config is refused, not mixed in.
	other := c
	other.Rounds = 1
	if _, err := MergeSweep(other, out, nil); !errors.Is(err, rundir.ErrOtherConfig) {
		t.Errorf("merge over another config's runs: %v, want ErrOtherConfig", err)
	}
}
