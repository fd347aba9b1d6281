package topology

import (
	"fmt"
	"slices"
)

// MaxNodes bounds the number of nodes of every graph this package builds, so
// that a malformed file or config cannot ask for an absurd allocation.
const MaxNodes = 1 << 20

// Edge is a link from From to To. In an undirected graph it stands for both
// directions and Edges lists it once, with From < To.
type Edge struct {
	From, To int
}

// Graph is an immutable graph on nodes 0..N()-1 with sorted adjacency.
//
// A directed edge (i, j) means i sends to j: j is in Out(i) and i is in In(j).
// An undirected graph stores both directions, so In(i) and Out(i) are the same
// list. Self-loops are never edges. A Graph is safe for concurrent reads; the
// slices it returns are views into it and must not be modified.
type Graph struct {
	n        int
	directed bool
	// Compressed sparse rows: Out(i) = outAdj[outStart[i]:outStart[i+1]].
	// For undirected graphs the in-arrays are the out-arrays.
	outStart, outAdj []int
	inStart, inAdj   []int
}

// N is the number of nodes.
func (g *Graph) N() int { return g.n }

// Undirected reports whether every edge is stored in both directions by
// construction (the graph was built as undirected).
func (g *Graph) Undirected() bool { return !g.directed }

// Out returns the sorted ids of the peers i sends to. The slice belongs to the
// graph. It panics if i is not in [0, N()).
func (g *Graph) Out(i int) []int {
	g.check(i)
	a, b := g.outStart[i], g.outStart[i+1]
	return g.outAdj[a:b:b]
}

// In returns the sorted ids of the peers i receives from. The slice belongs to
// the graph. It panics if i is not in [0, N()).
func (g *Graph) In(i int) []int {
	g.check(i)
	a, b := g.inStart[i], g.inStart[i+1]
	return g.inAdj[a:b:b]
}

// OutDegree is len(Out(i)).
func (g *Graph) OutDegree(i int) int {
	g.check(i)
	return g.outStart[i+1] - g.outStart[i]
}

// InDegree is len(In(i)).
func (g *Graph) InDegree(i int) int {
	g.check(i)
	return g.inStart[i+1] - g.inStart[i]
}

// Degree is the number of neighbors of i in an undirected graph, and the
// total degree InDegree(i)+OutDegree(i) in a directed one.
func (g *Graph) Degree(i int) int {
	if !g.directed {
		return g.OutDegree(i)
	}
	return g.InDegree(i) + g.OutDegree(i)
}

// HasEdge reports whether i sends to j. It is false for i == j and for ids
// outside [0, N()), so it can screen untrusted ids.
func (g *Graph) HasEdge(i, j int) bool {
	if i < 0 || i >= g.n || j < 0 || j >= g.n || i == j {
		return false
	}
	_, ok := slices.BinarySearch(g.Out(i), j)
	return ok
}

// NumEdges is the number of edges: undirected edges counted once, directed
// edges (arcs) counted each.
func (g *Graph) NumEdges() int {
	if !g.directed {
		return len(g.outAdj) / 2
	}
	return len(g.outAdj)
}

// Edges lists the edges in lexicographic (From, To) order; an undirected edge
// appears once, with From < To. FromEdges(g.N(), g.Edges(), !g.Undirected())
// rebuilds g.
func (g *Graph) Edges() []Edge {
	es := make([]Edge, 0, g.NumEdges())
	for i := range g.n {
		for _, j := range g.Out(i) {
			if g.directed || i < j {
				es = append(es, Edge{i, j})
			}
		}
	}
	return es
}

// Equal reports whether g and h have the same nodes, kind and edges.
func (g *Graph) Equal(h *Graph) bool {
	return g.n == h.n && g.directed == h.directed &&
		slices.Equal(g.outStart, h.outStart) && slices.Equal(g.outAdj, h.outAdj)
}

func (g *Graph) check(i int) {
	if i < 0 || i >= g.n {
		panic(fmt.Sprintf("topology: node %d out of range [0, %d)", i, g.n))
	}
}

// build makes a Graph from edges that are sorted in (From, To) order, free of
// duplicates and self-loops, with ids in range and, if !directed, From < To.
// Callers that cannot promise this use normalize first.
func build(n int, directed bool, es []Edge) *Graph {
	g := &Graph{n: n, directed: directed}
	g.outStart = make([]int, n+1)
	for _, e := range es {
		g.outStart[e.From+1]++
		if !directed {
			g.outStart[e.To+1]++
		}
	}
	for i := range n {
		g.outStart[i+1] += g.outStart[i]
	}
	g.outAdj = make([]int, g.outStart[n])
	next := slices.Clone(g.outStart[:n])
	// Filling in (From, To) order keeps every list sorted: node v receives
	// first the From < v of edges (From, v), in increasing From, then the To
	// of its own edges (v, To), in increasing To.
	for _, e := range es {
		g.outAdj[next[e.From]] = e.To
		next[e.From]++
		if !directed {
			g.outAdj[next[e.To]] = e.From
			next[e.To]++
		}
	}
	if !directed {
		g.inStart, g.inAdj = g.outStart, g.outAdj
		return g
	}
	g.inStart = make([]int, n+1)
	for _, e := range es {
		g.inStart[e.To+1]++
	}
	for i := range n {
		g.inStart[i+1] += g.inStart[i]
	}
	g.inAdj = make([]int, len(es))
	copy(next, g.inStart[:n])
	for _, e := range es { // From increases, so every In list is sorted
		g.inAdj[next[e.To]] = e.From
		next[e.To]++
	}
	return g
}

// normalize sorts es in place, orients undirected edges From < To and drops
// duplicates. Ids must already be valid and self-loops absent.
func normalize(es []Edge, directed bool) []Edge {
	if !directed {
		for k, e := range es {
			if e.From > e.To {
				es[k] = Edge{e.To, e.From}
			}
		}
	}
	slices.SortFunc(es, compareEdges)
	return slices.Compact(es)
}

func compareEdges(a, b Edge) int {
	if a.From != b.From {
		return a.From - b.From
	}
	return a.To - b.To
}

// checkN validates a node count for constructor fn.
func checkN(fn string, n, min int) error {
	if n < min || n > MaxNodes {
		return fmt.Errorf("topology: %s: n = %d, want %d <= n <= %d", fn, n, min, MaxNodes)
	}
	return nil
}
