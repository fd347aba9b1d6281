package report

import (
	"strings"
	"testing"
)

func TestWriteSpreadPivot(t *testing.T) {
	run := func(label, f string, seed uint64, acc, std float64) RunResult {
		return RunResult{Label: label, Params: map[string]string{"f": f}, Seed: seed,
			Final: map[string]float64{"acc": acc, "std": std}}
	}
	runs := []RunResult{
		run("b", "0.5", 1, 0.5, 0.1), run("a", "0", 1, 0.9, 0.02), run("a", "0", 2, 0.7, 0.04),
		run("a", "0.5", 1, 0.6, 0.2),
	}
	var sb strings.Builder
	if err := WriteSpreadPivot(&sb, runs, "f", "acc", "std", 2); err != nil {
		t.Fatal(err)
	}
	want := "| label | f = 0 | f = 0.5 |\n|---|---:|---:|\n| a | 0.80 ± 0.03 | 0.60 ± 0.20 |\n| b | — | 0.50 ± 0.10 |\n"
	if sb.String() != want {
		t.Errorf("got\n%s\nwant\n%s", sb.String(), want)
	}
	if err := WriteSpreadPivot(&sb, runs, "g", "acc", "", 2); err == nil {
		t.Error("unknown key accepted")
	}
}
