package node_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/node/secagg"
	"github.com/trellis-fl/trellis/node/trustlayer"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

// The fuzzed nodes: one per layer set, so that every payload kind has a
// node that takes it (vector, claim, event, masked, key, share, cipher).
const (
	fuzzPlain = iota
	fuzzTrust
	fuzzSecAgg
	fuzzPaillier
	fuzzCKKS
	fuzzNodes
)

// fuzzTags are every layer's tags, and none.
var fuzzTags = []string{"", strategy.TagModel, privacy.TagSecAggAdvertise, privacy.TagSecAggRoster,
	privacy.TagSecAggShares, privacy.TagSecAggInput, privacy.TagSecAggForward, privacy.TagSecAggUnmask,
	secagg.TagPaillierKey, secagg.TagPaillierHolder, secagg.TagPaillierInput, secagg.TagPaillierAgg, secagg.TagPaillierSum,
	secagg.TagCKKSKeyShare, secagg.TagCKKSKey, secagg.TagCKKSInput, secagg.TagCKKSSum, secagg.TagCKKSDecShare}

// fuzzNet is node 0 of each layer set, with what each exchange phase of
// its rounds takes, and the round counter; nodes 1 and 2 are its
// in-neighbours, 3 is not.
type fuzzNet struct {
	ids    []*wire.Identity
	nodes  [fuzzNodes]*node.Node
	expect [fuzzNodes][][]node.Expect
	round  int
}

func newFuzzNet(t testing.TB) *fuzzNet {
	ids, dir := wire.SimIdentities(11, 4)
	f := &fuzzNet{ids: ids}
	params := 0
	layer := func(k int) func(*node.Config) {
		return func(c *node.Config) {
			params = c.Model.NumParams()
			var l node.Layer
			var err error
			switch k {
			case fuzzTrust:
				tc := trust.DefaultConfig()
				tc.Claims = trust.ClaimsEvents
				l, err = trustlayer.New(c.Identity, dir, tc)
			case fuzzSecAgg:
				l, err = secagg.New(0, c.Model, dir, seed.Seeded(5), secagg.Config{Threshold: 2})
			case fuzzPaillier:
				l, err = secagg.NewPaillier(0, c.Model, dir, seed.Seeded(5), secagg.PaillierConfig{KeyBits: 512, ScaleBits: 16, Bound: 16, Headroom: 4})
			case fuzzCKKS:
				l, err = secagg.NewCKKS(0, c.Model, []byte("fuzz crs"), 4)
			}
			if err != nil {
				t.Fatal(err)
			}
			if l != nil {
				c.Layers = []node.Layer{l}
			}
		}
	}
	for k := range f.nodes {
		f.nodes[k] = nodetest.NewNode(t, 0, ids, dir, &strategy.FedAvg{}, layer(k))
		var err error
		if f.expect[k], err = node.Expectations(f.nodes[k]); err != nil {
			t.Fatal(err)
		}
	}
	_ = params
	return f
}

