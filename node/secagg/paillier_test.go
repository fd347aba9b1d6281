package secagg

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// newPaillierNet is a network on adj of FedAvg nodes with the Paillier
// relay's layer (a 512-bit key: fast, not secure).
func newPaillierNet(t *testing.T, adj [][]int) *nodetest.Net {
	return nodetest.NewNet(adj, func() strategy.Strategy { return &strategy.FedAvg{} }, func(i int, dir *wire.Directory, c *node.Config) {
		l, err := NewPaillier(i, c.Model, dir, seed.Seeded(5), PaillierConfig{KeyBits: 512, ScaleBits: 16, Bound: 16, Headroom: 4})
		if err != nil {
			t.Fatal(err)
		}
		c.Layers = append(c.Layers, l)
	})(t)
}

// Through the relay the node's model becomes its neighbourhood's mean,
// FedAvg's, up to the fixed-point rounding; the relay holds ciphertexts
// only; a silent key holder makes the group fall back.
func TestPaillierLayerRelayMean(t *testing.T) {
	adj := nodetest.Circulant(7, 1, 3)
	plain := newSecAggNet(t, adj, Config{}, false)
	pl := newPaillierNet(t, adj)
	for i := range adj { // the same starting models
		copy(pl.Nodes[i].Model().Params(), plain.Nodes[i].Model().Params())
	}
	var leaked bool
	pl.Tamper = func(p int, m *wire.Message) *wire.Message {
		if m.Kind == wire.KindVector {
			leaked = true
		}
		return m
	}
	plain.Round(0)
	rds := pl.Round(0)
	if leaked {
		t.Fatal("a vector left a node")
	}
	for i, rd := range rds {
		if nodetest.SecAgg(rd) == nil || nodetest.SecAgg(rd).Fallback || nodetest.SecAgg(rd).Survivors != 4 || rd.Rejected != 0 || len(nodetest.SecAgg(rd).Weights) != 5 {
			t.Fatalf("node %d: %+v %+v", i, nodetest.SecAgg(rd), rd.Rejections)
		}
		a, b := plain.Nodes[i].Model().Params(), pl.Nodes[i].Model().Params()
		for k := range a {
			if math.Abs(float64(a[k]-b[k])) > math.Ldexp(1, -16) {
				t.Fatalf("node %d param %d: FedAvg %v, Paillier relay %v", i, k, a[k], b[k])
			}
		}
	}
	// Node 0's key holder is its smallest neighbour, 1: silent in phase 4.
	pl2 := newPaillierNet(t, adj)
	pl2.Silent = func(i, p int) bool { return i == 1 && p == 4 }
	rds = pl2.Round(0)
	if !nodetest.SecAgg(rds[0]).Fallback {
		t.Fatalf("node 0 without its key holder's answer: %+v", nodetest.SecAgg(rds[0]))
	}
}

// A key holder in league with the relay signs a modulus of the right
// length whose top bits are clear (packed plaintexts would not fit under
// it) and the relay passes it on: the members refuse it (counted against
// the relay) and the round goes on; the group falls back, no node fails.
// (A modulus of another length is refused by the wire validator first.)
func TestPaillierRelayedShortKeyRefused(t *testing.T) {
	adj := nodetest.Circulant(7, 1, 3)
	pl := newPaillierNet(t, adj)
	pl.Tamper = func(p int, m *wire.Message) *wire.Message {
		if p != 1 || m.From != 0 || m.Blob.Tag != TagPaillierHolder {
			return m
		}
		d := m.Blob.Data
		k := binary.LittleEndian.Uint32(d)
		short := make([]byte, len(d)-32-wire.SignatureSize)
		short[0], short[len(short)-1] = 0x01, 0x0b // odd, 7 bits short
		km := &wire.Message{Header: wire.Header{Kind: wire.KindKey, From: k, To: wire.Broadcast, Round: 0, Seq: binary.LittleEndian.Uint64(d[8:])},
			Blob: wire.Blob{Tag: TagPaillierKey, Data: short}}
		if err := wire.Sign(km, pl.IDs[k]); err != nil {
			t.Fatal(err)
		}
		c := *m
		c.Blob.Data = append(append(slices.Clone(d[:32]), km.Sig[:]...), short...)
		if err := wire.Sign(&c, pl.IDs[0]); err != nil {
			t.Fatal(err)
		}
		return &c
	}
	rds := pl.Round(0)
	if !nodetest.SecAgg(rds[0]).Fallback {
		t.Errorf("node 0's group with a refused key: %+v", nodetest.SecAgg(rds[0]))
	}
	refused := 0
	for _, j := range adj[0] {
		for _, r := range rds[j].Rejections {
			if r.From == 0 {
				refused += r.Count
			}
		}
	}
	if refused == 0 {
		t.Error("no member counted the short key against the relay")
	}
}

// Under threshold CKKS the node's model becomes its neighbourhood's mean
// within CKKS's error (≤ 1e-4 relative to the parameters' scale); a
// member that withholds its decryption share makes the group fall back.
func TestCKKSLayerMean(t *testing.T) {
	adj := nodetest.Circulant(7, 1, 3)
	plain := newSecAggNet(t, adj, Config{}, false)
	net := nodetest.NewNet(adj, func() strategy.Strategy { return &strategy.FedAvg{} }, func(i int, _ *wire.Directory, c *node.Config) {
		copy(c.Model.Params(), plain.Nodes[i].Model().Params())
		l, err := NewCKKS(i, c.Model, []byte("test crs"), 4)
		if err != nil {
			t.Fatal(err)
		}
		c.Layers = append(c.Layers, l)
	})(t)
	net.Silent = func(i, p int) bool { return i == 1 && p == 4 } // node 1 withholds its decryption shares
	plain.Round(0)
	rds := net.Round(0)
	for i, rd := range rds {
		fallback := slices.Contains(adj[1], i) // node 1's neighbours lack its share
		if nodetest.SecAgg(rd) == nil || nodetest.SecAgg(rd).Fallback != fallback || rd.Rejected != 0 {
			t.Fatalf("node %d: %+v %+v", i, nodetest.SecAgg(rd), rd.Rejections)
		}
		if fallback {
			continue
		}
		if w := nodetest.SecAgg(rd).Weights; len(w) != 5 || w[adj[i][0]] != 0.2 {
			t.Fatalf("node %d: weights %v", i, w)
		}
		a, b := plain.Nodes[i].Model().Params(), net.Nodes[i].Model().Params()
		for k := range a {
			if math.Abs(float64(a[k]-b[k])) > 1e-4 {
				t.Fatalf("node %d param %d: FedAvg %v, CKKS %v", i, k, a[k], b[k])
			}
		}
	}
}
