package node

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// secAggNet is a little driver for secure-aggregation tests: nodes on an
// undirected graph, every phase's messages delivered along its edges
// unless the sender is silent in that phase (a dropout) or tamper changes
// them.
type secAggNet struct {
	t      *testing.T
	ids    []*wire.Identity
	nodes  []*Node
	layers []*SecAggLayer
	adj    [][]int
	// silent(i, p): node i's messages of phase p are lost.
	silent func(i, p int) bool
	// tamper may replace a message from → to (re-signed by the sender's key).
	tamper func(p int, m *wire.Message) *wire.Message
	// replay delivers every message of phase p twice.
	replay int
}

func newSecAggNet(t *testing.T, adj [][]int, cfg SecAggConfig, withLayer bool) *secAggNet {
	n := len(adj)
	ids, dir := wire.SimIdentities(5, n)
	net := &secAggNet{t: t, ids: ids, adj: adj, replay: -1}
	for i := range n {
		var l *SecAggLayer
		nd := newTestNode(t, i, ids, dir, &strategy.FedAvg{}, func(c *Config) {
			// Distinct starting models, so the means are not trivial.
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for k := range c.Model.Params() {
				c.Model.Params()[k] = float32(rng.NormFloat64())
			}
			if withLayer {
				var err error
				if l, err = NewSecAggLayer(i, c.Model, dir, seed.Seeded(5), cfg); err != nil {
					t.Fatal(err)
				}
				c.Layers = append(c.Layers, l)
			}
		})
		net.nodes, net.layers = append(net.nodes, nd), append(net.layers, l)
	}
	return net
}

// circulant is the graph on n vertices with edges i ~ i ± o for o in offs.
func circulant(n int, offs ...int) [][]int {
	adj := make([][]int, n)
	for i := range adj {
		for _, o := range offs {
			adj[i] = append(adj[i], (i+o)%n, (i-o+n)%n)
		}
		slices.Sort(adj[i])
		adj[i] = slices.Compact(adj[i])
	}
	return adj
}

