package topology

import (
	"slices"
	"strings"
	"testing"
)

// checkGraph verifies the structural invariants every Graph must satisfy.
func checkGraph(t *testing.T, g *Graph) {
	t.Helper()
	n := g.N()
	sumIn, sumOut := 0, 0
	for i := range n {
		out, in := g.Out(i), g.In(i)
		for _, adj := range [2][]int{out, in} {
			for k, j := range adj {
				if j < 0 || j >= n {
					t.Fatalf("node %d: neighbor %d out of range [0, %d)", i, j, n)
				}
				if j == i {
					t.Fatalf("node %d: self-loop", i)
				}
				if k > 0 && adj[k-1] >= j {
					t.Fatalf("node %d: adjacency %v not strictly increasing", i, adj)
				}
			}
		}
		for _, j := range out {
			if !g.HasEdge(i, j) {
				t.Fatalf("HasEdge(%d, %d) false for j in Out(i)", i, j)
			}
			if !slices.Contains(g.In(j), i) {
				t.Fatalf("%d in Out(%d) but %d not in In(%d)", j, i, i, j)
			}
		}
		for _, j := range in {
			if !g.HasEdge(j, i) {
				t.Fatalf("HasEdge(%d, %d) false for j in In(%d)", j, i, i)
			}
		}
		if g.Undirected() {
			if !slices.Equal(in, out) {
				t.Fatalf("undirected node %d: In %v != Out %v", i, in, out)
			}
			for _, j := range out {
				if !g.HasEdge(j, i) {
					t.Fatalf("undirected edge (%d, %d) missing its reverse", i, j)
				}
			}
		}
		if g.InDegree(i) != len(in) || g.OutDegree(i) != len(out) {
			t.Fatalf("node %d: degree helpers disagree with lists", i)
		}
		if g.HasEdge(i, i) {
			t.Fatalf("HasEdge(%d, %d) true", i, i)
		}
		sumIn += len(in)
		sumOut += len(out)
	}
	if sumIn != sumOut {
		t.Fatalf("sum of in-degrees %d != sum of out-degrees %d", sumIn, sumOut)
	}
	want := sumOut
	if g.Undirected() {
		want = sumOut / 2
	}
	if g.NumEdges() != want {
		t.Fatalf("NumEdges = %d, want %d", g.NumEdges(), want)
	}
	es := g.Edges()
	if len(es) != g.NumEdges() {
		t.Fatalf("len(Edges) = %d, want NumEdges = %d", len(es), g.NumEdges())
	}
	if !slices.IsSortedFunc(es, compareEdges) {
		t.Fatal("Edges not sorted")
	}
	for _, e := range es {
		if g.Undirected() && e.From >= e.To {
			t.Fatalf("undirected edge %v not listed with From < To", e)
		}
		if !g.HasEdge(e.From, e.To) {
			t.Fatalf("edge %v listed but HasEdge false", e)
		}
	}
	h, err := FromEdges(n, es, !g.Undirected())
	if err != nil {
		t.Fatalf("FromEdges(Edges()): %v", err)
	}
	if !h.Equal(g) {
		t.Fatal("FromEdges(Edges()) differs from the graph")
	}
}

func TestFromEdgesDirected(t *testing.T) {
	g, err := FromEdges(4, []Edge{{2, 0}, {0, 1}, {1, 2}, {0, 1}, {3, 2}}, true)
	if err != nil {
		t.Fatal(err)
	}
	checkGraph(t, g)
	if g.Undirected() || g.NumEdges() != 4 {
		t.Fatalf("directed = %v, edges = %d; want directed, 4 (one duplicate merged)", !g.Undirected(), g.NumEdges())
	}
	for _, c := range []struct {
		i       int
		out, in []int
	}{
		{0, []int{1}, []int{2}},
		{1, []int{2}, []int{0}},
		{2, []int{0}, []int{1, 3}},
		{3, []int{2}, nil},
	} {
		if !slices.Equal(g.Out(c.i), c.out) || !slices.Equal(g.In(c.i), c.in) {
			t.Errorf("node %d: Out %v In %v, want %v %v", c.i, g.Out(c.i), g.In(c.i), c.out, c.in)
		}
	}
	if !g.HasEdge(3, 2) || g.HasEdge(2, 3) {
		t.Error("HasEdge ignores direction")
	}
	if g.Degree(2) != 3 {
		t.Errorf("Degree(2) = %d, want total degree 3", g.Degree(2))
	}
	want := []Edge{{0, 1}, {1, 2}, {2, 0}, {3, 2}}
	if !slices.Equal(g.Edges(), want) {
		t.Errorf("Edges = %v, want %v", g.Edges(), want)
	}
}

func TestFromEdgesUndirected(t *testing.T) {
	in := []Edge{{3, 1}, {1, 3}, {0, 2}}
	g, err := FromEdges(5, in, false)
	if err != nil {
		t.Fatal(err)
	}
	checkGraph(t, g)
	if !slices.Equal(in, []Edge{{3, 1}, {1, 3}, {0, 2}}) {
		t.Error("FromEdges modified its argument")
	}
	if g.NumEdges() != 2 || !g.HasEdge(1, 3) || !g.HasEdge(3, 1) || g.Degree(1) != 1 || g.Degree(4) != 0 {
		t.Errorf("edges %v", g.Edges())
	}
	for _, c := range [][2]int{{-1, 0}, {0, -1}, {5, 0}, {0, 5}, {1 << 40, 0}} {
		if g.HasEdge(c[0], c[1]) {
			t.Errorf("HasEdge(%d, %d) true for an out-of-range id", c[0], c[1])
		}
	}
}

func TestFromEdgesErrors(t *testing.T) {
	for _, c := range []struct {
		n     int
		es    []Edge
		words []string
	}{
		{0, nil, []string{"n = 0", "1 <= n"}},
		{MaxNodes + 1, nil, []string{"n = 1048577"}},
		{3, []Edge{{0, 1}, {1, 3}}, []string{"edge 1", "node id 3 out of range [0, 3)"}},
		{3, []Edge{{-1, 1}}, []string{"edge 0", "node id -1"}},
		{3, []Edge{{0, 1}, {2, 2}}, []string{"edge 1", "self-loop on node 2"}},
	} {
		_, err := FromEdges(c.n, c.es, false)
		if err == nil {
			t.Errorf("FromEdges(%d, %v): no error", c.n, c.es)
			continue
		}
		for _, w := range c.words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("FromEdges(%d, %v): error %q lacks %q", c.n, c.es, err, w)
			}
		}
	}
}

func TestOutOfRangePanics(t *testing.T) {
	g, _ := Complete(3)
	for _, f := range []func(){
		func() { g.Out(3) }, func() { g.In(-1) }, func() { g.Degree(7) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "out of range [0, 3)") {
					t.Errorf("panic %v, want out of range message", r)
				}
			}()
			f()
		}()
	}
}

func TestOutSliceCannotClobber(t *testing.T) {
	g, _ := Complete(4)
	out := g.Out(1)
	_ = append(out, 99) // capacity is capped, so this must not overwrite Out(2)
	if !slices.Equal(g.Out(2), []int{0, 1, 3}) {
		t.Fatalf("Out(2) = %v after appending to Out(1)", g.Out(2))
	}
}
