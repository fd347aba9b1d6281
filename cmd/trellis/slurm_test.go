package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/rundir"
)

// needSlurm skips the test unless a Slurm cluster answers here with a
// usable node.
func needSlurm(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skips the Slurm cluster tests")
	}
	for _, c := range []string{"sbatch", "squeue", "sinfo", "srun"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("no %s on PATH: install slurm-wlm and munge and start a one-host cluster with `bash .ci/slurm-up.sh` (as root)", c)
		}
	}
	out, err := exec.Command("sinfo", "-h", "-o", "%T").CombinedOutput()
	if err != nil || !strings.ContainsAny(string(out), "im") { // idle, mixed, allocated
		t.Skipf("no running Slurm cluster (sinfo: %v: %s): `bash .ci/slurm-up.sh` (as root) starts a one-host one", err, bytes.TrimSpace(out))
	}
}

// waitJobs waits until Slurm has no job of these names left (pending or
// running); a generous deadline turns a job that never runs into a failure
// rather than a hung test.
func waitJobs(t *testing.T, names ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		out, err := exec.Command("squeue", "-h", "-o", "%i %T %r", "-n", strings.Join(names, ",")).CombinedOutput()
		if err != nil {
			t.Fatalf("squeue: %v: %s", err, out)
		}
		if len(bytes.TrimSpace(out)) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs %v still queued after 10 minutes:\n%s", names, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// slurmLogs is every Slurm output file in dir, for a failure message.
func slurmLogs(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "slurm-*.out"))
	var b strings.Builder
	for _, f := range files {
		text, _ := os.ReadFile(f)
		b.WriteString("== " + f + "\n" + string(text))
	}
	return b.String()
}

func writeConfig(t *testing.T, text string) (string, config.Config) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "it's a config.toml") // a path that needs quoting
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, c
}

// TestSlurmOnClusterSweep runs a sweep under Slurm: a
// 4-shard job array of a small sweep, submitted with `trellis slurm sweep
// --submit` on a real (one-host) Slurm cluster, completes, and the merge
// job's summary.csv equals the unsharded sweep's byte for byte.
func TestSlurmOnClusterSweep(t *testing.T) {
	needSlurm(t)
	bin := buildBinary(t)
	cfg, c := writeConfig(t, tinyToml("trellis-test-sweep", 4, 2, `[adversary]
attack = "gaussian"
[sweep]
seeds = [1, 2]
[sweep.grid]
"adversary.fraction" = [0.0, 0.25]
`))
	out := filepath.Join(t.TempDir(), "sharded sweep")
	if b, err := exec.Command(bin, "slurm", "sweep", cfg, "--shards", "4", "--submit", "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("trellis slurm sweep --submit: %v\n%s", err, b)
	}
	waitJobs(t, c.Name, c.Name+"-merge")
	got, err := os.ReadFile(filepath.Join(out, rundir.SummaryFile))
	if err != nil {
		t.Fatalf("no merged summary: %v\n%s", err, slurmLogs(out))
	}
	whole := t.TempDir()
	if _, err := experiment.RunSweep(context.Background(), c, whole, nil); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(whole, rundir.SummaryFile))
	if !bytes.Equal(got, want) {
		t.Errorf("merged summary of the job array:\n%s\nunsharded:\n%s\n%s", got, want, slurmLogs(out))
	}
	logs, _ := filepath.Glob(filepath.Join(out, "slurm-*_*.out"))
	if len(logs) != 4 {
		t.Errorf("%d array task logs, want 4: %v", len(logs), logs)
	}
}

// TestSlurmOnClusterLaunch runs a deployed run under Slurm, with 4 nodes on the one-host cluster's 2 CPUs (--overcommit): `trellis
// slurm launch --submit` starts them with srun, and the monitor's run
// directory is the lock-step simulator's, metrics.jsonl byte for byte.
func TestSlurmOnClusterLaunch(t *testing.T) {
	needSlurm(t)
	bin := buildBinary(t)
	cfg, c := writeConfig(t, tinyToml("trellis-test-launch", 4, 2, `[topology]
kind = "complete"
[adversary]
fraction = 0.25
attack = "sign_flip"
`))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if port+5 > 65535 {
		port -= 10
	}
	out := filepath.Join(t.TempDir(), "deployed run")
	if b, err := exec.Command(bin, "slurm", "launch", cfg, "--overcommit", "--port", strconv.Itoa(port), "--submit", "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("trellis slurm launch --submit: %v\n%s", err, b)
	}
	waitJobs(t, c.Name)
	sim := t.TempDir()
	if _, err := experiment.RunToDir(context.Background(), c, sim, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{rundir.MetricsFile, rundir.RoundsFile, rundir.SummaryFile} {
		got, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			nodeLog, _ := os.ReadFile(filepath.Join(out, "cluster", "node-0.log"))
			t.Fatalf("the deployed run has no %s: %v\n%s\nnode 0:\n%s", f, err, slurmLogs(out), nodeLog)
		}
		want, _ := os.ReadFile(filepath.Join(sim, f))
		if !bytes.Equal(got, want) {
			t.Errorf("%s of the srun deployment differs from the simulator's:\n%s\nsimulator:\n%s", f, got, want)
		}
	}
}
