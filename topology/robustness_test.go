package topology

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteRobustness is the definition, enumerated: every assignment of the
// nodes to S1, S2 or neither (3^n), and for each pair with both sets
// nonempty, whether either set has a node with r in-neighbors outside it;
// it returns the largest r for which no pair fails.
func bruteRobustness(g *Graph) int {
	n := g.N()
	side := make([]int, n)
	best := n + 1
	for {
		var reach [3]int
		var size [3]int
		for i, s := range side {
			size[s]++
			if s == 0 {
				continue
			}
			outside := 0
			for j := range n {
				if g.HasEdge(j, i) && side[j] != s {
					outside++
				}
			}
			reach[s] = max(reach[s], outside)
		}
		if size[1] > 0 && size[2] > 0 {
			best = min(best, max(reach[1], reach[2]))
		}
		k := 0
		for k < n && side[k] == 2 {
			side[k] = 0
			k++
		}
		if k == n {
			return best
		}
		side[k]++
	}
}

// randomGraph returns a graph on n nodes with each ordered (directed) or
// unordered pair linked with probability p.
func randomGraph(r *rand.Rand, n int, p float64, directed bool) *Graph {
	var es []Edge
	for i := range n {
		for j := range n {
			if i != j && (directed || i < j) && r.Float64() < p {
				es = append(es, Edge{i, j})
			}
		}
	}
	g, err := FromEdges(n, es, directed)
	if err != nil {
		panic(err)
	}
	return g
}

// checkVerdict checks what every verdict promises: R < Upper, a witness
// pair that is disjoint, nonempty, sorted and violating for Upper (neither
// set Upper-reachable, by Reach), and Exact iff Upper == R + 1.
func checkVerdict(t *testing.T, name string, g *Graph, v Robustness) {
	t.Helper()
	if v.R >= v.Upper || v.Upper > (g.N()+1)/2+1 {
		t.Errorf("%s: R = %d, Upper = %d (n = %d)", name, v.R, v.Upper, g.N())
	}
	if len(v.S1) == 0 || len(v.S2) == 0 || !slices.IsSorted(v.S1) || !slices.IsSorted(v.S2) {
		t.Fatalf("%s: witness %v, %v", name, v.S1, v.S2)
	}
	for _, i := range v.S1 {
		if slices.Contains(v.S2, i) {
			t.Fatalf("%s: witness sets share node %d", name, i)
		}
	}
	if a, b := Reach(g, v.S1), Reach(g, v.S2); max(a, b) >= v.Upper {
		t.Errorf("%s: witness reaches %d and %d, not a violating pair for %d", name, a, b, v.Upper)
	}
	if v.Exact != (v.Upper == v.R+1) {
		t.Errorf("%s: Exact = %v with R = %d, Upper = %d", name, v.Exact, v.R, v.Upper)
	}
}

