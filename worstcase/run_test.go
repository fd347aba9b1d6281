package worstcase

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
)

// tinySearch is a search small enough for a test: 6 nodes on a ring, one
// Byzantine, 2-round runs on 600 samples, two defences, three attacks
// (one with a parameter), two placements.
func tinySearch(t *testing.T) *Search {
	t.Helper()
	text := `
name = "tiny-worst"
nodes = 6
rounds = 2
final_rounds = 1
[data]
samples = 600
[model]
hidden = [8]
[topology]
kind = "ring"
[evaluation]
global_test = 200
[adversary]
fraction = 0.2
[worst_case]
search_rounds = 1
grid = 3
tolerance = 0.3
refine = 1
confirm = 1
attacks = ["alie", "sign_flip", "label_flip"]
placements = ["random", "kappa_max"]
[worst_case.defences.mean]
"strategy.name" = "robust"
"strategy.rule" = "mean"
[worst_case.defences.median]
"strategy.name" = "robust"
"strategy.rule" = "median"
`
	if testing.Short() {
		text = strings.Replace(text, `attacks = ["alie", "sign_flip", "label_flip"]`, `attacks = ["alie", "sign_flip"]`, 1)
		text = strings.Replace(text, `placements = ["random", "kappa_max"]`, `placements = ["kappa_max"]`, 1)
		text = strings.Replace(text, "tolerance = 0.3", "tolerance = 0.5", 1)
		text = strings.Replace(text, `[worst_case.defences.mean]
"strategy.name" = "robust"
"strategy.rule" = "mean"`, "", 1)
	}
	c, err := config.Parse([]byte(text), "tiny.toml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestResumeAndShards: a search interrupted after some runs and rerun
// reruns none of the runs it had finished and ends with the tables of an
// uninterrupted search; three shards sharing a directory, and three
// shards in directories of their own merged stage by stage, give the
// same tables too.
func TestResumeAndShards(t *testing.T) {
	ctx := context.Background()
	whole := t.TempDir()
	s := tinySearch(t)
	res, err := s.Run(ctx, whole, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := s.Markdown(res)
	for _, dr := range s.Space.Defences {
		if !strings.Contains(want, "| "+dr.Name+" |") {
			t.Fatalf("table without a row for %s:\n%s", dr.Name, want)
		}
	}
	est := s.Estimate()
	n := 0
	for _, dr := range res.Defences {
		n += dr.Runs
	}
	if n > est.Total() || est.Grid+len(res.Defences)*len(s.Space.ConfirmSeeds) > n {
		t.Errorf("the search took %d runs; the estimate says at least %d, at most %d", n, est.Grid, est.Total())
	}

	// Interrupted: cancelled once 3 runs have finished.
	part := t.TempDir()
	s1 := tinySearch(t)
	c1, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var first []string
	_, err = s1.Run(c1, part, Options{Started: func(dir string) {
		mu.Lock()
		defer mu.Unlock()
		first = append(first, dir)
		if len(first) == 4 {
			cancel()
		}
	}})
	cancel()
	if err == nil {
		t.Fatal("an interrupted search returned no error")
	}
	finished := first[:3]
	var second []string
	s2 := tinySearch(t)
	res2, err := s2.Run(ctx, part, Options{Started: func(dir string) { second = append(second, dir) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range finished {
		if slices.Contains(second, d) {
			t.Errorf("run %s, finished before the interrupt, ran again", d)
		}
	}
	if got := s2.Markdown(res2); got != want {
		t.Errorf("resumed search:\n%s\nuninterrupted:\n%s", got, want)
	}

	// Shards in one directory: each runs its share of the stage and stops
	// while the others' runs are missing; rerunning them finishes it.
	const shards = 3
	shared := t.TempDir()
	var sres *Result
	for round := 0; sres == nil; round++ {
		if round > 50 {
			t.Fatal("the sharded search does not finish")
		}
		for i := range shards {
			r, err := tinySearch(t).Run(ctx, shared, Options{Shard: experiment.Shard{Index: i, Count: shards}})
			var pe *PendingError
			if err != nil && !errors.As(err, &pe) {
				t.Fatal(err)
			}
			if r != nil {
				sres = r
			}
		}
	}
	if got := s.Markdown(sres); got != want {
		t.Errorf("sharded search (one directory):\n%s\nunsharded:\n%s", got, want)
	}

	// Shards in directories of their own, merged after every stage into
	// out and run again from it.
	out := filepath.Join(t.TempDir(), "merged")
	dirs := make([]string, shards)
	for i := range dirs {
		dirs[i] = t.TempDir()
	}
	for round := 0; ; round++ {
		if round > 50 {
			t.Fatal("the merged search does not finish")
		}
		m, err := tinySearch(t).Merge(out, dirs)
		if err == nil {
			if got := s.Markdown(m); got != want {
				t.Errorf("merged search:\n%s\nunsharded:\n%s", got, want)
			}
			break
		}
		var pe *PendingError
		if !errors.As(err, &pe) {
			t.Fatal(err)
		}
		for i := range shards {
			// Each shard starts from the merged runs (a copy of out).
			if err := copyTree(out, dirs[i]); err != nil {
				t.Fatal(err)
			}
			_, err := tinySearch(t).Run(ctx, dirs[i], Options{Shard: experiment.Shard{Index: i, Count: shards}})
			if err != nil && !errors.As(err, &pe) {
				t.Fatal(err)
			}
		}
	}
}

// copyTree copies the files under src into dst (src may not exist yet).
func copyTree(src, dst string) error {
	if _, err := os.Stat(src); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}
