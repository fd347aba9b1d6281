package topology

import (
	"math"
	"strings"
	"testing"
)

func mustGraph(t *testing.T, g *Graph, err error) *Graph {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	checkGraph(t, g)
	return g
}

func allDegrees(t *testing.T, g *Graph, want int) {
	t.Helper()
	for i := range g.N() {
		if g.Degree(i) != want {
			t.Fatalf("Degree(%d) = %d, want %d", i, g.Degree(i), want)
		}
	}
}

func TestComplete(t *testing.T) {
	for _, n := range []int{1, 2, 5, 30} {
		g, err := Complete(n)
		g = mustGraph(t, g, err)
		if !g.Undirected() || g.NumEdges() != n*(n-1)/2 {
			t.Errorf("Complete(%d): %d edges, want %d", n, g.NumEdges(), n*(n-1)/2)
		}
		allDegrees(t, g, n-1)
	}
}

func TestRing(t *testing.T) {
	for _, n := range []int{3, 4, 11} {
		g, err := Ring(n)
		g = mustGraph(t, g, err)
		if g.NumEdges() != n {
			t.Errorf("Ring(%d): %d edges", n, g.NumEdges())
		}
		allDegrees(t, g, 2)
		for i := range n {
			if !g.HasEdge(i, (i+1)%n) {
				t.Errorf("Ring(%d): no edge %d-%d", n, i, (i+1)%n)
			}
		}
		if !IsConnected(g) {
			t.Errorf("Ring(%d) not connected", n)
		}
	}
}

func TestStar(t *testing.T) {
	g, err := Star(6, 2)
	g = mustGraph(t, g, err)
	if g.NumEdges() != 5 || g.Degree(2) != 5 {
		t.Fatalf("Star(6, 2): %d edges, center degree %d", g.NumEdges(), g.Degree(2))
	}
	for i := range 6 {
		if i != 2 && (g.Degree(i) != 1 || !g.HasEdge(i, 2)) {
			t.Errorf("leaf %d: degree %d", i, g.Degree(i))
		}
	}
	g, err = Star(1, 0)
	if g = mustGraph(t, g, err); g.NumEdges() != 0 {
		t.Error("Star(1, 0) has edges")
	}
}

func TestKRegular(t *testing.T) {
	for _, c := range []struct{ n, k int }{
		{1, 0}, {5, 0}, {4, 1}, {10, 3}, {10, 9}, {11, 10}, {12, 5}, {100, 5}, {101, 6}, {50, 25 - 1}, {200, 17 - 1},
	} {
		g, err := KRegular(c.n, c.k, 7)
		g = mustGraph(t, g, err)
		allDegrees(t, g, c.k)
		if g.NumEdges() != c.n*c.k/2 {
			t.Errorf("KRegular(%d, %d): %d edges", c.n, c.k, g.NumEdges())
		}
		h, _ := KRegular(c.n, c.k, 7)
		if !h.Equal(g) {
			t.Errorf("KRegular(%d, %d): same seed, different graph", c.n, c.k)
		}
	}
	a, _ := KRegular(100, 5, 1)
	b, _ := KRegular(100, 5, 2)
	if a.Equal(b) {
		t.Error("KRegular(100, 5): seeds 1 and 2 give the same graph")
	}
	c, _ := KRegular(100, 4, 1)
	lattice := 0
	for i := range 100 {
		if c.HasEdge(i, (i+1)%100) {
			lattice++
		}
	}
	if lattice > 10 {
		t.Errorf("KRegular(100, 4) keeps %d of the circulant's 100 ring edges: not randomized", lattice)
	}
}

// TestKRegularUniform checks the switch chain's law on the smallest case with
// two shapes: of the 70 labeled 2-regular graphs on 6 nodes, 10 are two
// triangles (C(6,3)/2) and 60 are 6-cycles (5!/2), so a uniform sampler
// gives two triangles with probability 1/7.
func TestKRegularUniform(t *testing.T) {
	const trials = 3000
	triangles := 0
	for s := range trials {
		g, err := KRegular(6, 2, uint64(s))
		if err != nil {
			t.Fatal(err)
		}
		if NumComponents(g) == 2 {
			triangles++
		}
	}
	p := float64(triangles) / trials
	sigma := math.Sqrt(1.0 / 7 * 6 / 7 / trials)
	if math.Abs(p-1.0/7) > 5*sigma {
		t.Errorf("two-triangle frequency %.4f, want 1/7 = %.4f ± %.4f", p, 1.0/7, 5*sigma)
	}
}

func TestErdosRenyi(t *testing.T) {
	const n = 200
	for _, p := range []float64{0.02, 0.3} {
		g, err := ErdosRenyi(n, p, 3)
		g = mustGraph(t, g, err)
		pairs := float64(n * (n - 1) / 2)
		mean, sd := p*pairs, math.Sqrt(pairs*p*(1-p))
		if math.Abs(float64(g.NumEdges())-mean) > 5*sd {
			t.Errorf("G(%d, %v): %d edges, want %.0f ± %.0f", n, p, g.NumEdges(), mean, 5*sd)
		}
		h, _ := ErdosRenyi(n, p, 3)
		o, _ := ErdosRenyi(n, p, 4)
		if !h.Equal(g) || o.Equal(g) {
			t.Errorf("G(%d, %v): same seed must agree, different seeds differ", n, p)
		}
	}
	g, err := ErdosRenyi(20, 0, 1)
	if g = mustGraph(t, g, err); g.NumEdges() != 0 {
		t.Error("G(n, 0) has edges")
	}
	g, err = ErdosRenyi(20, 1, 1)
	if g = mustGraph(t, g, err); g.NumEdges() != 190 {
		t.Error("G(n, 1) is not complete")
	}
}

