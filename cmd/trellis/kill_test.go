package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// buildBinary builds the trellis command into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "trellis")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// killAt starts bin with args and SIGKILLs it once file has at least
// lines lines (or lets it finish if it gets there first); it reports
// whether the kill happened before the process ended.
func killAt(t *testing.T, bin string, args []string, file string, lines int) bool {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%v ended before the kill: %v\n%s", args, err, errb.String())
			}
			return false
		default:
		}
		if b, err := os.ReadFile(file); err == nil && bytes.Count(b, []byte{'\n'}) >= lines {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			return true
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func runBin(t *testing.T, bin string, args ...string) {
	t.Helper()
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

const killConfig = `
name = "kill"
nodes = 5
rounds = 20
[data]
samples = 1500
[model]
hidden = [16]
[topology]
kind = "ring"
[adversary]
fraction = 0.2
attack = "gaussian"
[strategy]
name = "robust"
rule = "trimmed_mean"
[training]
momentum = 0.5
[evaluation]
global_test = 200
`

// TestSIGKILLThenResumeIsBitIdentical: a
// 20-round run killed with SIGKILL at a random round, then resumed, ends
// with the metrics.jsonl and rounds.jsonl of an uninterrupted run; the
// same for a sweep killed in its second run.
func TestSIGKILLThenResumeIsBitIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs 20-round experiments")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "kill.toml")
	if err := os.WriteFile(cfg, []byte(killConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	full, killed := filepath.Join(dir, "full"), filepath.Join(dir, "killed")
	runBin(t, bin, "run", cfg, "-q", "-o", full)
	at := 2 + rand.IntN(15) // rounds finished before the kill: 2 to 16
	if !killAt(t, bin, []string{"run", cfg, "-q", "-o", killed}, filepath.Join(killed, "seed-1", "rounds.jsonl"), at) {
		t.Fatalf("the run finished before round %d: nothing was killed", at)
	}
	if _, err := os.Stat(filepath.Join(killed, "seed-1", "summary.csv")); err == nil {
		t.Fatal("a killed run has a summary")
	}
	runBin(t, bin, "run", cfg, "-q", "-o", killed)
	for _, f := range []string{"metrics.jsonl", "rounds.jsonl"} {
		a, _ := os.ReadFile(filepath.Join(full, "seed-1", f))
		b, _ := os.ReadFile(filepath.Join(killed, "seed-1", f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("killed after %d rounds and resumed: %s differs from the uninterrupted run's (%d and %d bytes)", at, f, len(a), len(b))
		}
	}

	// A sweep of three seeds killed in the middle of its second run.
	sweep := filepath.Join(dir, "sweep.toml")
	if err := os.WriteFile(sweep, []byte(killConfig+"[sweep]\nseeds = [1, 2, 3]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sfull, skilled := filepath.Join(dir, "sfull"), filepath.Join(dir, "skilled")
	runBin(t, bin, "sweep", sweep, "-q", "-o", sfull)
	at = 2 + rand.IntN(15)
	if !killAt(t, bin, []string{"sweep", sweep, "-q", "-o", skilled}, filepath.Join(skilled, "seed-2", "rounds.jsonl"), at) {
		t.Fatalf("the sweep finished before run 2 round %d", at)
	}
	runBin(t, bin, "sweep", sweep, "-q", "-o", skilled)
	for _, run := range []string{"seed-1", "seed-2", "seed-3"} {
		for _, f := range []string{"metrics.jsonl", "rounds.jsonl"} {
			a, _ := os.ReadFile(filepath.Join(sfull, run, f))
			b, _ := os.ReadFile(filepath.Join(skilled, run, f))
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Errorf("sweep killed in run 2 after %d rounds: %s/%s differs", at, run, f)
			}
		}
	}
	a, _ := os.ReadFile(filepath.Join(sfull, "summary.csv"))
	b, _ := os.ReadFile(filepath.Join(skilled, "summary.csv"))
	if !bytes.Equal(a, b) {
		t.Errorf("sweep summary.csv differs:\n%s\n%s", a, b)
	}
}
