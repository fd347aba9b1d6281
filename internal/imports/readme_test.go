package imports

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestREADMEPackageTableIsEveryPackage checks the package map of README.md
// ("## Packages") against `go list`: every package of the module has a row
// (the benchmark programs share one, `bench/…`), and every package a row
// names exists.
func TestREADMEPackageTableIsEveryPackage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Packages\n")
	if !ok {
		t.Fatal(`README.md has no "## Packages" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []row
	for _, line := range strings.Split(section, "\n") {
		if cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|"); strings.HasPrefix(line, "| `") && len(cells) >= 2 {
			rows = append(rows, row{packages: ticked(cells[0]), text: line})
		}
	}
	if len(rows) < 10 {
		t.Fatalf("README.md's package table has %d rows", len(rows))
	}
	cmd := exec.Command("go", "list", module+"/...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		pkgs = append(pkgs, strings.TrimPrefix(strings.TrimPrefix(p, module), "/"))
	}
	for _, p := range pkgs {
		if !slices.ContainsFunc(rows, func(r row) bool { return r.matches(p) }) {
			t.Errorf("package %s has no row in README.md's package table: add one (its job)", p)
		}
	}
	for _, r := range rows {
		for _, name := range r.packages {
			one := row{packages: []string{name}}
			if !slices.ContainsFunc(pkgs, one.matches) {
				t.Errorf("README.md's package table names %s, which go list does not list", name)
			}
		}
	}
}
