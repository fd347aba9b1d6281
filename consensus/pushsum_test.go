package consensus

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/topology"
)

// diProblem is a 20-node instance on Digraph(20, 2, 5) (the ring plus two
// random arcs per node) with x_i(0) uniform on [0, 1).
func diProblem(t *testing.T, iters int, sd uint64) *Problem {
	g, err := Digraph(20, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(sd, 98))
	x := make([]float64, 20)
	for i := range x {
		x[i] = r.Float64()
	}
	return &Problem{G: g, X0: x, Iters: iters, Seed: sd, Record: true}
}

// TestDigraph: strongly connected, really directed (some arc has no
// reverse), and not every node has the same in- and out-degree (so the
// weights are column- but not doubly stochastic: plain x(k+1) = P x(k)
// would not reach the average; push-sum's ratio does).
func TestDigraph(t *testing.T) {
	p := diProblem(t, 0, 0)
	g := p.G
	if g.Undirected() || !topology.IsStronglyConnected(g) {
		t.Fatal("not a strongly connected digraph")
	}
	oneWay, unbalanced := false, false
	for i := range g.N() {
		for _, j := range g.Out(i) {
			oneWay = oneWay || !g.HasEdge(j, i)
		}
		unbalanced = unbalanced || g.InDegree(i) != g.OutDegree(i)
	}
	if !oneWay || !unbalanced {
		t.Fatalf("one-way arc: %v, unbalanced node: %v", oneWay, unbalanced)
	}
}

// TestPushSumExact: push-sum and [166]'s decomposition reach the float64
// mean (computed by exact, independently of the trace) within 1e-6 on the
// 20-node digraph; the decomposition's first messages are not x_i(0).
func TestPushSumExact(t *testing.T) {
	p := diProblem(t, 300, 2)
	ps, err := PushSum(p)
	if err != nil {
		t.Fatal(err)
	}
	exact(t, "push-sum", p, ps)
	sd, err := PushSumDecomposition{}.Run(p)
	if err != nil {
		t.Fatal(err)
	}
	exact(t, "push-sum decomposition [166]", p, sd)
	for i := range p.G.N() {
		c := Curious{Target: i, Colluders: p.G.Out(i)[:1]}
		if got := c.RecoverPushSum(sd); !(math.Abs(got-p.X0[i]) >= 1e-3) {
			t.Fatalf("[166]: the first push's ratio %v is within 1e-3 of x_%d(0) = %v", got, i, p.X0[i])
		}
	}
}

