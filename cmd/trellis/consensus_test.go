package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunConsensus: `trellis run` of a consensus config prints the
// consensus table, one row per method of its sweep, and writes the run
// directories; --dry-run and --dashboard are refused with why, and so is
// `launch`.
func TestRunConsensus(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "c.toml", `name = "cons"
nodes = 6
rounds = 30
[topology]
kind = "ring"
[consensus]
dim = 2
colluders = 2
[sweep.grid]
"consensus.method" = ["plain", "dp_gossip"]
`)
	var so, se bytes.Buffer
	out := filepath.Join(dir, "out")
	if err := run([]string{"run", cfg, "-q", "-o", out}, &so, &se); err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	table := so.String()
	for _, want := range []string{"| method ", "final MSE to the average", "| dp_gossip ", "| plain "} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "consensus.method=plain", "seed-1", "rounds.jsonl")); err != nil {
		t.Error(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", cfg, "--dry-run"}, "task type consensus"},
		{[]string{"run", cfg, "--dashboard", "127.0.0.1:0"}, "task type consensus"},
		{[]string{"launch", writeFile(t, dir, "one.toml", "name = \"one\"\nnodes = 4\n[topology]\nkind = \"ring\"\n[consensus]\n")}, "task type consensus"},
	} {
		if err := run(c.args, &so, &se); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error saying %q", c.args[:2], err, c.want)
		}
	}
}
