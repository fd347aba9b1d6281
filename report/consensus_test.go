package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
)

// TestConsensusResults: the report of a consensus sweep is the table of
// the consensus columns, one row per method, ε shown only for the DP
// method; no accuracy.
func TestConsensusResults(t *testing.T) {
	c, err := config.Parse([]byte(`name = "cons"
nodes = 5
rounds = 40
[topology]
kind = "ring"
[consensus]
[sweep.grid]
"consensus.method" = ["plain", "dp_laplace_huang"]
`), "c.toml")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := experiment.RunSweep(context.Background(), c, out, nil); err != nil {
		t.Fatal(err)
	}
	md, err := Results(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(md, "\n")
	if len(lines) < 4 || !strings.Contains(lines[0], "final MSE to the average") || strings.Contains(md, "accuracy") {
		t.Fatalf("table:\n%s", md)
	}
	cell := func(line string, i int) string { return strings.TrimSpace(strings.Split(line, "|")[i]) }
	// Columns: method, MSE, largest distance, ε, reconstruction, seeds.
	if cell(lines[2], 1) != "dp_laplace_huang" || cell(lines[2], 4) != "1" || cell(lines[2], 2) == "0" {
		t.Errorf("DP row: %q", lines[2])
	}
	if cell(lines[3], 1) != "plain" || cell(lines[3], 4) != "—" {
		t.Errorf("plain row: %q", lines[3])
	}
	if _, err := os.Stat(filepath.Join(out, "results.md")); err != nil {
		t.Error(err)
	}
	// The method is the label, not a swept parameter, and a table's rows
	// may still name it.
	tab, err := PivotDir(out, PivotQuery{Rows: "consensus.method", Cols: "seed", Metric: "consensus_mse", Decimals: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tab, "| consensus.method ") || !strings.Contains(tab, "| dp_laplace_huang ") || !strings.Contains(tab, "| plain ") {
		t.Errorf("table by consensus.method:\n%s", tab)
	}
}