func robustness(t *testing.T, g *Graph) Robustness {
	t.Helper()
	v, err := RRobustness(g, RobustnessConfig{Samples: 300, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The subset-minimum computation against the definition enumerated
// directly, on random directed and undirected graphs up to 9 nodes.
func TestRobustnessExactMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	seen := map[int]int{}
	for trial := range 120 {
		n := 2 + trial%8
		g := randomGraph(r, n, 0.2+0.7*r.Float64(), trial%2 == 0)
		v := robustness(t, g)
		want := bruteRobustness(g)
		if v.Method != RobustnessExact || v.R != want {
			t.Fatalf("trial %d (n = %d, edges %v): %s R = %d, definition %d", trial, n, g.Edges(), v.Method, v.R, want)
		}
		checkVerdict(t, "random", g, v)
		seen[want]++
	}
	// Several values of r occur.
	if len(seen) < 4 {
		t.Errorf("values of r seen: %v", seen)
	}
}

// K_n is ceil(n/2)-robust and no more, exactly for n <= 20 and by the
// bounds beyond, where the sufficient condition is tight.
func TestRobustnessComplete(t *testing.T) {
	for _, n := range []int{2, 3, 4, 5, 8, 13, 20, 21, 30, 51} {
		g, _ := Complete(n)
		v := robustness(t, g)
		want := (n + 1) / 2
		if v.R != want || !v.Exact || v.Sufficient != want {
			t.Errorf("K_%d: %+v, want R = %d exact, sufficient %d", n, v, want, want)
		}
		if (n <= ExactRobustnessMaxN) != (v.Method == RobustnessExact) {
			t.Errorf("K_%d: method %s", n, v.Method)
		}
		checkVerdict(t, "complete", g, v)
	}
}

// A ring (n >= 4) is 1-robust but not 2-robust: two arcs each have one
// outside neighbor per end; a star is 1-robust, and two leaves show it is
// not 2-robust. Beyond 20 nodes the bounds are exact too: 1-robustness is
// connectivity, and the search finds the arcs or the leaves.
func TestRobustnessRingAndStar(t *testing.T) {
	for _, n := range []int{4, 5, 10, 20, 21, 40, 200} {
		ring, _ := Ring(n)
		star, _ := Star(n, n/3)
		for name, g := range map[string]*Graph{"ring": ring, "star": star} {
			v := robustness(t, g)
			if v.R != 1 || v.Upper != 2 || !v.Exact {
				t.Errorf("%s(%d): %+v, want exactly 1-robust", name, n, v)
			}
			if ok, known := v.Robust(1); !ok || !known {
				t.Errorf("%s(%d): Robust(1) = %v, %v", name, n, ok, known)
			}
			if ok, known := v.Robust(2); ok || !known {
				t.Errorf("%s(%d): Robust(2) = %v, %v", name, n, ok, known)
			}
			checkVerdict(t, name, g, v)
		}
	}
	// Ring(3) is K_3.
	if v := robustness(t, mustRing(3)); v.R != 2 {
		t.Errorf("ring(3): R = %d, want 2", v.R)
	}
}

func mustRing(n int) *Graph {
	g, err := Ring(n)
	if err != nil {
		panic(err)
	}
	return g
}

// Directed graphs: a directed cycle has a rooted out-branching (1-robust),
// an out-star from its center too, an in-star (leaves sending to the
// center) does not: two leaves receive from no one.
func TestRobustnessDirected(t *testing.T) {
	for _, n := range []int{6, 30} {
		var cycle, out, in []Edge
		for i := range n {
			cycle = append(cycle, Edge{i, (i + 1) % n})
			if i > 0 {
				out = append(out, Edge{0, i})
				in = append(in, Edge{i, 0})
			}
		}
		for _, c := range []struct {
			name  string
			edges []Edge
			r     int
		}{{"cycle", cycle, 1}, {"out-star", out, 1}, {"in-star", in, 0}} {
			g, _ := FromEdges(n, c.edges, true)
			v := robustness(t, g)
			if v.R != c.r || !v.Exact {
				t.Errorf("%s(%d): %+v, want exactly %d-robust", c.name, n, v, c.r)
			}
			checkVerdict(t, c.name, g, v)
		}
	}
}

// Disconnected graphs are not 1-robust, by both methods, with two
// components as witness.
func TestRobustnessDisconnected(t *testing.T) {
	for _, n := range []int{6, 40} {
		var es []Edge
		for i := range n - 1 {
			if i != n/2-1 {
				es = append(es, Edge{i, i + 1})
			}
		}
		g, _ := FromEdges(n, es, false)
		v := robustness(t, g)
		if v.R != 0 || v.Upper != 1 {
			t.Errorf("two paths of %d nodes: %+v", n, v)
		}
		checkVerdict(t, "paths", g, v)
	}
}

// Where both apply, the exact value is at least what the sufficient
// condition proves; on graphs dense enough for the condition to prove
// something.
func TestRobustnessSufficientAgreesWithExact(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	applied := 0
	for trial := range 40 {
		n := 6 + trial%11
		g := randomGraph(r, n, 0.75+0.25*r.Float64(), trial%2 == 1)
		v := robustness(t, g)
		minIn := InDegreeStats(g).Min
		want := max(0, min(minIn-n/2+1, (n+1)/2))
		if v.Sufficient != want {
			t.Errorf("n = %d, min in-degree %d: Sufficient = %d, want %d", n, minIn, v.Sufficient, want)
		}
		if v.R < v.Sufficient {
			t.Errorf("n = %d: exact R = %d below the sufficient condition's %d", n, v.R, v.Sufficient)
		}
		if v.Sufficient > 0 {
			applied++
		}
	}
	if applied < 20 {
		t.Errorf("the sufficient condition applied to only %d graphs", applied)
	}
}

// The bounds on small graphs, against the exact value: the lower bound never
// exceeds it, the search never reports a violation that is none, and on
// most graphs it finds a pair that makes the verdict exact.
func TestRobustnessBoundsAgainstExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	exact := 0
	const trials = 60
	for trial := range trials {
		n := 8 + trial%9
		g := randomGraph(r, n, 0.15+0.8*r.Float64(), trial%3 == 0)
		want := robustness(t, g).R
		lower := sufficientR(g)
		if ok, _, _ := oneRobust(g); ok {
			lower = max(lower, 1)
		}
		s := newPairSearch(g)
		s.search(300, uint64(trial))
		upper := s.bestValue + 1
		if lower > want || upper <= want {
			t.Fatalf("n = %d: bounds [%d, %d) do not hold exact %d", n, lower, upper, want)
		}
		if upper == want+1 {
			exact++
		}
	}
	t.Logf("the search found the exact value on %d of %d graphs", exact, trials)
	if exact < trials*3/4 {
		t.Errorf("the search found the exact value on only %d of %d graphs", exact, trials)
	}
}

func TestRobustnessSeededAndErrors(t *testing.T) {
	g, _ := ErdosRenyi(60, 0.3, 7)
	a, _ := RRobustness(g, RobustnessConfig{Seed: 5})
	b, _ := RRobustness(g, RobustnessConfig{Seed: 5})
	if a.R != b.R || a.Upper != b.Upper || !slices.Equal(a.S1, b.S1) || !slices.Equal(a.S2, b.S2) || a.Samples != DefaultRobustnessSamples {
		t.Errorf("same seed, different verdicts: %+v, %+v", a, b)
	}
	checkVerdict(t, "er", g, a)
	if a.Method != RobustnessBounds {
		t.Errorf("n = 60: method %s", a.Method)
	}
	one, _ := Complete(1)
	if _, err := RRobustness(one, RobustnessConfig{}); err == nil {
		t.Error("one node accepted")
	}
	if _, err := RRobustness(g, RobustnessConfig{Samples: -1}); err == nil {
		t.Error("negative samples accepted")
	}
	v := Robustness{R: 2, Upper: 5}
	for r, want := range [][2]bool{{true, true}, {true, true}, {true, true}, {false, false}, {false, false}, {false, true}, {false, true}} {
		if ok, known := v.Robust(r); ok != want[0] || known != want[1] {
			t.Errorf("Robust(%d) = %v, %v; want %v, %v", r, ok, known, want[0], want[1])
		}
	}
}

// BenchmarkRRobustness: the exact enumeration at its limit (K_20, 2^20
// subsets) and the bounds on a 1,000-node Erdős–Rényi graph of mean degree
// about 20 with the default 1,000 samples.
func BenchmarkRRobustness(b *testing.B) {
	k20, _ := Complete(20)
	er, _ := ErdosRenyi(1000, 0.02, 1)
	for _, c := range []struct {
		name string
		g    *Graph
	}{{"exact-K20", k20}, {"bounds-ER1000", er}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := RRobustness(c.g, RobustnessConfig{Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
