package secagg

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// newSecAggNet is a network on adj of FedAvg nodes, each with a
// secure-aggregation layer of cfg when withLayer is set.
func newSecAggNet(t *testing.T, adj [][]int, cfg Config, withLayer bool) *nodetest.Net {
	return nodetest.NewNet(adj, func() strategy.Strategy { return &strategy.FedAvg{} }, func(i int, dir *wire.Directory, c *node.Config) {
		if !withLayer {
			return
		}
		l, err := New(i, c.Model, dir, seed.Seeded(5), cfg)
		if err != nil {
			t.Fatal(err)
		}
		c.Layers = append(c.Layers, l)
	})(t)
}

// Through the node interface, on a graph whose neighbourhoods are not
// cliques (members reach each other only through the aggregator): the
// group mean is FedAvg's uniform average up to the fixed-point rounding
// of the inputs (≤ 2^-17 each), and no vector leaves a node.
func TestSecAggLayerIsFedAvgInFixedPoint(t *testing.T) {
	adj := nodetest.Circulant(7, 1, 3) // degree 4, no triangles among a vertex's neighbours
	plain := newSecAggNet(t, adj, Config{}, false)
	sec := newSecAggNet(t, adj, Config{Threshold: 3}, true)
	for r := range 2 {
		plain.Round(r)
		rds := sec.Round(r)
		for i, rd := range rds {
			sa := nodetest.SecAgg(rd)
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
			a, b := plain.Nodes[i].Model().Params(), sec.Nodes[i].Model().Params()
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
	adj := nodetest.Circulant(7, 1, 3)
	for _, c := range []struct {
		silent   []int
		fallback bool
	}{{[]int{1}, false}, {[]int{1, 4}, true}} {
		plain := newSecAggNet(t, adj, Config{}, false)
		sec := newSecAggNet(t, adj, Config{Threshold: 3}, true)
		// Node 0's neighbours are 1, 3, 4, 6. The silent ones answer no
		// unmasking request (phase 4) in any group.
		sec.Silent = func(i, p int) bool { return p == 4 && slices.Contains(c.silent, i) }
		plain.Round(0)
		rds := sec.Round(0)
		sa := nodetest.SecAgg(rds[0])
		if sa.Fallback != c.fallback {
			t.Fatalf("silent %v: %+v", c.silent, sa)
		}
		if !c.fallback && (sa.Survivors != 4 || sa.Answered != 4-len(c.silent)) {
			t.Fatalf("silent %v: %+v", c.silent, sa)
		}
		if c.fallback {
			// The node kept its trained model: a fresh node trained the same way.
			ref := newSecAggNet(t, adj, Config{}, false)
			for i, nd := range ref.Nodes {
				deg := make([]int, len(adj[i]))
				if err := nd.Begin(0, node.Neighborhood{In: adj[i], InDegree: deg, Degree: len(adj[i])}); err != nil {
					t.Fatal(err)
				}
				if _, err := nd.Train(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			a, b := ref.Nodes[0].Model().Params(), sec.Nodes[0].Model().Params()
			if !slices.Equal(a, b) {
				t.Fatal("a failed group sum changed the model")
			}
			continue
		}
		a, b := plain.Nodes[0].Model().Params(), sec.Nodes[0].Model().Params()
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
	adj := nodetest.Circulant(7, 1, 3)
	sec := newSecAggNet(t, adj, Config{Threshold: 3}, true)
	sec.Tamper = func(p int, m *wire.Message) *wire.Message {
		if p != 3 || m.From != 0 || m.To != 1 {
			return m
		}
		c := *m
		c.Blob.Data = slices.Clone(m.Blob.Data)
		c.Blob.Data[len(c.Blob.Data)-1] ^= 0x80
		if err := wire.Sign(&c, sec.IDs[0]); err != nil {
			t.Fatal(err)
		}
		return &c
	}
	sec.Replay = 1 // every roster twice
	rds := sec.Round(0)
	got := map[string]int{}
	for _, rj := range rds[1].Rejections {
		got[rj.Reason] += rj.Count
	}
	if got[ReasonForged] != 1 || got[node.ReasonDuplicate] != 4 {
		t.Fatalf("node 1's rejections %+v: want one forged share and 4 replayed rosters", rds[1].Rejections)
	}
	// Node 1 did not answer node 0's unmasking; node 0's group still had
	// t = 3 answers.
	if nodetest.SecAgg(rds[0]).Fallback || nodetest.SecAgg(rds[0]).Answered != 3 || nodetest.SecAgg(rds[1]).Unmasked != 3 {
		t.Fatalf("node 0 %+v, node 1 %+v", nodetest.SecAgg(rds[0]), nodetest.SecAgg(rds[1]))
	}
}

// Outgoing vectors: none without Across; with Across, the group mean only.
func TestSecAggLayerAcrossReleasesTheGroupMean(t *testing.T) {
	adj := nodetest.Circulant(7, 1, 3)
	sec := newSecAggNet(t, adj, Config{Threshold: 3, Across: true}, true)
	var vecs int
	sec.Tamper = func(p int, m *wire.Message) *wire.Message {
		if m.Kind == wire.KindVector {
			if p != 5 || m.Payload.Tag != strategy.TagModel {
				t.Fatalf("a %q vector in phase %d", m.Payload.Tag, p)
			}
			vecs++
		}
		return m
	}
	rds := sec.Round(0)
	if vecs != 7 {
		t.Fatalf("%d vectors went out, want one broadcast per node", vecs)
	}
	for i, rd := range rds {
		if nodetest.SecAgg(rd).Fallback || nodetest.SecAgg(rd).Weights != nil || len(rd.Weights) != 4 {
			t.Fatalf("node %d: %+v, strategy weights %v", i, nodetest.SecAgg(rd), rd.Weights)
		}
	}
	plain := newSecAggNet(t, adj, Config{Threshold: 3}, true)
	plain.Tamper = func(p int, m *wire.Message) *wire.Message {
		if m.Kind == wire.KindVector {
			t.Fatalf("a vector left a node in phase %d without Across", p)
		}
		return m
	}
	plain.Round(0)
}
