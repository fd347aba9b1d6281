package node

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

func newPaillierNet(t *testing.T, adj [][]int) (*secAggNet, []*PaillierLayer) {
	n := len(adj)
	ids, dir := wire.SimIdentities(5, n)
	net := &secAggNet{t: t, ids: ids, adj: adj, replay: -1}
	var layers []*PaillierLayer
	for i := range n {
		nd := newTestNode(t, i, ids, dir, &strategy.FedAvg{}, func(c *Config) {
			l, err := NewPaillierLayer(i, c.Model, dir, seed.Seeded(5), PaillierConfig{KeyBits: 512, ScaleBits: 16, Bound: 16, Headroom: 4})
			if err != nil {
				t.Fatal(err)
			}
			layers = append(layers, l)
			c.Layers = append(c.Layers, l)
		})
		net.nodes = append(net.nodes, nd)
	}
	return net, layers
}

// Through the relay the node's model becomes its neighbourhood's mean,
// FedAvg's, up to the fixed-point rounding; the relay holds ciphertexts
// only; a silent key holder makes the group fall back.
func TestPaillierLayerRelayMean(t *testing.T) {
	adj := circulant(7, 1, 3)
	plain := newSecAggNet(t, adj, SecAggConfig{}, false)
	pl, _ := newPaillierNet(t, adj)
	for i := range adj { // the same starting models
		copy(pl.nodes[i].Model().Params(), plain.nodes[i].Model().Params())
	}
	var leaked bool
	pl.tamper = func(p int, m *wire.Message) *wire.Message {
		if m.Kind == wire.KindVector {
			leaked = true
		}
		return m
	}
	plain.round(0)
	rds := pl.round(0)
	if leaked {
		t.Fatal("a vector left a node")
	}
	for i, rd := range rds {
		if secAggOf(rd) == nil || secAggOf(rd).Fallback || secAggOf(rd).Survivors != 4 || rd.Rejected != 0 || len(secAggOf(rd).Weights) != 5 {
			t.Fatalf("node %d: %+v %+v", i, secAggOf(rd), rd.Rejections)
		}
		a, b := plain.nodes[i].Model().Params(), pl.nodes[i].Model().Params()
		for k := range a {
			if math.Abs(float64(a[k]-b[k])) > math.Ldexp(1, -16) {
				t.Fatalf("node %d param %d: FedAvg %v, Paillier relay %v", i, k, a[k], b[k])
			}
		}
	}
	// Node 0's key holder is its smallest neighbour, 1: silent in phase 4.
	pl2, _ := newPaillierNet(t, adj)
	pl2.silent = func(i, p int) bool { return i == 1 && p == 4 }
	rds = pl2.round(0)
	if !secAggOf(rds[0]).Fallback {
		t.Fatalf("node 0 without its key holder's answer: %+v", secAggOf(rds[0]))
	}
}

// A key holder in league with the relay signs a modulus of the right
// length whose top bits are clear (packed plaintexts would not fit under
// it) and the relay passes it on: the members refuse it (counted against
// the relay) and the round goes on; the group falls back, no node fails.
// (A modulus of another length is refused by the wire validator first.)
func TestPaillierRelayedShortKeyRefused(t *testing.T) {
	adj := circulant(7, 1, 3)
	pl, _ := newPaillierNet(t, adj)
	pl.tamper = func(p int, m *wire.Message) *wire.Message {
		if p != 1 || m.From != 0 || m.Blob.Tag != tagPaillierHolder {
			return m
		}
		d := m.Blob.Data
		k := binary.LittleEndian.Uint32(d)
		short := make([]byte, len(d)-32-wire.SignatureSize)
		short[0], short[len(short)-1] = 0x01, 0x0b // odd, 7 bits short
		km := &wire.Message{Header: wire.Header{Kind: wire.KindKey, From: k, To: wire.Broadcast, Round: 0, Seq: binary.LittleEndian.Uint64(d[8:])},
			Blob: wire.Blob{Tag: tagPaillierKey, Data: short}}
		if err := wire.Sign(km, pl.ids[k]); err != nil {
			t.Fatal(err)
		}
		c := *m
		c.Blob.Data = append(append(slices.Clone(d[:32]), km.Sig[:]...), short...)
		if err := wire.Sign(&c, pl.ids[0]); err != nil {
			t.Fatal(err)
		}
		return &c
	}
	rds := pl.round(0)
	if !secAggOf(rds[0]).Fallback {
		t.Errorf("node 0's group with a refused key: %+v", secAggOf(rds[0]))
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
	adj := circulant(7, 1, 3)
	plain := newSecAggNet(t, adj, SecAggConfig{}, false)
	n := len(adj)
	ids, dir := wire.SimIdentities(5, n)
	net := &secAggNet{t: t, ids: ids, adj: adj, replay: -1}
	for i := range n {
		nd := newTestNode(t, i, ids, dir, &strategy.FedAvg{}, func(c *Config) {
			copy(c.Model.Params(), plain.nodes[i].Model().Params())
			l, err := NewCKKSLayer(i, c.Model, []byte("test crs"), 4)
			if err != nil {
				t.Fatal(err)
			}
			c.Layers = append(c.Layers, l)
		})
		net.nodes = append(net.nodes, nd)
	}
	net.silent = func(i, p int) bool { return i == 1 && p == 4 } // node 1 withholds its decryption shares
	plain.round(0)
	rds := net.round(0)
	for i, rd := range rds {
		fallback := slices.Contains(adj[1], i) // node 1's neighbours lack its share
		if secAggOf(rd) == nil || secAggOf(rd).Fallback != fallback || rd.Rejected != 0 {
			t.Fatalf("node %d: %+v %+v", i, secAggOf(rd), rd.Rejections)
		}
		if fallback {
			continue
		}
		if w := secAggOf(rd).Weights; len(w) != 5 || w[adj[i][0]] != 0.2 {
			t.Fatalf("node %d: weights %v", i, w)
		}
		a, b := plain.nodes[i].Model().Params(), net.nodes[i].Model().Params()
		for k := range a {
			if math.Abs(float64(a[k]-b[k])) > 1e-4 {
				t.Fatalf("node %d param %d: FedAvg %v, CKKS %v", i, k, a[k], b[k])
			}
		}
	}
}