func TestSmallWorld(t *testing.T) {
	g, err := SmallWorld(20, 4, 0, 1)
	g = mustGraph(t, g, err)
	allDegrees(t, g, 4)
	for i := range 20 {
		if !g.HasEdge(i, (i+1)%20) || !g.HasEdge(i, (i+2)%20) {
			t.Fatalf("beta = 0: lattice edge of %d missing", i)
		}
	}
	for _, beta := range []float64{0.1, 0.5, 1} {
		g, err := SmallWorld(100, 6, beta, 9)
		g = mustGraph(t, g, err)
		if g.NumEdges() != 300 {
			t.Errorf("beta = %v: %d edges, want n*k/2 = 300", beta, g.NumEdges())
		}
		rewired := 0
		for i := range 100 {
			for d := 1; d <= 3; d++ {
				if !g.HasEdge(i, (i+d)%100) {
					rewired++
				}
			}
		}
		// Each lattice edge is rewired with probability beta (a rewired
		// edge lands back on a lattice pair only rarely).
		if f := float64(rewired) / 300; math.Abs(f-beta) > 0.12 {
			t.Errorf("beta = %v: %.2f of lattice edges rewired", beta, f)
		}
		h, _ := SmallWorld(100, 6, beta, 9)
		o, _ := SmallWorld(100, 6, beta, 10)
		if !h.Equal(g) || o.Equal(g) {
			t.Errorf("beta = %v: same seed must agree, different seeds differ", beta)
		}
	}
	// k = n-1 leaves nothing to rewire to; the lattice is complete.
	g, err = SmallWorld(5, 4, 1, 1)
	if g = mustGraph(t, g, err); g.NumEdges() != 10 {
		t.Errorf("SmallWorld(5, 4, 1): %d edges", g.NumEdges())
	}
}

func TestConstructorErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		f     func() (*Graph, error)
		words []string
	}{
		{"Complete(0)", func() (*Graph, error) { return Complete(0) }, []string{"Complete", "n = 0", "1 <= n"}},
		{"Ring(2)", func() (*Graph, error) { return Ring(2) }, []string{"Ring", "n = 2", "3 <= n"}},
		{"Star(4, 4)", func() (*Graph, error) { return Star(4, 4) }, []string{"center = 4", "0 <= center < n = 4"}},
		{"Star(4, -1)", func() (*Graph, error) { return Star(4, -1) }, []string{"center = -1"}},
		{"KRegular(5, 3)", func() (*Graph, error) { return KRegular(5, 3, 0) }, []string{"n*k = 5*3 is odd"}},
		{"KRegular(5, 5)", func() (*Graph, error) { return KRegular(5, 5, 0) }, []string{"k = 5", "0 <= k < n = 5"}},
		{"KRegular(5, -1)", func() (*Graph, error) { return KRegular(5, -1, 0) }, []string{"k = -1"}},
		{"KRegular(0, 0)", func() (*Graph, error) { return KRegular(0, 0, 0) }, []string{"n = 0"}},
		{"ErdosRenyi p<0", func() (*Graph, error) { return ErdosRenyi(5, -0.1, 0) }, []string{"p = -0.1", "0 <= p <= 1"}},
		{"ErdosRenyi NaN", func() (*Graph, error) { return ErdosRenyi(5, math.NaN(), 0) }, []string{"p = NaN"}},
		{"ErdosRenyi p>1", func() (*Graph, error) { return ErdosRenyi(5, 1.5, 0) }, []string{"p = 1.5"}},
		{"SmallWorld odd k", func() (*Graph, error) { return SmallWorld(10, 3, 0.1, 0) }, []string{"k = 3", "even"}},
		{"SmallWorld k=n", func() (*Graph, error) { return SmallWorld(10, 10, 0.1, 0) }, []string{"k = 10", "2 <= k < n = 10"}},
		{"SmallWorld k=0", func() (*Graph, error) { return SmallWorld(10, 0, 0.1, 0) }, []string{"k = 0"}},
		{"SmallWorld beta", func() (*Graph, error) { return SmallWorld(10, 4, 2, 0) }, []string{"beta = 2", "0 <= beta <= 1"}},
		{"SmallWorld n", func() (*Graph, error) { return SmallWorld(2, 2, 0, 0) }, []string{"n = 2", "3 <= n"}},
	} {
		g, err := c.f()
		if err == nil || g != nil {
			t.Errorf("%s: got (%v, %v), want an error", c.name, g, err)
			continue
		}
		for _, w := range c.words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", c.name, err, w)
			}
		}
	}
}