func (net *secAggNet) round(r int) []Ready {
	t := net.t
	for i, nd := range net.nodes {
		deg := make([]int, len(net.adj[i]))
		for k, j := range net.adj[i] {
			deg[k] = len(net.adj[j])
		}
		if err := nd.Begin(r, Neighborhood{In: net.adj[i], InDegree: deg, Degree: len(net.adj[i])}); err != nil {
			t.Fatal(err)
		}
		if _, err := nd.Train(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for p := 0; ; p++ {
		out := make([][]*wire.Message, len(net.nodes))
		more := false
		for i, nd := range net.nodes {
			var err error
			var m bool
			if out[i], m, err = nd.Outbox(); err != nil {
				t.Fatal(err)
			}
			more = more || m
		}
		for i := range net.nodes {
			if net.silent != nil && net.silent(i, p) {
				continue
			}
			for _, m := range out[i] {
				if net.tamper != nil {
					m = net.tamper(p, m)
				}
				for _, j := range net.adj[i] {
					if m.To != wire.Broadcast && m.To != uint32(j) {
						continue
					}
					_ = net.nodes[j].Step(m)
					if p == net.replay {
						_ = net.nodes[j].Step(m)
					}
				}
			}
		}
		if !more {
			break
		}
	}
	rds := make([]Ready, len(net.nodes))
	for i, nd := range net.nodes {
		var err error
		if rds[i], err = nd.End(EndOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return rds
}

// Through the node interface, on a graph whose neighbourhoods are not
// cliques (members reach each other only through the aggregator): the
// group mean is FedAvg's uniform average up to the fixed-point rounding
// of the inputs (≤ 2^-17 each), and no vector leaves a node.
func TestSecAggLayerIsFedAvgInFixedPoint(t *testing.T) {
	adj := circulant(7, 1, 3) // degree 4, no triangles among a vertex's neighbours
	plain := newSecAggNet(t, adj, SecAggConfig{}, false)
	sec := newSecAggNet(t, adj, SecAggConfig{Threshold: 3}, true)
	for r := range 2 {
		plain.round(r)
		rds := sec.round(r)
		for i, rd := range rds {
			sa := secAggOf(rd)
			if sa == nil || sa.Fallback || sa.Members != 4 || sa.Survivors != 4 || sa.Joined != 4 || sa.Contributed != 4 || sa.Unmasked != 4 {
				t.Fatalf("round %d node %d: %+v", r, i, sa)
			}
			if rd.Rejected != 0 {
				t.Fatalf("round %d node %d: rejections %+v", r, i, rd.Rejections)
			}
			if len(sa.Weights) != 5 || math.Abs(sa.Weights[adj[i][0]]-0.2) > 1e-15 {
				t.Fatalf("round %d node %d: weights %v", r, i, sa.Weights)
			}
		}
		for i := range adj {
			a, b := plain.nodes[i].Model().Params(), sec.nodes[i].Model().Params()
			for k := range a {
				if d := math.Abs(float64(a[k] - b[k])); d > float64(r+1)*math.Ldexp(1, -16) {
					t.Fatalf("round %d node %d param %d: FedAvg %v, secagg %v", r, i, k, a[k], b[k])
				}
			}
		}
	}
}

// A member that drops after sending its masked input (the worst moment)
// is recovered while t answer; with more dropouts the group sum fails, the
// aggregator keeps its own model and says so.
func TestSecAggLayerDropouts(t *testing.T) {
	adj := circulant(7, 1, 3)
	for _, c := range []struct {
		silent   []int
		fallback bool
	}{{[]int{1}, false}, {[]int{1, 4}, true}} {
		plain := newSecAggNet(t, adj, SecAggConfig{}, false)
		sec := newSecAggNet(t, adj, SecAggConfig{Threshold: 3}, true)
		// Node 0's neighbours are 1, 3, 4, 6. The silent ones answer no
		// unmasking request (phase 4) in any group.
		sec.silent = func(i, p int) bool { return p == 4 && slices.Contains(c.silent, i) }
		plain.round(0)
		rds := sec.round(0)
		sa := secAggOf(rds[0])
		if sa.Fallback != c.fallback {
			t.Fatalf("silent %v: %+v", c.silent, sa)
		}
		if !c.fallback && (sa.Survivors != 4 || sa.Answered != 4-len(c.silent)) {
			t.Fatalf("silent %v: %+v", c.silent, sa)
		}
		if c.fallback {
			// The node kept its trained model: a fresh node trained the same way.
			ref := newSecAggNet(t, adj, SecAggConfig{}, false)
			for i, nd := range ref.nodes {
				deg := make([]int, len(adj[i]))
				if err := nd.Begin(0, Neighborhood{In: adj[i], InDegree: deg, Degree: len(adj[i])}); err != nil {
					t.Fatal(err)
				}
				if _, err := nd.Train(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			a, b := ref.nodes[0].Model().Params(), sec.nodes[0].Model().Params()
			if !slices.Equal(a, b) {
				t.Fatal("a failed group sum changed the model")
			}
			continue
		}
		a, b := plain.nodes[0].Model().Params(), sec.nodes[0].Model().Params()
		// The sum holds all four inputs: the mean of five models, as FedAvg.
		for k := range a {
			if math.Abs(float64(a[k]-b[k])) > math.Ldexp(1, -16) {
				t.Fatalf("silent %v: param %d: FedAvg %v, secagg %v", c.silent, k, a[k], b[k])
			}
		}
	}
}

// A forged share (a relaying aggregator that changes a ciphertext and signs
// its message) and a replayed message are refused and counted; the round
// goes on.
func TestSecAggLayerRefusesForgedAndReplayed(t *testing.T) {
	adj := circulant(7, 1, 3)
	sec := newSecAggNet(t, adj, SecAggConfig{Threshold: 3}, true)
	sec.tamper = func(p int, m *wire.Message) *wire.Message {
		if p != 3 || m.From != 0 || m.To != 1 {
			return m
		}
		c := *m
		c.Blob.Data = slices.Clone(m.Blob.Data)
		c.Blob.Data[len(c.Blob.Data)-1] ^= 0x80
		if err := wire.Sign(&c, sec.ids[0]); err != nil {
			t.Fatal(err)
		}
		return &c
	}
	sec.replay = 1 // every roster twice
	rds := sec.round(0)
	got := map[string]int{}
	for _, rj := range rds[1].Rejections {
		got[rj.Reason] += rj.Count
	}
	if got[ReasonSecAggForged] != 1 || got[ReasonDuplicate] != 4 {
		t.Fatalf("node 1's rejections %+v: want one forged share and 4 replayed rosters", rds[1].Rejections)
	}
	// Node 1 did not answer node 0's unmasking; node 0's group still had
	// t = 3 answers.
	if secAggOf(rds[0]).Fallback || secAggOf(rds[0]).Answered != 3 || secAggOf(rds[1]).Unmasked != 3 {
		t.Fatalf("node 0 %+v, node 1 %+v", secAggOf(rds[0]), secAggOf(rds[1]))
	}
}

// Outgoing vectors: none without Across; with Across, the group mean only.
func TestSecAggLayerAcrossReleasesTheGroupMean(t *testing.T) {
	adj := circulant(7, 1, 3)
	sec := newSecAggNet(t, adj, SecAggConfig{Threshold: 3, Across: true}, true)
	var vecs int
	sec.tamper = func(p int, m *wire.Message) *wire.Message {
		if m.Kind == wire.KindVector {
			if p != 5 || m.Payload.Tag != strategy.TagModel {
				t.Fatalf("a %q vector in phase %d", m.Payload.Tag, p)
			}
			vecs++
		}
		return m
	}
	rds := sec.round(0)
	if vecs != 7 {
		t.Fatalf("%d vectors went out, want one broadcast per node", vecs)
	}
	for i, rd := range rds {
		if secAggOf(rd).Fallback || secAggOf(rd).Weights != nil || len(rd.Weights) != 4 {
			t.Fatalf("node %d: %+v, strategy weights %v", i, secAggOf(rd), rd.Weights)
		}
	}
	plain := newSecAggNet(t, adj, SecAggConfig{Threshold: 3}, true)
	plain.tamper = func(p int, m *wire.Message) *wire.Message {
		if m.Kind == wire.KindVector {
			t.Fatalf("a vector left a node in phase %d without Across", p)
		}
		return m
	}
	plain.round(0)
}
