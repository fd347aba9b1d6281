package strategy

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/nn"
)

// quadNet runs one strategy per node on separable quadratics
//
//	f_i(x) = ½ Σ_k h_ik (x_k − c_ik)² + ⟨l_i, x⟩
//
// over a fixed undirected graph, with one exact gradient step as the local
// training (trained = start − η ∇f_i(start)), and records every message.
// The optimum of Σ_i f_i is x*_k = (Σ_i h_ik c_ik − Σ_i l_ik) / Σ_i h_ik.
type quadNet struct {
	adj     [][]int
	h, c, l [][]float64
	eta     func(round int) float64
	models  []*nn.Model
	strats  []Strategy
	seed    uint64
	round   int
	sent    map[msgKey][]float32
}

type msgKey struct {
	from, to, round int
	tag             string
}

// irregularGraph is a ring of six with the chords {0,3} and {1,4}:
// degrees 3, 3, 2, 3, 3, 2.
func irregularGraph() [][]int {
	return [][]int{{1, 3, 5}, {0, 2, 4}, {1, 3}, {0, 2, 4}, {1, 3, 5}, {0, 4}}
}

// newQuadNet draws h in [0.5, 2] and c standard normal from seed; l = 0.
func newQuadNet(t *testing.T, adj [][]int, seed uint64, eta float64, mk func() Strategy) *quadNet {
	t.Helper()
	q := &quadNet{adj: adj, eta: func(int) float64 { return eta }, seed: seed, sent: map[msgKey][]float32{}}
	r := rand.New(rand.NewPCG(seed, 77))
	for range adj {
		m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{2}, Classes: 2}, 1, nn.Options{Batch: 1})
		if err != nil {
			t.Fatal(err)
		}
		d := len(m.Params())
		h, c := make([]float64, d), make([]float64, d)
		for k := range h {
			h[k] = 0.5 + 1.5*r.Float64()
			c[k] = r.NormFloat64()
		}
		clear(m.Params())
		q.models = append(q.models, m)
		q.h, q.c, q.l = append(q.h, h), append(q.c, c), append(q.l, make([]float64, d))
		q.strats = append(q.strats, mk())
	}
	return q
}

// optimum is x* of Σ_i f_i, in float64.
func (q *quadNet) optimum() []float64 {
	d := len(q.h[0])
	x := make([]float64, d)
	for k := range d {
		var num, den float64
		for i := range q.h {
			num += q.h[i][k]*q.c[i][k] - q.l[i][k]
			den += q.h[i][k]
		}
		x[k] = num / den
	}
	return x
}

// step runs one round: train, Share, deliver, Combine.
func (q *quadNet) step(t *testing.T) {
	t.Helper()
	n := len(q.adj)
	views := make([]*View, n)
	inbox := make([][]Incoming, n)
	eta := q.eta(q.round)
	for i, m := range q.models {
		w := m.Params()
		start := slices.Clone(w)
		for k, x := range start {
			g := q.h[i][k]*(float64(x)-q.c[i][k]) + q.l[i][k]
			w[k] = float32(float64(x) - eta*g)
		}
		nd := make([]int, len(q.adj[i]))
		for k, j := range q.adj[i] {
			nd[k] = len(q.adj[j])
		}
		views[i] = &View{ID: i, Round: q.round, Model: m, Start: start, Neighbors: q.adj[i], NeighborDegree: nd,
			Degree: len(q.adj[i]), RNG: rand.New(rand.NewPCG(q.seed, uint64(i)<<32|uint64(q.round))), LR: eta, Steps: 1}
	}
	for i, s := range q.strats {
		for _, o := range s.Share(views[i]) {
			to := q.adj[i]
			if o.To != Broadcast {
				to = []int{o.To}
			}
			for _, j := range to {
				vcopy := slices.Clone(o.Vector)
				q.sent[msgKey{i, j, q.round, o.Tag}] = vcopy
				inbox[j] = append(inbox[j], Incoming{From: i, Tag: o.Tag, Vector: vcopy})
			}
		}
	}
	for i, s := range q.strats {
		slices.SortStableFunc(inbox[i], func(a, b Incoming) int {
			if a.From != b.From {
				return a.From - b.From
			}
			if a.Tag < b.Tag {
				return -1
			}
			if a.Tag > b.Tag {
				return 1
			}
			return 0
		})
		if _, err := s.Combine(views[i], inbox[i]); err != nil {
			t.Fatalf("node %d round %d: %v", i, q.round, err)
		}
	}
	q.round++
}

// run runs rounds and returns the largest |x_ik − x*_k|.
func (q *quadNet) run(t *testing.T, rounds int) float64 {
	t.Helper()
	for range rounds {
		q.step(t)
	}
	opt := q.optimum()
	worst := 0.0
	for _, m := range q.models {
		for k, x := range m.Params() {
			worst = max(worst, math.Abs(float64(x)-opt[k]))
		}
	}
	return worst
}

// maxDiff is the largest difference between two runs' messages to the
// nodes in to (both runs must have sent the same set of messages).
func maxDiff(t *testing.T, a, b *quadNet, to []int) float64 {
	t.Helper()
	worst := 0.0
	for key, va := range a.sent {
		if !slices.Contains(to, key.to) {
			continue
		}
		vb, ok := b.sent[key]
		if !ok || len(vb) != len(va) {
			t.Fatalf("message %+v missing in the second run", key)
		}
		for k := range va {
			worst = max(worst, math.Abs(float64(va[k])-float64(vb[k])))
		}
	}
	return worst
}