// message builds the fuzzed message: kind, tag and sender from the first
// bytes, the body's elements from the rest, signed by the sender.
func (f *fuzzNet) message(t testing.TB, round int, kind, tag, from byte, body []byte) *wire.Message {
	m := &wire.Message{Header: wire.Header{Kind: wire.Kind(kind % 9), From: uint32(from % 4), To: 0, Round: uint64(round), Seq: 1}}
	tg := fuzzTags[int(tag)%len(fuzzTags)]
	switch m.Kind {
	case wire.KindVector:
		m.Payload.Tag = tg
		for i := 0; i+4 <= len(body); i += 4 {
			m.Payload.Data = append(m.Payload.Data, math.Float32frombits(binary.LittleEndian.Uint32(body[i:])))
		}
	case wire.KindClaim:
		m.Claim = wire.Claim{Source: m.From, Round: uint64(round), Hop: 0}
		for i := 0; i+4 <= len(body); i += 4 {
			m.Claim.Neighbors = append(m.Claim.Neighbors, binary.LittleEndian.Uint32(body[i:]))
		}
		if err := wire.SignClaim(&m.Claim, f.ids[m.From]); err != nil {
			t.Fatal(err)
		}
	case wire.KindMasked:
		m.Masked.Tag = tg
		for i := 0; i+4 <= len(body); i += 4 {
			m.Masked.Data = append(m.Masked.Data, binary.LittleEndian.Uint32(body[i:]))
		}
	default:
		m.Blob = wire.Blob{Tag: tg, Data: body}
	}
	if _, err := wire.EncodedSize(m); err == nil {
		if err := wire.Sign(m, f.ids[m.From]); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// step runs one round of node k: its phases up to phase p, then the
// message (or, raw, the bytes decoded as one), then the rest of the round.
// Nothing a peer sends may panic or overflow the stack.
func (f *fuzzNet) step(t testing.TB, k int, p byte, m func(round int) *wire.Message) {
	n := f.nodes[k]
	f.round++
	if err := n.Begin(f.round, node.Neighborhood{In: []int{1, 2}, InDegree: []int{2, 2}, Degree: 2}); err != nil {
		t.Fatal(err)
	}
	phase := int(p) % len(f.expect[k])
	stepped := false
	for q := 0; ; q++ {
		if q == phase {
			_ = n.Step(m(f.round))
			stepped = true
		}
		_, more, err := n.Outbox()
		if err != nil {
			t.Fatalf("phase %d: %v", q, err)
		}
		if !more {
			break
		}
	}
	if !stepped {
		_ = n.Step(m(f.round))
	}
	if _, err := n.End(node.EndOptions{}); err != nil {
		t.Fatalf("End: %v", err)
	}
}

// fuzzStall is how long one fuzzed round may take before it counts as a
// stall (a CKKS round takes well under a second).
const fuzzStall = 20 * time.Second

// FuzzStep hands each layer set's node one peer message of any kind, tag,
// sender and body in any exchange phase: truncated, oversized and
// mistyped payloads of every kind, correctly signed (so they reach the
// layers' decoders when the checks before them let them through), or raw
// bytes decoded as a transport would. The seeds are each phase's expected
// kinds at their exact sizes, and those truncated and extended.
func FuzzStep(f *testing.F) {
	net := newFuzzNet(f)
	for k := range net.nodes {
		for p, es := range net.expect[k] {
			for _, e := range es {
				for _, size := range []int{e.Content.Max, e.Content.Max / 2, e.Content.Max + 4} {
					body := make([]byte, size)
					for i := range body {
						body[i] = byte(i*7 + 1)
					}
					for tag := range fuzzTags {
						if tag != 0 && tag != 1 && tag < 2 {
							continue
						}
						f.Add(byte(k), byte(p), byte(e.Kind), byte(tag), byte(1), false, body)
						if k != fuzzCKKS && k != fuzzPaillier {
							break // one tag is enough where the layer reads none
						}
					}
				}
			}
		}
	}
	f.Add(byte(fuzzPlain), byte(0), byte(0), byte(0), byte(1), true, []byte{1, 1, 0, 0})
	f.Fuzz(func(t *testing.T, k, p, kind, tag, from byte, raw bool, body []byte) {
		node := int(k) % fuzzNodes
		// A stall is a failure too: a message must not hold a node up.
		watch := time.AfterFunc(fuzzStall, func() {
			buf := make([]byte, 1<<20)
			panic(fmt.Sprintf("one message held node %d up for %v:\n%s", node, fuzzStall, buf[:runtime.Stack(buf, true)]))
		})
		defer watch.Stop()
		net.step(t, node, p, func(round int) *wire.Message {
			if raw {
				var m wire.Message
				if wire.Decode(body, &m) != nil {
					return &wire.Message{Header: wire.Header{Kind: wire.KindVector, From: 3, Round: uint64(round)}}
				}
				return &m
			}
			return net.message(t, round, kind, tag, from, body)
		})
	})
}
