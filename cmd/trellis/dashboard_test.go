package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/cluster"
)

// run --dashboard refuses an address without a host before any work; a
// sweep with a dashboard on a loopback port runs, says where the page is,
// and writes report.html next to results.md; serve refuses a directory
// without runs.
func TestDashboardFlagAndServe(t *testing.T) {
	var out, errb bytes.Buffer
	err := run([]string{"run", "quickstart", "--dashboard", ":0", "-o", t.TempDir()}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "every interface") {
		t.Fatalf("--dashboard :0: %v", err)
	}
	if err := run([]string{"serve", t.TempDir(), "--addr", "127.0.0.1:0"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "no run directories") {
		t.Fatalf("serve of an empty directory: %v", err)
	}
	// launch and monitor take --dashboard too, and refuse the same
	// address before any process starts or any socket is bound.
	if err := run([]string{"launch", "quickstart", "--dashboard", ":0", "-o", t.TempDir()}, &out, &errb); err == nil || !strings.Contains(err.Error(), "every interface") {
		t.Fatalf("launch --dashboard :0: %v", err)
	}
	cdir := t.TempDir()
	cfgPath, peersPath := filepath.Join(cdir, "c.toml"), filepath.Join(cdir, "peers.toml")
	if err := os.WriteFile(cfgPath, []byte("name = \"m\"\nnodes = 2\nrounds = 1\n[model]\nkind = \"logreg\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cluster.IPCEndpoints(cdir, 2).Write(peersPath); err != nil {
		t.Fatal(err)
	}
	err = run([]string{"monitor", "--config", cfgPath, "--peers", peersPath, "--dashboard", ":0", "-o", filepath.Join(cdir, "out")}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "every interface") {
		t.Fatalf("monitor --dashboard :0: %v", err)
	}
	if testing.Short() {
		t.Skip("runs a small sweep")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfg, []byte(`
name = "t"
nodes = 4
rounds = 2
[data]
samples = 400
[model]
kind = "logreg"
[sweep]
seeds = [1, 2]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if err := run([]string{"sweep", cfg, "-o", filepath.Join(dir, "out"), "--dashboard", "127.0.0.1:0", "--quiet"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "dashboard at http://127.0.0.1:") {
		t.Errorf("stderr: %s", errb.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "out", "report.html"))
	if err != nil || !bytes.Contains(b, []byte(`"dir":"seed-2"`)) {
		t.Fatalf("report.html: %v", err)
	}
}
