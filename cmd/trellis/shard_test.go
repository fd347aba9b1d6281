package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinyToml is a config of a few seconds' runs.
func tinyToml(name string, nodes, rounds int, extra string) string {
	return fmt.Sprintf(`name = %q
nodes = %d
rounds = %d
[data]
samples = 240
[model]
hidden = [16]
[evaluation]
global_test = 100
`, name, nodes, rounds) + extra
}

var shardSweep = tinyToml("cli-shards", 4, 1, "[sweep]\nseeds = [1, 2, 3]\n")

// TestSweepShardAndMergeFlags: three shards given on the command line, one
// of them from a Slurm array's environment, then --merge; the merged
// summary is the unsharded sweep's; a merge before the last shard names
// the missing run.
func TestSweepShardAndMergeFlags(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "s.toml")
	if err := os.WriteFile(cfg, []byte(shardSweep), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "sharded")
	var so, se bytes.Buffer
	if err := run([]string{"sweep", cfg, "--shard", "0/3", "-q", "-o", out}, &so, &se); err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	if !strings.Contains(so.String(), "shard 0/3: 1 of the sweep's 3 runs") || !strings.Contains(so.String(), "--merge -o") {
		t.Errorf("shard output:\n%s", so.String())
	}
	t.Setenv("SLURM_ARRAY_TASK_ID", "2")
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "3")
	if err := run([]string{"sweep", cfg, "--shard", "auto", "-q", "-o", out}, &so, &se); err != nil {
		t.Fatalf("--shard auto: %v\n%s", err, se.String())
	}
	err := run([]string{"sweep", cfg, "--merge", "-q", "-o", out}, &so, &se)
	if err == nil || !strings.Contains(err.Error(), "1 of 3 runs") || !strings.Contains(err.Error(), "seed-2") {
		t.Errorf("merge with shard 1 missing: %v", err)
	}
	// Shard 1 into a directory of its own, merged from there.
	other := filepath.Join(dir, "elsewhere")
	if err := run([]string{"sweep", cfg, "--shard", "1/3", "-q", "-o", other}, &so, &se); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"sweep", cfg, "--merge", other, "-q", "-o", out}, &so, &se); err != nil {
		t.Fatalf("merge: %v\n%s", err, se.String())
	}
	whole := filepath.Join(dir, "whole")
	if err := run([]string{"sweep", cfg, "-q", "-o", whole}, &so, &se); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(out, "summary.csv"))
	b, _ := os.ReadFile(filepath.Join(whole, "summary.csv"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("merged summary:\n%s\nunsharded:\n%s", a, b)
	}
	if _, err := os.Stat(filepath.Join(out, "results.md")); err != nil {
		t.Errorf("the merge drew no results.md: %v", err)
	}
}

func TestShardFlagErrors(t *testing.T) {
	for args, want := range map[string]string{
		"sweep quickstart --shard 3/3":                          "want I/N with 0 ≤ I < N",
		"sweep quickstart --shard two":                          "want I/N with 0 ≤ I < N",
		"sweep quickstart --shard 0/2 --merge":                  "exclude each other",
		"sweep quickstart extra":                                "directories to merge go with --merge",
		"sweep quickstart --shard-count 4":                      "--shard-count goes with --shard auto",
		"slurm launch byzantine-sweep":                          "has a [sweep]",
		"k8s sweep quickstart":                                  "--image",
		"k8s launch quickstart --image i --claim c --name Bad_": "DNS label",
	} {
		var so, se bytes.Buffer
		err := run(strings.Fields(args), &so, &se)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("trellis %s: %v, want an error containing %q", args, err, want)
		}
	}
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	t.Setenv("JOB_COMPLETION_INDEX", "")
	var so, se bytes.Buffer
	if err := run([]string{"sweep", "quickstart", "--shard", "auto"}, &so, &se); err == nil || !strings.Contains(err.Error(), "SLURM_ARRAY_TASK_ID") {
		t.Errorf("--shard auto outside a job array: %v", err)
	}
}

// TestK8sCommands: the commands print a List that decodes, with the
// objects the scale tests check in depth.
func TestK8sCommands(t *testing.T) {
	for args, kinds := range map[string][]string{
		"k8s sweep byzantine-sweep --image trellis:1 --claim runs --shards 9":          {"ConfigMap", "Job"},
		"k8s launch quickstart --image trellis:1 --claim runs --namespace lab --cpu 1": {"ConfigMap", "Secret", "Service", "Service", "Job", "Job"},
	} {
		var so, se bytes.Buffer
		if err := run(strings.Fields(args), &so, &se); err != nil {
			t.Fatalf("trellis %s: %v\n%s", args, err, se.String())
		}
		var l struct {
			Items []struct {
				Kind string `json:"kind"`
			} `json:"items"`
		}
		if err := json.Unmarshal(so.Bytes(), &l); err != nil {
			t.Fatalf("trellis %s: %v", args, err)
		}
		var got []string
		for _, it := range l.Items {
			got = append(got, it.Kind)
		}
		if strings.Join(got, ",") != strings.Join(kinds, ",") {
			t.Errorf("trellis %s: kinds %v, want %v", args, got, kinds)
		}
	}
}
