package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/experiment"
)

// TestConvGlobalTestDefaultIsSaid: a conv model's default subsample of the
// global test set is printed, and not when the file sets the key.
func TestConvGlobalTestDefaultIsSaid(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cnn.toml")
	for _, c := range []struct {
		text string
		said bool
	}{
		{"nodes = 2\nrounds = 1\n[model]\nkind = \"femnist_cnn\"\n", true},
		{"nodes = 2\nrounds = 1\n[model]\nkind = \"femnist_cnn\"\n[evaluation]\nglobal_test = 1000\n", false},
		{"nodes = 2\nrounds = 1\n", false},
	} {
		if err := os.WriteFile(cfg, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		if err := run([]string{"run", cfg, "--dry-run", "-o", filepath.Join(dir, "out")}, &out, &errb); err != nil {
			t.Fatalf("%v\n%s", err, errb.String())
		}
		if said := strings.Contains(errb.String(), "global accuracy is measured on the first 1000 samples"); said != c.said {
			t.Errorf("config %q: note printed %v, want %v:\n%s", c.text, said, c.said, errb.String())
		}
	}
}

func TestDryRunPrintsTheEstimate(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if err := run([]string{"run", "quickstart", "--dry-run", "-o", dir}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, want := range []string{"memory estimate: run quickstart (20 nodes", "101,770 parameters", "model parameters",
		"optimizer state", "model scratch", "dataset mnist", "attack vectors", "expected peak resident set", "available memory:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the dry run lacks %q:\n%s", want, out.String())
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("a dry run wrote %d files", len(ents))
	}

	// --json: the estimate as numbers.
	out.Reset()
	if err := run([]string{"run", "quickstart", "--dry-run", "--json"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Runs []struct {
			Estimate experiment.Estimate `json:"estimate"`
		} `json:"runs"`
		Fits bool `json:"fits"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Runs) != 1 || got.Runs[0].Estimate.Params != 101770 || got.Runs[0].Estimate.Peak <= 0 {
		t.Errorf("--json: %v\n%s", err, out.String())
	}

	// A sweep: a row per run, the largest in full.
	out.Reset()
	if err := run([]string{"sweep", "byzantine-sweep", "--dry-run"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "← largest") || !strings.Contains(s, "the largest, ") || strings.Count(s, "memory estimate:") != 1 {
		t.Errorf("sweep dry run:\n%s", s)
	}
}

// A config that cannot fit is refused before anything is allocated (the
// config asks for 10^12 parameters: allocating would crash the test), with
// the numbers and what would fit; the run directory is not created.
func TestImpossibleRunRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	for _, args := range [][]string{
		{"run", "quickstart", "--set", "model.hidden=[1000000, 1000000]", "-o", dir},
		{"run", "quickstart", "--set", "nodes=20000", "--set", "data.samples=0", "--set", "topology.kind=complete", "-o", dir},
		{"run", "quickstart", "--set", "model.hidden=[1000000, 1000000]", "--dry-run"},
	} {
		var out, errb bytes.Buffer
		err := run(args, &out, &errb)
		if err == nil {
			t.Fatalf("%v: no error", args)
		}
		for _, want := range []string{"needs about", "is available", "it would fit with", "--no-memory-check"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%v: the error lacks %q:\n%v", args, want, err)
			}
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%v: the run directory was created", args)
		}
	}
}

// TRELLIS_MEMORY_AVAILABLE stands for the machine's memory; --no-memory-check
// lets a run start anyway.
func TestMemoryCheckOverride(t *testing.T) {
	t.Setenv(experiment.EnvMemoryAvailable, "100MiB")
	var out, errb bytes.Buffer
	err := run([]string{"run", "quickstart", "--dry-run"}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "100 MiB is available ("+experiment.EnvMemoryAvailable+")") {
		t.Errorf("100 MiB: %v", err)
	}
	if err := run([]string{"run", "quickstart", "--dry-run", "--no-memory-check"}, &out, &errb); err != nil {
		t.Errorf("--no-memory-check: %v", err)
	}
	err = run([]string{"launch", "quickstart", "--dry-run"}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), `launch "quickstart" needs about`) || !strings.Contains(err.Error(), "`trellis run`") {
		t.Errorf("launch at 100 MiB: %v", err)
	}
}

func TestLaunchDryRun(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"launch", "quickstart", "--dry-run"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, want := range []string{"memory estimate: launched node process quickstart", "memory estimate: monitor quickstart",
		"memory estimate: launch quickstart", "node processes", "validator and inbox"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("launch --dry-run lacks %q:\n%s", want, out.String())
		}
	}
}

func TestProbe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a run and times its first round")
	}
	var out, errb bytes.Buffer
	if err := run([]string{"run", "quickstart", "--probe", "--set", "nodes=6", "--set", "data.samples=2000"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if s := out.String(); !strings.Contains(s, "probe (round 0 of 10, measured)") || !strings.Contains(s, "whole run ≈") {
		t.Errorf("--probe:\n%s", s)
	}
}

// `trellis k8s` requests each pod's memory from the estimate unless
// --memory says otherwise.
func TestK8sMemoryFromEstimate(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"k8s", "launch", "quickstart", "--image", "i", "--claim", "c"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	cfg, _ := loadConfigOrPreset("quickstart", nil)
	d, _ := experiment.KnownShape(cfg)
	node, _ := experiment.EstimateNodeProcess(cfg, d)
	want := fmt.Sprintf(`"memory": "%dMi"`, (node.Peak+1<<20-1)>>20)
	if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), fmt.Sprintf(`"memory": "%dMi"`, (experiment.EstimateMonitor(cfg).Peak+1<<20-1)>>20)) {
		t.Errorf("no %s in the manifests", want)
	}
	out.Reset()
	if err := run([]string{"k8s", "sweep", "byzantine-sweep", "--image", "i", "--claim", "c", "--memory", "3Gi"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"memory": "3Gi"`) {
		t.Error("--memory 3Gi is not the request")
	}
	out.Reset()
	if err := run([]string{"k8s", "sweep", "byzantine-sweep", "--image", "i", "--claim", "c"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"memory": "`) {
		t.Error("the sweep's pods request no memory")
	}
}

// TestNodeMemoryGate: `trellis node` estimates its own process before
// loading anything, prints it with --dry-run, and refuses a machine too
// small for it unless --no-memory-check.
func TestNodeMemoryGate(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "cfg.toml")
	if err := os.WriteFile(cfg, []byte("name = \"edge\"\nnodes = 3\nrounds = 1\n[model]\nhidden = [256, 128]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	keys := filepath.Join(dir, "keys")
	if err := run([]string{"keys", "--nodes", "3", "--ipc", filepath.Join(dir, "sock"), "--monitor", "ipc://" + filepath.Join(dir, "mon"), "-o", keys}, &out, &errb); err != nil {
		t.Fatalf("keys: %v\n%s", err, errb.String())
	}
	args := []string{"node", "--config", cfg, "--peers", filepath.Join(keys, "peers.toml"), "--id", "0", "--key", filepath.Join(keys, "node-0.key")}
	out.Reset()
	if err := run(append(args, "--dry-run"), &out, &errb); err != nil {
		t.Fatalf("node --dry-run: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "memory estimate: node process edge") || !strings.Contains(out.String(), "available memory") {
		t.Errorf("node --dry-run printed:\n%s", out.String())
	}
	t.Setenv(experiment.EnvMemoryAvailable, "20MiB")
	err := run(args, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), `node process "edge" needs about`) || !strings.Contains(err.Error(), "20.0 MiB is available") {
		t.Errorf("node at 20 MiB: %v", err)
	}
	if err := run(append(args, "--dry-run", "--no-memory-check"), &out, &errb); err != nil {
		t.Errorf("--no-memory-check: %v", err)
	}
}
