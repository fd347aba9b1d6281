package report

import (
	"strings"
	"testing"
)

func TestWritePivot(t *testing.T) {
	run := func(label, attack, lambda string, seed uint64, acc float64) RunResult {
		return RunResult{Label: label, Seed: seed, Params: map[string]string{"adversary.attack": attack, "lambda": lambda},
			Final: map[string]float64{"final_acc": acc}}
	}
	runs := []RunResult{
		run("mean", "sign_flip", "1", 1, 0.5), run("mean", "sign_flip", "1", 2, 0.7),
		run("rdpfl", "sign_flip", "1", 1, 0.9), run("rdpfl", "none", "1", 1, 0.95),
		run("mean", "none", "1", 1, 0.96), run("mean", "none", "0.01", 1, 0.1),
	}
	var b strings.Builder
	err := WritePivot(&b, Filter(runs, map[string]string{"lambda": "1"}), "adversary.attack", LabelKey, "final_acc", 2)
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"| adversary.attack |        mean | rdpfl |\n" +
		"|------------------|------------:|------:|\n" +
		"| none             |        0.96 |  0.95 |\n" +
		"| sign_flip        | 0.60 ± 0.14 |  0.90 |\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	// Without the filter, lambda varies inside the (none, mean) cell.
	if err := WritePivot(&b, runs, "adversary.attack", LabelKey, "final_acc", 2); err == nil || !strings.Contains(err.Error(), "lambda") {
		t.Fatalf("unfiltered runs: err = %v, want one naming lambda", err)
	}
	if err := WritePivot(&b, runs, "nosuch", LabelKey, "final_acc", 2); err == nil {
		t.Fatal("an unknown key must be an error")
	}
}