// TestPushSumLeaks: under plain push-sum any out-neighbour reads x_i(0) as
// the ratio of the two parts of i's first push, exactly (one rounding).
func TestPushSumLeaks(t *testing.T) {
	p := diProblem(t, 10, 3)
	tr, err := PushSum(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.G.N() {
		for _, j := range p.G.Out(i) {
			c := Curious{Target: i, Colluders: []int{j}}
			if got := c.RecoverPushSum(tr); !(math.Abs(got-p.X0[i]) <= 1e-15) {
				t.Fatalf("out-neighbour %d recovers %v for x_%d(0) = %v", j, got, i, p.X0[i])
			}
		}
	}
}

// TestPushSumDecompIndistinguishable is [166]'s privacy claim, built: the
// target i has a neighbour m outside the coalition with arcs both ways.
// A second execution with x'_i(0) = x_i(0) + δ, x'_m(0) = x_m(0) − δ, the
// same α^x(0) (so β'^x_i(0) = β^x_i(0) + 2δ, β'^x_m(0) = β^x_m(0) − 2δ)
// and new first-step weights private to i and m gives every sub-state's
// two masses after step 0 their first values. With shares s = a/(d⁺+2),
// C = c/(d⁺+2), Q = q/2 (docs/methods/p2p-consensus.md):
//
//	Δ   = 2δ / (α_i − α_m)                       added to both s_mi and s_im
//	t_i = 2δ (1 − Q_i) / (β'_i − α_i)            added to both C_i and Q_i
//	t_m = −2δ (1 − Q_m) / (β'_m − α_m)           added to both C_m and Q_m
//
// Δ moves the extra 2δ of value from pair i to pair m over the unseen arcs
// i → m and m → i while their weight flows cancel; t keeps β's two masses.
// Every new weight must lie in [Lo, 1].
func TestPushSumDecompIndistinguishable(t *testing.T) {
	p := diProblem(t, 200, 6)
	s := PushSumDecomposition{}
	n := p.G.N()
	alpha := make([]float64, n)
	for j := range n {
		alpha[j] = s.DefaultAlpha0(p.Seed, j)
	}
	out := func(i, j, k int) float64 { return s.DefaultOut(p.Seed, i, j, k) }
	coup := func(i, k int) (float64, float64) { return s.DefaultCoupling(p.Seed, i, k) }
	deg := func(i int) float64 { return float64(p.G.OutDegree(i) + 2) }
	in := func(w float64) bool { return w >= s.lo() && w <= 1 }
	type plan struct {
		i, m                        int
		d, ami, aim, ci, qi, cm, qm float64
	}
	var pl *plan
search:
	for i := range n {
		for _, m := range p.G.Out(i) {
			if !p.G.HasEdge(m, i) {
				continue
			}
			for _, d := range []float64{0.05, -0.05, 0.02, -0.02, 0.01, -0.01} {
				delta := 2 * d / (alpha[i] - alpha[m])
				ci, qi := coup(i, 0)
				cm, qm := coup(m, 0)
				Ci, Qi, Cm, Qm := ci/deg(i), qi/2, cm/deg(m), qm/2
				bi := 2*(p.X0[i]+d) - alpha[i]
				bm := 2*(p.X0[m]-d) - alpha[m]
				ti := 2 * d * (1 - Qi) / (bi - alpha[i])
				tm := -2 * d * (1 - Qm) / (bm - alpha[m])
				c := plan{i, m, d,
					(out(i, m, 0)/deg(i) + delta) * deg(i), (out(m, i, 0)/deg(m) + delta) * deg(m),
					(Ci + ti) * deg(i), 2 * (Qi + ti), (Cm + tm) * deg(m), 2 * (Qm + tm)}
				if in(c.ami) && in(c.aim) && in(c.ci) && in(c.qi) && in(c.cm) && in(c.qm) {
					pl = &c
					break search
				}
			}
		}
	}
	if pl == nil {
		t.Fatal("no (i, m, δ) with all modified weights in range")
	}
	var coal []int
	for _, j := range p.G.Out(pl.i) {
		if j != pl.m {
			coal = append(coal, j)
		}
	}
	for _, j := range p.G.In(pl.i) {
		if j != pl.m && !slices.Contains(coal, j) {
			coal = append(coal, j)
		}
	}
	base := PushSumDecomposition{Alpha0: alpha, Out: out, Coupling: coup}
	alt := PushSumDecomposition{Alpha0: alpha,
		Out: func(i, j, k int) float64 {
			switch {
			case k == 0 && i == pl.i && j == pl.m:
				return pl.ami
			case k == 0 && i == pl.m && j == pl.i:
				return pl.aim
			}
			return out(i, j, k)
		},
		Coupling: func(i, k int) (float64, float64) {
			switch {
			case k == 0 && i == pl.i:
				return pl.ci, pl.qi
			case k == 0 && i == pl.m:
				return pl.cm, pl.qm
			}
			return coup(i, k)
		}}
	q := *p
	q.X0 = slices.Clone(p.X0)
	q.X0[pl.i] += pl.d
	q.X0[pl.m] -= pl.d
	t1, err := base.Run(p)
	if err != nil {
		t.Fatal(err)
	}
	t2, err := alt.Run(&q)
	if err != nil {
		t.Fatal(err)
	}
	exact(t, "execution 1", p, t1)
	exact(t, "execution 2", &q, t2)
	c := Curious{Target: pl.i, Colluders: coal}
	worst := sameView(t, c.View(t1), c.View(t2))
	t.Logf("target %d, hidden neighbour %d, coalition %v (every other in- and out-neighbour), δ = %v: views differ by %.3g",
		pl.i, pl.m, coal, pl.d, worst)
	// The hidden neighbour's view does differ: the construction is not void.
	if v1, v2 := (Curious{Target: pl.i, Colluders: []int{pl.m}}).View(t1), (Curious{Target: pl.i, Colluders: []int{pl.m}}).View(t2); len(v1) == len(v2) {
		diff := 0.0
		for k := range v1 {
			diff = max(diff, math.Abs(v1[k].Value-v2[k].Value))
		}
		if !(diff > 1e-6) {
			t.Fatal("m's view is the same too: the executions do not differ where they should")
		}
	}
}

// TestPushSumChecked: a graph that is not strongly connected is refused.
func TestPushSumChecked(t *testing.T) {
	g, err := topology.FromEdges(3, []topology.Edge{{From: 0, To: 1}, {From: 1, To: 2}}, true)
	if err != nil {
		t.Fatal(err)
	}
	p := &Problem{G: g, X0: []float64{1, 2, 3}, Iters: 3}
	if _, err := PushSum(p); err == nil {
		t.Error("PushSum ran on a path")
	}
	if _, err := (PushSumDecomposition{}).Run(p); err == nil {
		t.Error("PushSumDecomposition ran on a path")
	}
}

// TestPushSumDecompAllNeighbours: with every in- and out-neighbour
// colluding, the balance of the pair (α_i, β_i) gives x_i(0) (the
// condition of the indistinguishability test is needed).
func TestPushSumDecompAllNeighbours(t *testing.T) {
	p := diProblem(t, 300, 4)
	tr, err := PushSumDecomposition{}.Run(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 9, 17} {
		coal := slices.Clone(p.G.Out(i))
		for _, j := range p.G.In(i) {
			if !slices.Contains(coal, j) {
				coal = append(coal, j)
			}
		}
		c := Curious{Target: i, Colluders: coal}
		if got := c.RecoverPushSumDecomp(p, tr); !(math.Abs(got-p.X0[i]) <= 1e-6) {
			t.Errorf("all neighbours recover %v, x_%d(0) = %v", got, i, p.X0[i])
		}
		less := Curious{Target: i, Colluders: coal[1:]}
		if got := less.RecoverPushSumDecomp(p, tr); math.Abs(got-p.X0[i]) <= 1e-6 {
			t.Errorf("a coalition short of one neighbour recovers x_%d(0)", i)
		}
	}
}
