package imports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/trellis-fl/trellis"

// row is one line of the package table.
type row struct {
	packages []string // relative paths; a trailing "/…" is a prefix
	allow    []string // relative paths
	above    bool     // "everything above"
	all      bool     // "everything"
	text     string
}

func (r row) matches(pkg string) bool {
	for _, p := range r.packages {
		if p == pkg || strings.HasSuffix(p, "/…") && strings.HasPrefix(pkg, strings.TrimSuffix(p, "…")) {
			return true
		}
	}
	return false
}

// readTable parses the package table of a Markdown file: rows whose first
// cell lists `packages`, the third what they may import.
func readTable(t *testing.T, path string) []row {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []row
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
			continue
		}
		r := row{packages: ticked(cells[0]), text: line}
		switch may := strings.TrimSpace(cells[len(cells)-1]); {
		case may == "everything":
			r.all = true
		case may == "everything above":
			r.above = true
		default:
			r.allow = ticked(may)
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no package table", path)
	}
	return rows
}

// ticked returns the `quoted` names of a cell.
func ticked(cell string) []string {
	var out []string
	parts := strings.Split(cell, "`")
	for i := 1; i < len(parts); i += 2 {
		out = append(out, parts[i])
	}
	return out
}

type listed struct {
	ImportPath string
	Imports    []string
}

// TestImportsFollowTheTable checks every package's non-test imports
// within the module against its row.
func TestImportsFollowTheTable(t *testing.T) {
	rows := readTable(t, filepath.Join("..", "..", "docs", "architecture.md"))
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	n := 0
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		n++
		pkg := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		at := slices.IndexFunc(rows, func(r row) bool { return r.matches(pkg) })
		if at < 0 {
			t.Errorf("package %s has no row in docs/architecture.md's table: add one (its job, what it may import)", pkg)
			continue
		}
		r := rows[at]
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			switch {
			case r.all:
			case r.above && slices.ContainsFunc(rows[:at], func(o row) bool { return o.matches(dep) }):
			case slices.Contains(r.allow, dep):
			default:
				t.Errorf("%s imports %s, which its row does not allow (%s)", pkg, dep, r.text)
			}
		}
	}
	if n < 10 {
		t.Fatalf("go list listed %d packages", n)
	}
	// The table itself: a row allows only packages of rows above it.
	for at, r := range rows {
		for _, a := range r.allow {
			if !slices.ContainsFunc(rows[:at], func(o row) bool { return o.matches(a) }) {
				t.Errorf("row %v allows %s, which is not in a row above it", r.packages, a)
			}
		}
	}
}
