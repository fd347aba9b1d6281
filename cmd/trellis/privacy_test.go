package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrivacyAccountantFlag(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"privacy", "--sigma", "1.1", "--q", "0.004267", "--steps", "3516", "--delta", "1e-5", "--accountant", "pld"}, &out, &out)
	if err != nil || !strings.Contains(out.String(), "(ε = 1.134, δ = 1e-05)-DP by PLD; RDP: ε = ") {
		t.Errorf("--accountant pld: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := run([]string{"privacy", "--sigma", "1", "--steps", "1", "--accountant", "prv"}, &out, &out); err == nil || !strings.Contains(err.Error(), "--accountant") {
		t.Errorf("--accountant prv: %v", err)
	}
}

// --config answers for every run of a config's sweep, each node's ε by
// both accountants: node-level DP with z = 2 over 4 rounds is 4 Gaussian
// releases, whatever the node's data.
func TestPrivacyOfConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "dp.toml")
	if err := os.WriteFile(cfg, []byte(`
nodes = 3
rounds = 4
[data]
samples = 300
[model]
kind = "mlp"
hidden = [4]
[privacy]
mode = "node"
noise_multiplier = 2.0
delta = 1e-5
[sweep]
seeds = [1, 2]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"privacy", "--config", cfg, "--json"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	var runs []struct {
		Run   string
		Nodes []struct {
			Steps      int
			RDPEpsilon float64  `json:"rdp_epsilon"`
			PLDEpsilon *float64 `json:"pld_epsilon"`
		}
	}
	if err := json.Unmarshal(out.Bytes(), &runs); err != nil {
		t.Fatal(err, out.String())
	}
	if len(runs) != 2 || len(runs[0].Nodes) != 3 {
		t.Fatalf("%d runs: %s", len(runs), out.String())
	}
	var q bytes.Buffer
	if err := run([]string{"privacy", "--sigma", "2", "--steps", "4", "--json"}, &q, &q); err != nil {
		t.Fatal(err)
	}
	var want struct {
		RDPEpsilon float64 `json:"rdp_epsilon"`
		PLDEpsilon float64 `json:"pld_epsilon"`
	}
	if err := json.Unmarshal(q.Bytes(), &want); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		for _, n := range r.Nodes {
			if n.Steps != 4 || n.RDPEpsilon != want.RDPEpsilon || n.PLDEpsilon == nil || *n.PLDEpsilon != want.PLDEpsilon {
				t.Errorf("%s: node %+v, want 4 steps, ε %v by RDP and %v by PLD", r.Run, n, want.RDPEpsilon, want.PLDEpsilon)
			}
		}
	}
	out.Reset()
	if err := run([]string{"privacy", "--config", cfg}, &out, &out); err != nil || strings.Count(out.String(), "by PLD max") != 2 {
		t.Errorf("text: %v\n%s", err, out.String())
	}
}
