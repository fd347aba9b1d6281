package topology

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// refMix is SplitMix64 (Steele, Lea, Flood 2014), written out again here so
// the test does not trust the package's copy.
func refMix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// refTorus is the torus distance as the minimum over the nine images of b.
func refTorus(a, b [2]float64, side float64) float64 {
	best := math.Inf(1)
	for _, kx := range []float64{-1, 0, 1} {
		for _, ky := range []float64{-1, 0, 1} {
			dx, dy := a[0]-b[0]+kx*side, a[1]-b[1]+ky*side
			best = min(best, math.Sqrt(float64(dx*dx)+float64(dy*dy)))
		}
	}
	return best
}

// TestMobilityWorkedExample pins seed 2, four nodes, rounds 0 and 1: the
// positions are the first draws of the documented generator, and every edge
// and non-edge is checked against the distance worked out by hand.
func TestMobilityWorkedExample(t *testing.T) {
	m, err := NewMobility(DefaultMobility(4, 2))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]Point{
		{
			{23.55603722314845, 44.68716392720764},
			{73.27145920584374, 37.166648562436464},
			{85.10782797543598, 24.590678278589028},
			{11.238135570009211, 3.481870717161073},
		},
		{
			{19.043339356822777, 39.09594225006841},
			{68.90317543446184, 29.831245908288032},
			{92.96513214154584, 22.898753570269342},
			{10.9376532294724, 11.075424989758975},
		},
	}
	// Distances by hand (per axis |Δ| or 100-|Δ| when shorter, then the
	// hypotenuse), to 0.1:
	hand := []map[Edge]float64{
		{ // round 0
			{0, 1}: 50.3, // Δx 49.72, Δy 7.52
			{0, 2}: 43.4, // Δx 61.55 → 38.45 across the wrap, Δy 20.10
			{0, 3}: 43.0, // Δx 12.32, Δy 41.21
			{1, 2}: 17.3, // Δx 11.84, Δy 12.58: an edge
			{1, 3}: 50.8, // Δx 62.03 → 37.97, Δy 33.68
			{2, 3}: 33.6, // Δx 73.87 → 26.13, Δy 21.11: an edge only across the wrap
		},
		{ // round 1
			{0, 1}: 50.7, // Δx 49.86, Δy 9.26
			{0, 2}: 30.7, // Δx 73.92 → 26.08, Δy 16.20: across the wrap
			{0, 3}: 29.2, // Δx 8.11, Δy 28.02
			{1, 2}: 25.0, // Δx 24.06, Δy 6.93
			{1, 3}: 46.0, // Δx 57.97 → 42.03, Δy 18.76
			{2, 3}: 21.5, // Δx 82.03 → 17.97, Δy 11.82
		},
	}
	wantEdges := [][]Edge{{{1, 2}, {2, 3}}, {{0, 2}, {0, 3}, {1, 2}, {2, 3}}}
	for round := range 2 {
		pos := m.Positions(round)
		if !slices.Equal(pos, want[round]) {
			t.Fatalf("round %d: positions %v, want %v", round, pos, want[round])
		}
		for e, d := range hand[round] {
			got := TorusDistance(pos[e.From], pos[e.To], TorusSide)
			if math.Abs(got-d) > 0.05 {
				t.Errorf("round %d: distance %v = %.3f, hand %.1f", round, e, got, d)
			}
		}
		if g := m.At(round); !slices.Equal(g.Edges(), wantEdges[round]) {
			t.Errorf("round %d: edges %v, want %v", round, g.Edges(), wantEdges[round])
		}
	}
}

