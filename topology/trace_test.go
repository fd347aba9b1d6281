package topology

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTraceWrapAround(t *testing.T) {
	const src = `round,i,j
# round 1 has no contacts
0,0,1
0,1,2
2,3,0
2,0,3
0,1,0
`
	tr, err := ParseTrace(strings.NewReader(src), 0)
	if err != nil {
		t.Fatal(err)
	}
	if tr.N() != 4 || tr.Len() != 3 {
		t.Fatalf("N = %d, Len = %d; want 4, 3", tr.N(), tr.Len())
	}
	want := map[int][]Edge{0: {{0, 1}, {1, 2}}, 1: {}, 2: {{0, 3}}}
	for round := range 10 {
		g := tr.At(round)
		checkGraph(t, g)
		if w := want[round%3]; !slices.Equal(g.Edges(), w) {
			t.Errorf("round %d: edges %v, want those of round %d: %v", round, g.Edges(), round%3, w)
		}
		if g.N() != 4 || !g.Undirected() {
			t.Errorf("round %d: N = %d, undirected %v", round, g.N(), g.Undirected())
		}
	}
	if tr.At(3) != tr.At(0) || tr.At(1000000) != tr.At(1) {
		t.Error("wrapped rounds do not share the trace's graphs")
	}
	var d Dynamic = tr
	_ = d
}

func TestNewTrace(t *testing.T) {
	tr, err := NewTrace(5, []Contact{{4, 1, 2}, {1, 0, 4}})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Len() != 5 || tr.N() != 5 || !tr.At(1).HasEdge(4, 0) || tr.At(0).NumEdges() != 0 || !tr.At(9).HasEdge(1, 2) {
		t.Fatal("NewTrace rounds wrong")
	}
	for _, c := range []struct {
		n     int
		cs    []Contact
		words []string
	}{
		{5, nil, []string{"no contacts"}},
		{0, []Contact{{0, 0, 1}}, []string{"n = 0"}},
		{5, []Contact{{0, 0, 1}, {-1, 0, 1}}, []string{"contact 1", "round -1"}},
		{5, []Contact{{MaxTraceRound, 0, 1}}, []string{"round 2147483648 out of range"}},
		{5, []Contact{{0, 0, 5}}, []string{"contact 0", "node id 5 out of range [0, 5)"}},
		{5, []Contact{{0, 3, 3}}, []string{"self-loop on node 3"}},
	} {
		_, err := NewTrace(c.n, c.cs)
		if err == nil {
			t.Errorf("NewTrace(%d, %v): no error", c.n, c.cs)
			continue
		}
		for _, w := range c.words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("NewTrace(%d, %v): error %q lacks %q", c.n, c.cs, err, w)
			}
		}
	}
}

func TestParseTraceErrors(t *testing.T) {
	for _, c := range []struct {
		src   string
		n     int
		line  int
		words []string
	}{
		{"0,0,1\n1,0\n", 0, 2, []string{"2 fields, want 3"}},
		{"0,0,1\nround,i,j\n", 0, 2, []string{`round "round" is not an integer`}},
		{"x,0,1\n", 0, 1, []string{`round "x" is not an integer`}},
		{"0,0,1\n-2,0,1\n", 0, 2, []string{`round "-2"`}},
		{"0,0,1\n1,0,a\n", 0, 2, []string{`node id "a"`}},
		{"0,0,1\n\n1,4,1\n", 3, 3, []string{"node id 4 out of range [0, 3)"}},
		{"0,2,2\n", 0, 1, []string{"contact of node 2 with itself"}},
		{"round,i,j\n# only a header\n", 0, 0, []string{"no contacts"}},
		{"9999999999,0,1\n", 0, 1, []string{"round"}},
	} {
		_, err := ParseTrace(strings.NewReader(c.src), c.n)
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
}

func TestLoadTrace(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "t.csv")
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(good, []byte("0,0,1\n1,1,2\n"), 0o644)
	os.WriteFile(bad, []byte("0,0,1\n\n1,1\n"), 0o644)
	tr, err := LoadTrace(good, 3)
	if err != nil || tr.Len() != 2 || !tr.At(3).HasEdge(2, 1) {
		t.Fatalf("LoadTrace: %v", err)
	}
	if _, err := LoadTrace(bad, 3); err == nil || !strings.Contains(err.Error(), bad+":3:") {
		t.Errorf("error %v does not name %s:3", err, bad)
	}
	missing := filepath.Join(dir, "nope.csv")
	if _, err := LoadTrace(missing, 3); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("error %v does not name %s", err, missing)
	}
}
