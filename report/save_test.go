package report

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// dirNames lists dir, so a test can check no temporary file is left.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSaveTablesAtomic(t *testing.T) {
	dir := t.TempDir()
	if err := SaveMarkdown(filepath.Join(dir, "results.md"), tinyRuns(), nil, 3); err != nil {
		t.Fatal(err)
	}
	if err := SaveCSV(filepath.Join(dir, "summary.csv"), tinyRuns(), nil); err != nil {
		t.Fatal(err)
	}
	// A failing table (a duplicate run) must not replace the good one.
	if err := SaveCSV(filepath.Join(dir, "summary.csv"), append(tinyRuns(), tinyRuns()[0]), nil); err == nil {
		t.Error("SaveCSV accepted a run twice")
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"results.md", "summary.csv"}) {
		t.Errorf("directory holds %q, want results.md and summary.csv only", got)
	}
	if got := readFile(t, filepath.Join(dir, "summary.csv")); len(got) == 0 || got[:6] != "label," {
		t.Errorf("summary.csv = %q", got)
	}
}
