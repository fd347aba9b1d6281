package report

import (
	"errors"
	"io"
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

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}

	if err := WriteFile(path, write("first")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, write("second")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != "second" {
		t.Errorf("content = %q, want %q", got, "second")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, %v; want 0644", fi.Mode(), err)
	}

	// A failing writer: the old file stays whole, nothing else appears.
	boom := errors.New("boom")
	err := WriteFile(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want %v", err, boom)
	}
	if got := readFile(t, path); got != "second" {
		t.Errorf("after failed write: content = %q, want %q", got, "second")
	}

	// A panicking writer (the nearest thing to an interrupted run a test
	// can cause in-process): same.
	func() {
		defer func() { recover() }()
		WriteFile(path, func(w io.Writer) error {
			io.WriteString(w, "half")
			panic("interrupted")
		})
	}()
	if got := readFile(t, path); got != "second" {
		t.Errorf("after panic: content = %q, want %q", got, "second")
	}

	// A failure before the first write leaves no file at all.
	if err := WriteFile(filepath.Join(dir, "new.txt"), func(io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("err = %v, want %v", err, boom)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"out.txt"}) {
		t.Errorf("directory holds %q, want only out.txt", got)
	}

	// A directory that does not exist is an error, not a panic.
	if err := WriteFile(filepath.Join(dir, "no", "such.txt"), write("x")); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
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
