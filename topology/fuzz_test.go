package topology

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzParseEdgeList: no input panics; an accepted list gives a valid graph
// that survives a print-and-parse round trip.
func FuzzParseEdgeList(f *testing.F) {
	f.Add("0 1\n1,2\n# c\n", false)
	f.Add("0 1\n1 0\n", true)
	f.Fuzz(func(t *testing.T, src string, directed bool) {
		g, err := ParseEdgeList(strings.NewReader(src), 0, directed)
		if err != nil {
			if g != nil {
				t.Fatal("graph and error both returned")
			}
			return
		}
		checkGraph(t, g)
		var b strings.Builder
		for _, e := range g.Edges() {
			fmt.Fprintf(&b, "%d %d\n", e.From, e.To)
		}
		h, err := ParseEdgeList(strings.NewReader(b.String()), g.N(), directed)
		if err != nil || !h.Equal(g) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzParseTrace: no input panics; an accepted trace gives valid graphs that
// wrap around with its period.
func FuzzParseTrace(f *testing.F) {
	f.Add("round,i,j\n0,0,1\n2,1,2\n")
	f.Add("3 0 1 # ws\n")
	f.Fuzz(func(t *testing.T, src string) {
		tr, err := ParseTrace(strings.NewReader(src), 0)
		if err != nil {
			if tr != nil {
				t.Fatal("trace and error both returned")
			}
			return
		}
		if tr.Len() < 1 || tr.N() < 2 {
			t.Fatalf("Len %d, N %d", tr.Len(), tr.N())
		}
		edges := 0
		for round := range min(tr.Len(), 8) {
			g := tr.At(round)
			checkGraph(t, g)
			edges += g.NumEdges()
			if tr.At(round+tr.Len()) != g {
				t.Fatalf("round %d does not wrap", round)
			}
		}
		if tr.At(tr.Len()-1).NumEdges() == 0 {
			t.Fatal("the last round of a trace has no contacts")
		}
	})
}
