package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var worstToml = strings.Replace(tinyToml("cli-worst", 5, 2, `[topology]
kind = "ring"
[adversary]
fraction = 0.2
[worst_case]
search_rounds = 1
tolerance = 0.5
confirm = 1
attacks = ["alie", "sign_flip"]
placements = ["highest_degree"]
[worst_case.defences.median]
"strategy.name" = "robust"
"strategy.rule" = "median"
`), "rounds = 2\n", "rounds = 2\nfinal_rounds = 1\n", 1)

// TestWorstCaseCommand: --dry-run counts the runs; the search writes its
// tables and report; two shards sharing a directory, run until done,
// give the same table; --json is the rows; run refuses the config.
func TestWorstCaseCommand(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "w.toml", worstToml)
	var so, se bytes.Buffer
	if err := run([]string{"worst-case", cfg, "--dry-run"}, &so, &se); err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	if !strings.Contains(so.String(), "grid:          7 runs of 1 rounds") || !strings.Contains(so.String(), "median: 3 attack settings × 1 placements") {
		t.Errorf("--dry-run:\n%s", so.String())
	}
	out := filepath.Join(dir, "whole")
	so.Reset()
	if err := run([]string{"worst-case", cfg, "-q", "-o", out}, &so, &se); err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	for _, f := range []string{"worst_case.md", "worst_case.csv", "worst_case_families.csv", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	want, _ := os.ReadFile(filepath.Join(out, "worst_case.md"))
	if !strings.Contains(so.String(), "| median | global |") {
		t.Errorf("output:\n%s", so.String())
	}

	shared := filepath.Join(dir, "shared")
	for round := 0; ; round++ {
		if round > 20 {
			t.Fatal("the sharded search does not finish")
		}
		for _, sh := range []string{"0/2", "1/2"} {
			so.Reset()
			if err := run([]string{"worst-case", cfg, "-q", "--shard", sh, "-o", shared}, &so, &se); err != nil {
				t.Fatalf("--shard %s: %v\n%s", sh, err, se.String())
			}
		}
		if _, err := os.Stat(filepath.Join(shared, "worst_case.md")); err == nil {
			break
		}
		if !strings.Contains(so.String(), "rerun the shards") {
			t.Fatalf("a shard waiting for others says:\n%s", so.String())
		}
	}
	if got, _ := os.ReadFile(filepath.Join(shared, "worst_case.md")); !bytes.Equal(got, want) {
		t.Errorf("sharded:\n%s\nunsharded:\n%s", got, want)
	}

	so.Reset()
	if err := run([]string{"worst-case", cfg, "--json", "-o", out}, &so, &se); err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Defence string
		Runs    int
	}
	if err := json.Unmarshal(so.Bytes(), &rows); err != nil || len(rows) != 1 || rows[0].Defence != "median" || rows[0].Runs == 0 {
		t.Errorf("--json: %v %+v\n%s", err, rows, so.String())
	}
	so.Reset()
	if err := run([]string{"validate", cfg}, &so, &se); err != nil || !strings.Contains(so.String(), "a worst-case search of 1 defence(s), at most") {
		t.Errorf("validate: %v\n%s", err, so.String())
	}
	err := run([]string{"run", cfg, "-q", "-o", filepath.Join(dir, "run")}, &so, &se)
	if err == nil || !strings.Contains(err.Error(), "trellis worst-case") {
		t.Errorf("run of a worst-case config: %v", err)
	}
}
