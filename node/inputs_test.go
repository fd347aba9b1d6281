package node_test

import (
	"math"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// ringHood is node i's neighbourhood on the n-node ring (both links).
func ringHood(i, n int) node.Neighborhood {
	in := []int{(i + n - 1) % n, (i + 1) % n}
	slices.Sort(in)
	return node.Neighborhood{In: in, InDegree: []int{2, 2}, Degree: 2}
}

// ringRound runs one FedAvg round of the five-node ring by hand: every
// node's broadcast reaches its two neighbours; relay, if set, hands node 0
// a copy of node 2's correctly signed broadcast as well (node 2 is not
// one of node 0's neighbours, 1 and 4). It returns node 0's Ready and the
// error Step gave the relayed copy.
func ringRound(t *testing.T, relay bool) (node.Ready, error) {
	t.Helper()
	const n = 5
	ids, dir := wire.SimIdentities(7, n)
	nodes := make([]*node.Node, n)
	out := make([][]*wire.Message, n)
	for i := range nodes {
		nodes[i] = nodetest.NewNode(t, i, ids, dir, &strategy.FedAvg{})
		nodetest.Begin(t, 0, ringHood(i, n), nodes[i])
		out[i] = nodetest.Outbox(t, nodes[i])
	}
	var relayErr error
	for i, nd := range nodes {
		for _, j := range ringHood(i, n).In {
			for _, m := range out[j] {
				if err := nd.Step(m); err != nil {
					t.Fatalf("node %d refused node %d's message: %v", i, j, err)
				}
			}
		}
		if i == 0 && relay {
			relayErr = nd.Step(out[2][0])
		}
	}
	return nodetest.End(t, nodes[0], node.EndOptions{}), relayErr
}

// The five-node ring with a relay: node 2's correctly signed broadcast,
// handed to node 0 (whose neighbours are 1 and 4), is refused as from a
// non-neighbour and counted, and node 0's round is what it is without the
// relay: FedAvg's equal weights, 1/3 each, to nodes 0, 1 and 4 (all hold
// four samples). The simulator, which routes along the ring's links
// only, gives the same.
func TestRelayedMessageFromNonNeighbourIsRefused(t *testing.T) {
	rd, err := ringRound(t, true)
	if err == nil {
		t.Fatal("node 2's relayed message accepted by node 0")
	}
	if !slices.Equal(rd.Rejections, []node.Rejection{{From: 2, Reason: node.ReasonNotNeighbor, Count: 1}}) || rd.Rejected != 1 {
		t.Fatalf("rejections %+v (%d), want node 2's message as not_in_neighbor", rd.Rejections, rd.Rejected)
	}
	// FedAvg lists the senders' weights; the node's own is the rest.
	if len(rd.Weights) != 2 {
		t.Fatalf("weights %v, want nodes 1 and 4 only", rd.Weights)
	}
	for _, id := range []int{1, 4} {
		if math.Abs(rd.Weights[id]-1.0/3) > 1e-12 {
			t.Fatalf("weights %v, want 1/3 each to nodes 0, 1 and 4", rd.Weights)
		}
	}
	plain, _ := ringRound(t, false)
	if len(plain.Rejections) != 0 {
		t.Fatalf("rejections without a relay: %+v", plain.Rejections)
	}
	for id, w := range plain.Weights {
		if rd.Weights[id] != w {
			t.Fatalf("with the relay node 0 gave %v, without %v", rd.Weights, plain.Weights)
		}
	}
}

// signedFrom is a message of kind k from node from to node 0 in round r,
// signed by from's identity, with the body set by body.
func signedFrom(t *testing.T, ids []*wire.Identity, from uint32, r int, seq uint64, k wire.Kind, body func(m *wire.Message)) *wire.Message {
	t.Helper()
	m := &wire.Message{Header: wire.Header{Kind: k, From: from, To: 0, Round: uint64(r), Seq: seq}}
	body(m)
	if err := wire.Sign(m, ids[from]); err != nil {
		t.Fatal(err)
	}
	return m
}

// With a three-phase layer (a key in phase 0, the strategy's vector in
// phase 1, a share in phase 2): a kind no phase from the current one on
// takes is refused as unexpected, before its signature is checked; a body
// outside its kind's bound is refused as the wrong size; a message of a
// later phase waits until that phase opens, then reaches the layer.
func TestKindAndSizeMustMatchThePhase(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 2)
	l := &phased{}
	rec := &recorder{}
	n := nodetest.NewNode(t, 0, ids, dir, rec, func(c *node.Config) { c.Layers = []node.Layer{l} })
	hood := node.Neighborhood{In: []int{1}, InDegree: []int{1}, Degree: 1}
	nodetest.Begin(t, 0, hood, n)
	params := n.Model().NumParams()
	key := func(size int) func(*wire.Message) {
		return func(m *wire.Message) { m.Blob.Data = make([]byte, size) }
	}
	vec := func(size int) func(*wire.Message) {
		return func(m *wire.Message) { m.Payload.Data = make([]float32, size) }
	}
	steps := []struct {
		m      *wire.Message
		refuse string // "" accepted or held
	}{
		{signedFrom(t, ids, 1, 0, 1, wire.KindKey, key(wire.KeySize+1)), node.ReasonWrongSize},
		{signedFrom(t, ids, 1, 0, 2, wire.KindKey, key(wire.KeySize)), ""},
		{signedFrom(t, ids, 1, 0, 3, wire.KindMasked, func(m *wire.Message) { m.Masked.Data = make([]uint32, params) }), node.ReasonUnexpectedKind},
		{signedFrom(t, ids, 1, 0, 4, wire.KindVector, vec(params+1)), node.ReasonWrongSize},
		{signedFrom(t, ids, 1, 0, 5, wire.KindVector, vec(params)), ""},             // phase 1's: held
		{signedFrom(t, ids, 1, 0, 6, wire.KindShare, key(1)), ""},                   // phase 2's: held
		{signedFrom(t, ids, 1, 0, 7, wire.KindShare, key(2)), node.ReasonWrongSize}, // a share is 1 byte here
		{signedFrom(t, ids, 1, 0, 8, wire.KindCipher, key(10)), node.ReasonUnexpectedKind},
	}
	for i, s := range steps {
		err := n.Step(s.m)
		if (err == nil) != (s.refuse == "") {
			t.Fatalf("step %d (%s): %v, want refused %q", i, s.m.Kind, err, s.refuse)
		}
	}
	if !slices.Equal(l.handled, []wire.Kind{wire.KindKey}) {
		t.Fatalf("before phase 0 closed the layer handled %v, want the key alone", l.handled)
	}
	var rd node.Ready
	for p := 0; ; p++ {
		_, more, err := n.Outbox()
		if err != nil {
			t.Fatal(err)
		}
		if p == 1 && node.Inbox(n) != 1 {
			t.Fatalf("phase 1 opened: %d vectors delivered, want the held one", node.Inbox(n))
		}
		if !more {
			break
		}
	}
	// A key now (phase 2) is refused: only phase 0 takes keys.
	if err := n.Step(signedFrom(t, ids, 1, 0, 9, wire.KindKey, key(wire.KeySize))); err == nil {
		t.Fatal("a key accepted in phase 2")
	}
	rd = nodetest.End(t, n, node.EndOptions{})
	if !slices.Equal(l.handled, []wire.Kind{wire.KindKey, wire.KindShare}) {
		t.Fatalf("the layer handled %v, want the key and the held share", l.handled)
	}
	want := []node.Rejection{{1, node.ReasonUnexpectedKind, 3}, {1, node.ReasonWrongSize, 3}}
	if !slices.Equal(rd.Rejections, want) {
		t.Fatalf("rejections %+v, want %+v", rd.Rejections, want)
	}
	if len(rec.seen) != 1 || rec.seen[0].From != 1 {
		t.Fatalf("the strategy saw %+v: want the held vector of node 1", rec.seen)
	}
}

