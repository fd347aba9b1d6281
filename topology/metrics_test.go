package topology

import (
	"math"
	"slices"
	"testing"
)

func TestComponentsUndirected(t *testing.T) {
	// {0, 3, 5}, {1}, {2, 4}, {6}
	g, _ := FromEdges(7, []Edge{{5, 3}, {0, 3}, {4, 2}}, false)
	want := [][]int{{0, 3, 5}, {1}, {2, 4}, {6}}
	if got := Components(g); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Components = %v, want %v", got, want)
	}
	if got := StrongComponents(g); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("StrongComponents = %v, want %v", got, want)
	}
	if NumComponents(g) != 4 || IsConnected(g) || IsStronglyConnected(g) {
		t.Error("connectivity of a 4-component graph")
	}
	if !slices.Equal(Isolated(g), []int{1, 6}) {
		t.Errorf("Isolated = %v", Isolated(g))
	}
	ring, _ := Ring(9)
	if !IsConnected(ring) || !IsStronglyConnected(ring) || NumComponents(ring) != 1 {
		t.Error("ring not connected")
	}
	one, _ := Complete(1)
	if !IsConnected(one) || !IsStronglyConnected(one) || NumComponents(one) != 1 || !slices.Equal(Isolated(one), []int{0}) {
		t.Error("single node")
	}
}

func TestComponentsDirected(t *testing.T) {
	// A directed cycle 0→1→2→0, a path 2→3→4, and 5⇄4.
	g, _ := FromEdges(6, []Edge{{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}, {4, 5}, {5, 4}}, true)
	if !IsConnected(g) || NumComponents(g) != 1 {
		t.Error("weakly connected graph reported disconnected")
	}
	if IsStronglyConnected(g) {
		t.Error("graph with a one-way path reported strongly connected")
	}
	want := [][]int{{0, 1, 2}, {3}, {4, 5}}
	if got := StrongComponents(g); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("StrongComponents = %v, want %v", got, want)
	}
	cycle, _ := FromEdges(4, []Edge{{0, 1}, {1, 2}, {2, 3}, {3, 0}}, true)
	if !IsStronglyConnected(cycle) {
		t.Error("directed cycle not strongly connected")
	}
	// In-star: everybody sends to 0, nobody hears back.
	in, _ := FromEdges(4, []Edge{{1, 0}, {2, 0}, {3, 0}}, true)
	if IsStronglyConnected(in) || !IsConnected(in) || len(StrongComponents(in)) != 4 {
		t.Error("in-star connectivity")
	}
	s := InDegreeStats(in)
	// In-degrees 3, 0, 0, 0: mean 3/4, variance (2.25² + 3·0.75²)/4 = 1.6875.
	if s.Min != 0 || s.Max != 3 || s.Mean != 0.75 || math.Abs(s.Std-math.Sqrt(1.6875)) > 1e-15 {
		t.Errorf("InDegreeStats = %+v", s)
	}
	if o := OutDegreeStats(in); o.Min != 0 || o.Max != 1 || o.Mean != 0.75 {
		t.Errorf("OutDegreeStats = %+v", o)
	}
}

func TestStrongComponentsMatchReachability(t *testing.T) {
	// Against the definition: i and j share a component iff each reaches
	// the other, on random directed graphs.
	for seed := range uint64(20) {
		r := stream(seed, 1000, 0)
		n := 2 + r.IntN(25)
		var es []Edge
		for range r.IntN(3 * n) {
			i, j := r.IntN(n), r.IntN(n)
			if i != j {
				es = append(es, Edge{i, j})
			}
		}
		g, _ := FromEdges(n, es, true)
		reach := make([][]bool, n)
		for s := range n {
			reach[s] = make([]bool, n)
			reach[s][s] = true
			stack := []int{s}
			for len(stack) > 0 {
				v := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, w := range g.Out(v) {
					if !reach[s][w] {
						reach[s][w] = true
						stack = append(stack, w)
					}
				}
			}
		}
		comp := make([]int, n)
		for c, members := range StrongComponents(g) {
			for _, v := range members {
				comp[v] = c
			}
		}
		for i := range n {
			for j := range n {
				if (comp[i] == comp[j]) != (reach[i][j] && reach[j][i]) {
					t.Fatalf("seed %d: %d, %d: same component %v, mutual reach %v", seed, i, j, comp[i] == comp[j], reach[i][j] && reach[j][i])
				}
			}
		}
		if IsStronglyConnected(g) != (len(StrongComponents(g)) == 1) {
			t.Fatalf("seed %d: IsStronglyConnected disagrees with StrongComponents", seed)
		}
	}
}

func TestDegreeStatsStar(t *testing.T) {
	g, _ := Star(5, 0)
	// Degrees 4, 1, 1, 1, 1: mean 8/5, variance (2.4² + 4·0.6²)/5 = 1.44.
	s := OutDegreeStats(g)
	if s.Min != 1 || s.Max != 4 || s.Mean != 1.6 || math.Abs(s.Std-1.2) > 1e-15 {
		t.Errorf("OutDegreeStats = %+v", s)
	}
	if InDegreeStats(g) != s {
		t.Error("undirected in- and out-degree stats differ")
	}
}

func TestStatic(t *testing.T) {
	g, _ := Ring(5)
	d := Static(g)
	if d.N() != 5 || d.At(0) != g || d.At(1000) != g {
		t.Error("Static does not return its graph")
	}
}
