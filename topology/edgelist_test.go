package topology

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseEdgeList(t *testing.T) {
	const src = `# a small graph
0 1
1,2      # trailing comment
 2 , 3
2	0

3 1
1 0
`
	g, err := ParseEdgeList(strings.NewReader(src), 0, false)
	g = mustGraph(t, g, err)
	want := []Edge{{0, 1}, {0, 2}, {1, 2}, {1, 3}, {2, 3}}
	if g.N() != 4 || !slices.Equal(g.Edges(), want) {
		t.Fatalf("N = %d, edges %v; want 4, %v", g.N(), g.Edges(), want)
	}
	d, err := ParseEdgeList(strings.NewReader(src), 6, true)
	d = mustGraph(t, d, err)
	if d.N() != 6 || d.NumEdges() != 6 || !d.HasEdge(3, 1) || d.HasEdge(1, 3) {
		t.Fatalf("directed: N = %d, edges %v", d.N(), d.Edges())
	}
}

func TestParseEdgeListErrors(t *testing.T) {
	for _, c := range []struct {
		src   string
		n     int
		line  int
		words []string
	}{
		{"0 1\n1 x\n", 0, 2, []string{`"x" is not a decimal integer`}},
		{"0 1\n\n# c\n1 2 3\n", 0, 4, []string{"3 fields, want 2"}},
		{"0\n", 0, 1, []string{"1 fields"}},
		{"0 1\n2 2\n", 0, 2, []string{"self-loop on node 2"}},
		{"0 -1\n", 0, 1, []string{"node id -1 out of range"}},
		{"0 1\n0 5\n", 5, 2, []string{"node id 5 out of range [0, 5)"}},
		{"0 +1\n", 0, 1, []string{`"+1"`}},
		{"0,\n", 0, 1, []string{`"" is not`}},
		{"0 99999999999999999999\n", 0, 1, []string{"not a decimal integer"}},
		{"0 2000000\n", 0, 1, []string{"out of range [0, 1048576)"}},
		{"# nothing\n\n", 0, 0, []string{"no edges", "pass n"}},
		{"0 1\n" + strings.Repeat("9", maxLineBytes+1), 0, 2, []string{"longer than"}},
	} {
		_, err := ParseEdgeList(strings.NewReader(c.src), c.n, false)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: error %v, want a *ParseError", c.src, err)
			continue
		}
		if pe.Line != c.line {
			t.Errorf("%q: line %d, want %d (%v)", c.src, pe.Line, c.line, err)
		}
		for _, w := range c.words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", c.src, err, w)
			}
		}
	}
	if _, err := ParseEdgeList(strings.NewReader("0 1"), -1, false); err == nil || !strings.Contains(err.Error(), "n = -1") {
		t.Errorf("n = -1: error %v", err)
	}
	// An empty list is fine when n is given: n isolated nodes.
	g, err := ParseEdgeList(strings.NewReader(""), 3, false)
	if g = mustGraph(t, g, err); g.N() != 3 || g.NumEdges() != 0 {
		t.Errorf("empty list with n = 3: N %d, edges %d", g.N(), g.NumEdges())
	}
}

func TestLoadEdgeList(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "g.txt")
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(good, []byte("0 1\n1 2\n"), 0o644)
	os.WriteFile(bad, []byte("0 1\n1 two\n"), 0o644)
	g, err := LoadEdgeList(good, 0, false)
	if g = mustGraph(t, g, err); g.NumEdges() != 2 {
		t.Errorf("edges %v", g.Edges())
	}
	_, err = LoadEdgeList(bad, 0, false)
	if err == nil || !strings.Contains(err.Error(), bad+":2:") {
		t.Errorf("error %v does not name %s:2", err, bad)
	}
	missing := filepath.Join(dir, "missing.txt")
	_, err = LoadEdgeList(missing, 0, false)
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("error %v does not name %s", err, missing)
	}
}