// The store of held messages is bounded in total: many senders filling
// their own share cannot together hold more than node.HeldTotalSenders shares.
func TestHeldMessagesAreBoundedInTotal(t *testing.T) {
	const senders = node.HeldTotalSenders + 4
	ids, dir := wire.SimIdentities(7, senders+1)
	n := nodetest.NewNode(t, 0, ids, dir, &strategy.FedAvg{})
	nodetest.Begin(t, 0, node.Neighborhood{}, n)
	full := 0
	for from := uint32(1); from <= senders; from++ {
		for seq := range uint64(node.HeldPerSender) {
			m := &wire.Message{Header: wire.Header{Kind: wire.KindVector, From: from, To: 0, Round: 1, Seq: seq + 1},
				Payload: wire.Payload{Data: make([]float32, n.Model().NumParams())}}
			if err := n.Step(m); err != nil {
				full++
			}
		}
	}
	in := node.Held(n)
	if in.TotalBytes > node.HeldTotalSenders*in.PerSenderBytes || full == 0 {
		t.Fatalf("%d bytes held (bound %d), %d refused", in.TotalBytes, node.HeldTotalSenders*in.PerSenderBytes, full)
	}
	sum := 0
	for _, size := range in.Sizes {
		sum += size
	}
	if sum != in.TotalBytes {
		t.Fatalf("the store holds %d bytes, its count says %d", sum, in.TotalBytes)
	}
	// The last senders found the store full.
	if in.Count[senders] != 0 {
		t.Fatalf("sender %d holds %d messages in a full store", senders, in.Count[senders])
	}
}

// A transport's check of encoded bytes, before decoding: the node's kinds
// at their sizes pass; another kind, another length, a long tag or bytes
// that do not hold their declared body are refused.
func TestAdmissionChecksBytesBeforeDecoding(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 2)
	n := nodetest.NewNode(t, 0, ids, dir, &strategy.FedAvg{})
	a, err := n.Admission()
	if err != nil {
		t.Fatal(err)
	}
	params := n.Model().NumParams()
	enc := func(m *wire.Message) []byte {
		b, err := wire.AppendEncode(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	vec := func(size int, tag string) []byte {
		return enc(&wire.Message{Header: wire.Header{Kind: wire.KindVector, From: 1}, Payload: wire.Payload{Tag: tag, Data: make([]float32, size)}})
	}
	if err := a.Check(vec(params, strategy.TagModel)); err != nil {
		t.Fatalf("an honest vector refused: %v", err)
	}
	if a.MaxMessageBytes() < len(vec(params, "")) {
		t.Fatalf("MaxMessageBytes %d below a vector's %d", a.MaxMessageBytes(), len(vec(params, "")))
	}
	masked := enc(&wire.Message{Header: wire.Header{Kind: wire.KindMasked, From: 1}, Masked: wire.Masked{Data: make([]uint32, params)}})
	good := vec(params, "")
	for name, b := range map[string][]byte{
		"longer vector":  vec(params+1, ""),
		"shorter vector": vec(params-1, ""),
		"long tag":       vec(params, string(make([]byte, 40))),
		"masked":         masked,
		"truncated":      good[:len(good)-1],
		"header only":    good[:wire.HeaderSize],
	} {
		if err := a.Check(b); err == nil {
			t.Errorf("%s passed", name)
		}
	}
}
