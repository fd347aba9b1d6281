package report

import (
	"bytes"
	"strings"
	"testing"
)

// tinyRuns is a small input in scrambled order: two labels, a parameter
// whose numeric order (2 < 10) differs from its string order, one row with
// a single seed and a metric missing from some runs.
func tinyRuns() []RunResult {
	run := func(label, nodes string, seed uint64, final map[string]float64) RunResult {
		return RunResult{Label: label, Params: map[string]string{"nodes": nodes}, Seed: seed, Final: final}
	}
	return []RunResult{
		run("b", "10", 2, map[string]float64{"acc": 0.7}),
		run("a", "10", 2, map[string]float64{"acc": 0.86, "loss": 0.7}),
		run("b", "2", 3, map[string]float64{"acc": 0.8, "loss": 1.1}),
		run("a", "2", 1, map[string]float64{"acc": 0.9}),
		run("b", "2", 1, map[string]float64{"acc": 0.6, "loss": 1.0}),
		run("a", "10", 1, map[string]float64{"acc": 0.84, "loss": 0.5}),
		run("b", "10", 1, map[string]float64{"acc": 0.5, "loss": 1.5}),
		run("b", "2", 2, map[string]float64{"acc": 0.7, "loss": 1.2}),
	}
}

func TestWriteMarkdown(t *testing.T) {
	// Computed by hand (sample std, denominator n−1):
	//   a, 10: acc 0.84, 0.86 → 0.85 ± √(2·0.01²/1) = 0.0141; loss 0.5, 0.7 → 0.6 ± 0.1414
	//   a, 2:  one seed → the mean alone; no loss → "—"
	//   b, 2:  acc 0.6, 0.7, 0.8 → 0.7 ± √(0.02/2) = 0.1; loss 1.0, 1.2, 1.1 → 1.1 ± 0.1
	//   b, 10: acc 0.5, 0.7 → 0.6 ± 0.1414; loss only from seed 1 → 1.5 (n=1)
	want := `| label | nodes |           acc |          loss | seeds |
|-------|-------|--------------:|--------------:|------:|
| a     | 2     |         0.900 |             — |     1 |
| a     | 10    | 0.850 ± 0.014 | 0.600 ± 0.141 |     2 |
| b     | 2     | 0.700 ± 0.100 | 1.100 ± 0.100 |     3 |
| b     | 10    | 0.600 ± 0.141 |   1.500 (n=1) |     2 |
`
	var b bytes.Buffer
	if err := WriteMarkdown(&b, tinyRuns(), []string{"acc", "loss"}, 3); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}

	// nil metrics: every final metric, sorted — the same table here.
	b.Reset()
	if err := WriteMarkdown(&b, tinyRuns(), nil, 3); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("nil metrics: got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWriteMarkdownEscapes(t *testing.T) {
	runs := []RunResult{{Label: "a|b", Seed: 1, Final: map[string]float64{"m": 1}}}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, runs, nil, 1); err != nil {
		t.Fatal(err)
	}
	want := "| label |   m | seeds |\n|-------|----:|------:|\n| a\\|b  | 1.0 |     1 |\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestDuplicateRun(t *testing.T) {
	runs := append(tinyRuns(), tinyRuns()[0])
	err := WriteMarkdown(new(bytes.Buffer), runs, nil, 3)
	if err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Errorf("WriteMarkdown with a run twice: err = %v", err)
	}
	if err := WriteCSV(new(bytes.Buffer), runs, nil); err == nil {
		t.Error("WriteCSV accepted a run twice")
	}
}
