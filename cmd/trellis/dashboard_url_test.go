package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --dashboard 0.0.0.0:PORT prints an address a browser can open
// (127.0.0.1, not http://[::]:PORT/) and says it listens on every
// interface.
func TestDashboardOnEveryInterfacePrintsAUsableURL(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfg, []byte("name = \"u\"\nnodes = 3\nrounds = 1\n[data]\nsamples = 300\n[model]\nkind = \"logreg\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := run([]string{"run", cfg, "-o", filepath.Join(dir, "out"), "--dashboard", "0.0.0.0:0", "--quiet"}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	got := errb.String()
	if !strings.Contains(got, "dashboard at http://127.0.0.1:") || !strings.Contains(got, "listening on all interfaces") || strings.Contains(got, "[::]") {
		t.Errorf("stderr: %s", got)
	}
}