// TestMobilityReplicatesGenerator rebuilds positions and edges from the
// generator documented on Mobility, independently of the package's code.
func TestMobilityReplicatesGenerator(t *testing.T) {
	const n, rounds = 12, 60
	const seed uint64 = 42
	h := refMix(refMix(refMix(seed)^4) ^ 0)
	r := rand.New(rand.NewPCG(h, refMix(h^0x6a09e667f3bcc909)))
	pos := make([][2]float64, n)
	for i := range pos {
		pos[i][0] = 100 * r.Float64()
		pos[i][1] = 100 * r.Float64()
	}
	m, err := NewMobility(DefaultMobility(n, seed))
	if err != nil {
		t.Fatal(err)
	}
	wraps, edges, nonEdges := 0, 0, 0
	for round := 0; round <= rounds; round++ {
		if round > 0 {
			for i := range pos {
				for a := range 2 {
					x := pos[i][a] + float64(8*(2*r.Float64()-1))
					switch {
					case x >= 100:
						x -= 100
						wraps++
					case x < 0:
						x += 100
						wraps++
					}
					pos[i][a] = x
				}
			}
		}
		got := m.Positions(round)
		for i, p := range got {
			if p.X != pos[i][0] || p.Y != pos[i][1] {
				t.Fatalf("round %d node %d: position %v, replicated %v", round, i, p, pos[i])
			}
		}
		g := m.At(round)
		checkGraph(t, g)
		for i := range n {
			for j := i + 1; j < n; j++ {
				d := refTorus(pos[i], pos[j], 100)
				if (d < 40) != g.HasEdge(i, j) {
					t.Fatalf("round %d: pair (%d, %d) at distance %v: edge %v", round, i, j, d, g.HasEdge(i, j))
				}
				if d < 40 {
					edges++
				} else {
					nonEdges++
				}
			}
		}
	}
	if wraps == 0 || edges == 0 || nonEdges == 0 {
		t.Fatalf("weak test: %d wraps, %d edges, %d non-edges", wraps, edges, nonEdges)
	}
}

func TestWrap(t *testing.T) {
	for _, c := range []struct{ x, d, want float64 }{
		{99, 8, 7},     // a worked example: near 99, +8 lands near 7
		{99.5, 8, 7.5}, //
		{92, 8, 0},     // exactly A maps to 0
		{3, -8, 95},    //
		{0, -8, 92},    //
		{50, 8, 58},    // no wrap
		{50, -8, 42},   //
	} {
		if got := wrap(c.x, c.d, 100); got != c.want {
			t.Errorf("wrap(%v, %v) = %v, want %v", c.x, c.d, got, c.want)
		}
	}
	// A step so small that x+δ+A rounds to A must still land in [0, A).
	if got := wrap(0, -1e-18, 100); got < 0 || got >= 100 {
		t.Errorf("wrap(0, -1e-18) = %v, outside [0, 100)", got)
	}
}

