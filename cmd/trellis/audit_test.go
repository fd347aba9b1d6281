package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditCommand: `trellis audit` re-runs a run without saved models and
// adds LiRA with --attack lira; bad flags are clear errors.
func TestAuditCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("a run and its audit with shadow models")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfg, []byte(`
name = "a"
nodes = 2
rounds = 2
[data]
samples = 400
[model]
hidden = [8]
[training]
epochs = 3
[strategy]
name = "local"
[partition]
method = "iid"
split = [0.5, 0.0, 0.5]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var o, e bytes.Buffer
	if err := run([]string{"run", cfg, "-o", out, "-q"}, &o, &e); err != nil {
		t.Fatalf("%v\n%s", err, e.String())
	}
	o.Reset()
	if err := run([]string{"audit", out, "--attack", "lira", "--shadows", "4"}, &o, &e); err != nil {
		t.Fatalf("%v\n%s", err, e.String())
	}
	for _, want := range []string{"models: re-run", "LiRA (Carlini et al. 2022), 4 shadow models", "pooled LiRA"} {
		if !strings.Contains(o.String(), want) {
			t.Errorf("no %q in\n%s", want, o.String())
		}
	}
	if err := run([]string{"audit", out, "--shadows", "4"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "only attack = \"lira\" trains shadow models") {
		t.Errorf("--shadows without --attack lira: %v", err)
	}
	if err := run([]string{"audit", out, "--attack", "lira", "--shadows", "2"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "allowed range 4 to 256") {
		t.Errorf("--shadows 2: %v", err)
	}
}