func TestTorusDistance(t *testing.T) {
	for _, c := range []struct {
		a, b Point
		want float64
	}{
		{Point{1, 50}, Point{95, 50}, 6},              // across the x wrap
		{Point{50, 99}, Point{50, 7}, 8},              // across the y wrap
		{Point{0, 0}, Point{40, 0}, 40},               //
		{Point{0, 0}, Point{24, 32}, 40},              // 3-4-5 triangle, scaled by 8
		{Point{2, 2}, Point{78, 70}, 40},              // both axes wrap: 24, 32
		{Point{0, 0}, Point{50, 50}, math.Sqrt(5000)}, // the farthest two points can be
	} {
		if got := TorusDistance(c.a, c.b, 100); got != c.want {
			t.Errorf("TorusDistance(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := TorusDistance(c.b, c.a, 100); got != c.want {
			t.Errorf("TorusDistance not symmetric on %v, %v", c.a, c.b)
		}
	}
}

// TestStrictContactRange: a pair exactly r_c apart is not linked
// (the DMTT paper: edge iff torus distance < r_c).
func TestStrictContactRange(t *testing.T) {
	for _, c := range []struct {
		a, b Point
		edge bool
	}{
		{Point{0, 0}, Point{40, 0}, false},
		{Point{0, 0}, Point{math.Nextafter(40, 0), 0}, true},
		{Point{0, 0}, Point{24, 32}, false},
		{Point{10, 10}, Point{70, 10}, false}, // 60 apart directly, 40 across the wrap
		{Point{10, 10}, Point{70.5, 10}, true},
		{Point{99, 0}, Point{59, 0}, false},
		{Point{99, 0}, Point{59.5, 0}, true},
		{Point{2, 2}, Point{78, 70}, false},
		{Point{2, 2}, Point{78.5, 70}, true},
		{Point{1, 50}, Point{95, 50}, true},
	} {
		g, err := TorusGraph([]Point{c.a, c.b}, TorusSide, ContactRange, false)
		if err != nil {
			t.Fatal(err)
		}
		if g.HasEdge(0, 1) != c.edge || g.HasEdge(1, 0) != c.edge {
			t.Errorf("%v–%v at %v: edge %v, want %v", c.a, c.b, TorusDistance(c.a, c.b, 100), g.HasEdge(0, 1), c.edge)
		}
	}
	// The same rule through Mobility: set r_c to the exact distance of a pair.
	cfg := DefaultMobility(10, 5)
	m, _ := NewMobility(cfg)
	p := m.Positions(3)
	d := TorusDistance(p[0], p[1], TorusSide)
	cfg.Range = d
	m, _ = NewMobility(cfg)
	if m.At(3).HasEdge(0, 1) {
		t.Errorf("pair at distance exactly r_c = %v linked", d)
	}
	cfg.Range = math.Nextafter(d, math.Inf(1))
	m, _ = NewMobility(cfg)
	if !m.At(3).HasEdge(0, 1) {
		t.Errorf("pair at distance %v < r_c = %v not linked", d, cfg.Range)
	}
}

func TestConnectivityGuarantee(t *testing.T) {
	// 0 and 3 are isolated, 1–2 are linked. In id order 0 links to its
	// nearest peer 3 (50 away; 1 is 70.7, 2 is 69.3), after which 3 is no
	// longer isolated — though its own nearest peer would be 2 (48 away).
	pts := []Point{{0, 0}, {50, 50}, {52, 50}, {0, 50}}
	g, err := TorusGraph(pts, TorusSide, ContactRange, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(Isolated(g), []int{0, 3}) {
		t.Fatalf("without the guarantee: isolated %v, want [0 3]", Isolated(g))
	}
	g, _ = TorusGraph(pts, TorusSide, ContactRange, true)
	checkGraph(t, g)
	if want := []Edge{{0, 3}, {1, 2}}; !slices.Equal(g.Edges(), want) {
		t.Errorf("with the guarantee: edges %v, want %v", g.Edges(), want)
	}
	// Ties go to the lower id: 1 and 2 are both 50 from 0.
	g, _ = TorusGraph([]Point{{50, 50}, {0, 50}, {50, 0}}, TorusSide, ContactRange, true)
	if want := []Edge{{0, 1}, {0, 2}}; !slices.Equal(g.Edges(), want) {
		t.Errorf("tie: edges %v, want %v", g.Edges(), want)
	}
	// A single node has no peer to link to.
	g, _ = TorusGraph([]Point{{1, 1}}, TorusSide, ContactRange, true)
	if g.NumEdges() != 0 {
		t.Error("single node got an edge")
	}

	// Through the model, with a short range so nodes do get isolated.
	cfg := DefaultMobility(40, 11)
	cfg.Range = 8
	off, _ := NewMobility(cfg)
	cfg.Connect = true
	on, _ := NewMobility(cfg)
	sawIsolated := false
	for round := range 20 {
		gOff, gOn := off.At(round), on.At(round)
		checkGraph(t, gOn)
		iso := Isolated(gOff)
		sawIsolated = sawIsolated || len(iso) > 0
		if got := Isolated(gOn); len(got) != 0 {
			t.Fatalf("round %d: isolated %v with the guarantee", round, got)
		}
		pos := on.Positions(round)
		for _, e := range gOff.Edges() {
			if !gOn.HasEdge(e.From, e.To) {
				t.Fatalf("round %d: guarantee removed edge %v", round, e)
			}
		}
		extra := 0
		for _, e := range gOn.Edges() {
			if gOff.HasEdge(e.From, e.To) {
				continue
			}
			extra++
			// One endpoint was isolated and the other is its nearest peer.
			ok := false
			for _, ij := range [2][2]int{{e.From, e.To}, {e.To, e.From}} {
				i, j := ij[0], ij[1]
				if !slices.Contains(iso, i) {
					continue
				}
				d := TorusDistance(pos[i], pos[j], TorusSide)
				nearest := true
				for k := range pos {
					if k != i && TorusDistance(pos[i], pos[k], TorusSide) < d {
						nearest = false
					}
				}
				ok = ok || nearest
			}
			if !ok {
				t.Fatalf("round %d: added edge %v is not an isolated node's nearest link", round, e)
			}
		}
		if extra > len(iso) {
			t.Fatalf("round %d: %d edges added for %d isolated nodes", round, extra, len(iso))
		}
	}
	if !sawIsolated {
		t.Fatal("weak test: no isolated node without the guarantee")
	}
}

// TestMobilityQueryOrder: G^t depends on t alone, whatever was asked before.
func TestMobilityQueryOrder(t *testing.T) {
	cfg := DefaultMobility(30, 8)
	seq, _ := NewMobility(cfg)
	ref := map[int]*Graph{}
	refPos := map[int][]Point{}
	for round := 0; round <= 200; round++ {
		ref[round] = seq.At(round)
		refPos[round] = seq.Positions(round)
	}
	m, _ := NewMobility(cfg)
	for _, round := range []int{5, 2, 130, 64, 3, 0, 200, 129, 128, 63, 65, 2, 2, 199} {
		if !m.At(round).Equal(ref[round]) {
			t.Errorf("At(%d) after out-of-order queries differs from the sequential one", round)
		}
		if !slices.Equal(m.Positions(round), refPos[round]) {
			t.Errorf("Positions(%d) after out-of-order queries differs", round)
		}
	}
	// Concurrent queries from many goroutines, as from nodes of a simulator.
	c, _ := NewMobility(cfg)
	var wg sync.WaitGroup
	errs := make(chan int, 64)
	for w := range 8 {
		wg.Go(func() {
			for k := range 20 {
				round := (w*37 + k*53) % 201
				if !c.At(round).Equal(ref[round]) {
					errs <- round
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for round := range errs {
		t.Errorf("concurrent At(%d) differs", round)
	}
}

func TestMobilitySeedsAndDensity(t *testing.T) {
	a, _ := NewMobility(DefaultMobility(200, 1))
	b, _ := NewMobility(DefaultMobility(200, 1))
	c, _ := NewMobility(DefaultMobility(200, 2))
	if !a.At(3).Equal(b.At(3)) || a.At(3).Equal(c.At(3)) {
		t.Error("same seed must agree and different seeds differ")
	}
	// On the torus every node sees the same disc: expected degree
	// (n-1)·π·r_c²/A² = 199·0.5027 ≈ 100.0.
	var sum float64
	for round := range 5 {
		s := OutDegreeStats(a.At(round))
		sum += s.Mean
	}
	if mean := sum / 5; math.Abs(mean-100.0) > 5 {
		t.Errorf("mean degree %.1f, want about 100.0", mean)
	}
	if a.N() != 200 || a.Config().Range != 40 {
		t.Error("N or Config wrong")
	}
	var d Dynamic = a
	_ = d
}

func TestMobilityErrors(t *testing.T) {
	base := DefaultMobility(10, 1)
	for _, c := range []struct {
		mod   func(*MobilityConfig)
		words []string
	}{
		{func(c *MobilityConfig) { c.N = 0 }, []string{"n = 0"}},
		{func(c *MobilityConfig) { c.Side = 0 }, []string{"Side = 0", "> 0"}},
		{func(c *MobilityConfig) { c.Side = math.Inf(1) }, []string{"Side = +Inf"}},
		{func(c *MobilityConfig) { c.MaxStep = -1 }, []string{"MaxStep = -1", ">= 0"}},
		{func(c *MobilityConfig) { c.Range = math.NaN() }, []string{"Range = NaN"}},
	} {
		cfg := base
		c.mod(&cfg)
		if _, err := NewMobility(cfg); err == nil || !strings.Contains(err.Error(), c.words[0]) {
			t.Errorf("%+v: error %v, want %q", cfg, err, c.words)
		}
	}
	for _, c := range []struct {
		pts      []Point
		side, rc float64
		word     string
	}{
		{nil, 100, 40, "n = 0"},
		{[]Point{{0, 0}}, 0, 40, "side = 0"},
		{[]Point{{0, 0}}, 100, -1, "rc = -1"},
		{[]Point{{0, 0}, {100, 3}}, 100, 40, "point 1 = (100, 3)"},
		{[]Point{{math.NaN(), 0}}, 100, 40, "point 0"},
	} {
		if _, err := TorusGraph(c.pts, c.side, c.rc, false); err == nil || !strings.Contains(err.Error(), c.word) {
			t.Errorf("TorusGraph(%v, %v, %v): error %v, want %q", c.pts, c.side, c.rc, err, c.word)
		}
	}
	m, _ := NewMobility(base)
	defer func() {
		if recover() == nil {
			t.Error("At(-1) did not panic")
		}
	}()
	m.At(-1)
}

// TestBelowThreshold: comparing squared distances with the threshold decides
// exactly as comparing the square root with r_c.
func TestBelowThreshold(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, rc := range []float64{40, 0, 0.1, 3, 7.3, 1e-200, 5e-324, 1e150, 1e200, math.Sqrt(2), r.Float64() * 100} {
		th := belowThreshold(rc)
		check := func(d2 float64) {
			if (math.Sqrt(d2) < rc) != (d2 < th) {
				t.Fatalf("rc = %v, d2 = %v: sqrt rule %v, threshold rule %v (T = %v)", rc, d2, math.Sqrt(d2) < rc, d2 < th, th)
			}
		}
		check(0)
		check(th)
		d := th
		for range 50 {
			d = math.Nextafter(d, 0)
			check(d)
		}
		d = th
		for range 50 {
			d = math.Nextafter(d, math.Inf(1))
			check(d)
		}
		for range 1000 {
			check(rc * rc * (0.999 + 0.002*r.Float64()))
		}
	}
}
