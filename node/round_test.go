package node_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// Calls out of order return an error naming what was expected, and leave
// the node usable.
func TestPhaseOrderErrors(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 2)
	n := nodetest.NewNode(t, 0, ids, dir, &strategy.FedAvg{})
	expect := func(err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "expected "+want) {
			t.Fatalf("error %v, want one naming %q", err, "expected "+want)
		}
	}
	_, err := n.Train(t.Context())
	expect(err, "Begin")
	_, _, err = n.Outbox()
	expect(err, "Begin")
	_, err = n.End(node.EndOptions{})
	expect(err, "Begin")

	hood := node.Neighborhood{In: []int{1}, InDegree: []int{1}, Degree: 1}
	if err := n.Begin(0, hood); err != nil {
		t.Fatal(err)
	}
	expect(n.Begin(1, hood), "End of the open round")
	_, err = n.End(node.EndOptions{})
	expect(err, "Outbox (exchange phase 1 of 1)")
	if _, err := n.Train(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, err = n.Train(t.Context())
	expect(err, "Begin (Train comes once, before Outbox)")
	nodetest.Outbox(t, n)
	_, _, err = n.Outbox()
	expect(err, "End (every exchange phase is open)")
	_, err = n.Train(t.Context())
	expect(err, "Begin")
	nodetest.End(t, n, node.EndOptions{})
	if err := n.Begin(0, hood); err == nil || !strings.Contains(err.Error(), "rounds must increase") {
		t.Fatalf("Begin(0) again: %v", err)
	}
	if err := n.Begin(-1, hood); err == nil {
		t.Fatal("Begin(-1) accepted")
	}
	// A node that skips rounds (rejoining) goes on.
	nodetest.Begin(t, 5, hood, n)
	nodetest.Outbox(t, n)
	if rd := nodetest.End(t, n, node.EndOptions{}); rd.Round != 5 {
		t.Fatalf("round %d, want 5", rd.Round)
	}
}

// vectorFrom is peer's signed vector message for round r to everyone.
func vectorFrom(t *testing.T, peer *node.Node, r int, hood node.Neighborhood) *wire.Message {
	t.Helper()
	nodetest.Begin(t, r, hood, peer)
	out := nodetest.Outbox(t, peer)
	nodetest.End(t, peer, node.EndOptions{})
	m := *out[0]
	m.Payload.Data = slices.Clone(m.Payload.Data) // the peer reuses its send buffer next round
	return &m
}

// A message for round r+1 arriving during round r is used in round r+1,
// not in r; one for r−1 is dropped and counted; one that arrives after End
// is dropped and counted, and never mixed into the next round.
func TestMessagesReachOnlyTheirRound(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 3)
	rec := &recorder{}
	n := nodetest.NewNode(t, 0, ids, dir, rec)
	p1 := nodetest.NewNode(t, 1, ids, dir, &strategy.FedAvg{})
	p2 := nodetest.NewNode(t, 2, ids, dir, &strategy.FedAvg{})
	hood := node.Neighborhood{In: []int{1, 2}, InDegree: []int{2, 2}, Degree: 2}

	m0 := vectorFrom(t, p1, 0, hood)   // p1's round 0
	m1 := vectorFrom(t, p1, 1, hood)   // p1's round 1
	m2 := vectorFrom(t, p1, 2, hood)   // p1's round 2
	late := vectorFrom(t, p2, 1, hood) // p2's round 1, delivered after node 0's round 1 closed

	// Before its first round the node keeps m0 and m1 for later.
	if err := n.Step(m1); err != nil {
		t.Fatal(err)
	}
	nodetest.Begin(t, 0, hood, n)
	if err := n.Step(m2); err != nil { // two rounds ahead: within bounds, buffered
		t.Fatalf("round-2 message during round 0: %v", err)
	}
	if err := n.Step(m0); err != nil {
		t.Fatal(err)
	}
	nodetest.Outbox(t, n)
	rd := nodetest.End(t, n, node.EndOptions{})
	if len(rec.seen) != 1 || rec.seen[0].From != 1 || &rec.seen[0].Vector[0] != &m0.Payload.Data[0] {
		t.Fatalf("round 0 combined %d messages, want p1's round-0 message alone", len(rec.seen))
	}
	if rd.Rejected != 0 {
		t.Fatalf("round 0 rejections %+v", rd.Rejections)
	}

	nodetest.Begin(t, 1, hood, n) // m1 is delivered now, from the buffer
	if err := n.Step(m0); err == nil {
		t.Fatal("a round-0 message accepted in round 1")
	}
	nodetest.Outbox(t, n)
	rd = nodetest.End(t, n, node.EndOptions{})
	if len(rec.seen) != 1 || &rec.seen[0].Vector[0] != &m1.Payload.Data[0] {
		t.Fatalf("round 1 combined %d messages, want p1's round-1 message alone", len(rec.seen))
	}
	if !slices.Equal(rd.Rejections, []node.Rejection{{From: 1, Reason: "stale_round", Count: 1}}) {
		t.Fatalf("round 1 rejections %+v, want p1's stale message", rd.Rejections)
	}

	// After End(1): p2's round-1 message is late.
	if err := n.Step(late); err == nil {
		t.Fatal("a message of a closed round accepted")
	}
	nodetest.Begin(t, 2, hood, n)
	nodetest.Outbox(t, n)
	rd = nodetest.End(t, n, node.EndOptions{})
	if len(rec.seen) != 1 || rec.seen[0].From != 1 || &rec.seen[0].Vector[0] != &m2.Payload.Data[0] {
		t.Fatalf("round 2 combined %+v, want p1's round-2 message alone", rec.seen)
	}
	if !slices.Equal(rd.Rejections, []node.Rejection{{From: 2, Reason: "stale_round", Count: 1}}) {
		t.Fatalf("round 2 rejections %+v, want p2's late message", rd.Rejections)
	}
}

// A copy of a held early message is refused at once and held once; a
// copy of it in its round, after it was delivered, is refused too.
func TestBufferedMessagesKeepReplayProtection(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 2)
	rec := &recorder{}
	n := nodetest.NewNode(t, 0, ids, dir, rec)
	p := nodetest.NewNode(t, 1, ids, dir, &strategy.FedAvg{})
	hood := node.Neighborhood{In: []int{1}, InDegree: []int{1}, Degree: 1}
	m := vectorFrom(t, p, 1, hood)
	nodetest.Begin(t, 0, hood, n)
	if err := n.Step(m); err != nil {
		t.Fatal(err)
	}
	c := *m
	if err := n.Step(&c); err == nil {
		t.Fatal("a copy of a held message accepted")
	}
	nodetest.Outbox(t, n)
	if rd := nodetest.End(t, n, node.EndOptions{}); !slices.Equal(rd.Rejections, []node.Rejection{{From: 1, Reason: node.ReasonDuplicate, Count: 1}}) {
		t.Fatalf("round 0 rejections %+v, want one duplicate", rd.Rejections)
	}
	nodetest.Begin(t, 1, hood, n)
	if err := n.Step(&c); err == nil {
		t.Fatal("a copy of a delivered message accepted")
	}
	nodetest.Outbox(t, n)
	rd := nodetest.End(t, n, node.EndOptions{})
	if len(rec.seen) != 1 || !slices.Equal(rd.Rejections, []node.Rejection{{From: 1, Reason: node.ReasonDuplicate, Count: 1}}) {
		t.Fatalf("combined %d, rejections %+v: want one message and one duplicate", len(rec.seen), rd.Rejections)
	}
}

// The store of early messages is bounded in bytes per sender, keeps
// identical copies once, and refuses senders outside the directory and
// rounds too far ahead.
func TestEarlyMessagesAreBounded(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 2)
	n := nodetest.NewNode(t, 0, ids, dir, &strategy.FedAvg{})
	nodetest.Begin(t, 0, node.Neighborhood{}, n)
	msg := func(from uint32, round, seq uint64) *wire.Message {
		return &wire.Message{Header: wire.Header{Kind: wire.KindVector, From: from, To: 0, Round: round, Seq: seq},
			Payload: wire.Payload{Data: make([]float32, n.Model().NumParams())}}
	}
	if err := n.Step(msg(1, 3, 1)); err == nil {
		t.Error("a message 3 rounds ahead buffered")
	}
	if err := n.Step(msg(7, 1, 1)); err == nil {
		t.Error("an early message from outside the directory buffered")
	}
	for range 10 {
		if err := n.Step(msg(1, 1, 1)); err != nil && node.Held(n).Count[1] != 1 {
			t.Fatal(err)
		}
	}
	if node.Held(n).Count[1] != 1 {
		t.Fatalf("%d copies of one message held, want 1", node.Held(n).Count[1])
	}
	accepted := 1
	for seq := range uint64(1000) {
		if n.Step(msg(1, 1, seq+2)) == nil {
			accepted++
		}
	}
	size, _ := wire.EncodedSize(msg(1, 1, 1))
	want := node.Held(n).PerSenderBytes / size
	if accepted != want || node.Held(n).Bytes[1] != want*size {
		t.Errorf("held %d early messages (%d bytes) of one sender, want the byte bound's %d", accepted, node.Held(n).Bytes[1], want)
	}
	nodetest.Outbox(t, n)
	rd := nodetest.End(t, n, node.EndOptions{})
	wantRej := []node.Rejection{{1, node.ReasonBufferFull, 1001 - want}, {1, node.ReasonDuplicate, 9}, {1, node.ReasonTooFarAhead, 1}, {7, "unknown_sender", 1}}
	if !slices.Equal(rd.Rejections, wantRej) {
		t.Fatalf("rejections %+v, want %+v", rd.Rejections, wantRej)
	}
	// At the round, held messages from outside the round's in-neighbours
	// are refused.
	nodetest.Begin(t, 1, node.Neighborhood{}, n)
	nodetest.Outbox(t, n)
	if rd := nodetest.End(t, n, node.EndOptions{}); !slices.Equal(rd.Rejections, []node.Rejection{{1, node.ReasonNotNeighbor, want}}) {
		t.Fatalf("round 1 rejections %+v, want the %d held messages from a non-neighbour", rd.Rejections, want)
	}
	if len(node.Held(n).Sizes) != 0 || node.Held(n).TotalBytes != 0 {
		t.Fatalf("%d messages, %d bytes left in the store", len(node.Held(n).Sizes), node.Held(n).TotalBytes)
	}
}

// Cancelling Train stops it between batches; the round goes on.
func TestTrainIsCancellable(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 1)
	n := nodetest.NewNode(t, 0, ids, dir, strategy.Local{}, func(c *node.Config) { c.Train = nn.TrainConfig{Steps: 1000} })
	if err := n.Begin(0, node.Neighborhood{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := n.Train(ctx)
	if !errors.Is(err, context.Canceled) || res.Steps != 0 {
		t.Fatalf("cancelled training: %d steps, %v", res.Steps, err)
	}
	nodetest.Outbox(t, n)
	if rd := nodetest.End(t, n, node.EndOptions{Evaluate: true}); !rd.Trained || rd.Eval == nil {
		t.Fatalf("ready %+v: want the round closed and evaluated", rd)
	}
}

// phased is a test layer with three exchange phases (secure aggregation's
// shape): a key message in phase 0, the strategy's vectors (negated by
// Release) in phase 1, a share message in phase 2. It records what it
// observed and handled.
type phased struct {
	begun, ended int
	handled      []wire.Kind
	observed     int
}

func (l *phased) Name() string                       { return "phased" }
func (l *phased) Begin(int, node.Neighborhood) error { l.begun++; return nil }
func (l *phased) Phases() int                        { return 3 }
func (l *phased) ReleasePhase() int                  { return 1 }
func (l *phased) Owns(k wire.Kind) bool              { return k == wire.KindKey || k == wire.KindShare }
func (l *phased) ReleasesVectors() bool              { return true }
func (l *phased) Expects(p int) []node.Expect {
	switch p {
	case 0:
		return []node.Expect{node.ExpectBlob(wire.KindKey, wire.KeySize, wire.KeySize)}
	case 2:
		return []node.Expect{node.ExpectBlob(wire.KindShare, 1, 1)}
	}
	return nil
}
func (l *phased) Observe(*wire.Message, error) error { l.observed++; return nil }
func (l *phased) Handle(m *wire.Message) error       { l.handled = append(l.handled, m.Kind); return nil }
func (l *phased) End(rd *node.Ready) error           { l.ended++; return nil }
func (l *phased) See(*strategy.View)                 {}
func (l *phased) Snapshot() ([]byte, error)          { return nil, nil }
func (l *phased) Restore([]byte) error               { return nil }
func (l *phased) Outbox(p int) ([]*wire.Message, error) {
	switch p {
	case 0:
		return []*wire.Message{{Header: wire.Header{Kind: wire.KindKey, To: wire.Broadcast}, Blob: wire.Blob{Data: make([]byte, wire.KeySize)}}}, nil
	case 2:
		return []*wire.Message{{Header: wire.Header{Kind: wire.KindShare, To: wire.Broadcast}, Blob: wire.Blob{Data: []byte{1}}}}, nil
	}
	return nil, nil
}
func (l *phased) Release(out []*wire.Message) ([]*wire.Message, error) {
	for _, m := range out {
		for i := range m.Payload.Data {
			m.Payload.Data[i] = -m.Payload.Data[i]
		}
	}
	return out, nil
}

// A layer with several exchange phases: Outbox opens them in turn (more
// until the last), releases the strategy's vectors in the layer's phase
// through Release, signs everything, and routes the layer's kinds to it.
func TestLayerPhasesAndRelease(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 2)
	la, lb := &phased{}, &phased{}
	a := nodetest.NewNode(t, 0, ids, dir, &strategy.FedAvg{}, func(c *node.Config) { c.Layers = []node.Layer{la} })
	rec := &recorder{}
	b := nodetest.NewNode(t, 1, ids, dir, rec, func(c *node.Config) { c.Layers = []node.Layer{lb} })
	nodetest.Begin(t, 0, node.Neighborhood{In: []int{0, 1}, InDegree: []int{2, 2}, Degree: 2}, a, b)
	var kinds []wire.Kind
	for phase := 0; ; phase++ {
		out, more, err := a.Outbox()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.End(node.EndOptions{}); err == nil && phase < 2 {
			t.Fatal("End before the last exchange phase accepted")
		}
		for _, m := range out {
			kinds = append(kinds, m.Kind)
			if !wire.Verify(m, ids[0].Public()) {
				t.Fatalf("phase %d: unsigned %s message", phase, m.Kind)
			}
			if m.Kind == wire.KindVector {
				own := a.Model().Params()
				if m.Payload.Data[0] != -own[0] {
					t.Fatalf("released %v, want the negated model %v", m.Payload.Data[0], own[0])
				}
			}
			if err := b.Step(m); err != nil {
				t.Fatalf("phase %d: %v", phase, err)
			}
		}
		if _, _, err := b.Outbox(); err != nil {
			t.Fatal(err)
		}
		if want := phase < 2; more != want {
			t.Fatalf("phase %d: more = %v", phase, more)
		}
		if !more {
			break
		}
	}
	if !slices.Equal(kinds, []wire.Kind{wire.KindKey, wire.KindVector, wire.KindShare}) {
		t.Fatalf("kinds by phase %v", kinds)
	}
	nodetest.End(t, b, node.EndOptions{})
	if !slices.Equal(lb.handled, []wire.Kind{wire.KindKey, wire.KindShare}) || lb.observed != 3 || lb.ended != 1 || len(rec.seen) != 1 {
		t.Fatalf("layer handled %v, observed %d, ended %d; strategy saw %d", lb.handled, lb.observed, lb.ended, len(rec.seen))
	}
	// Without a layer that takes them, privacy kinds are refused.
	plain := nodetest.NewNode(t, 0, ids, dir, &strategy.FedAvg{})
	m := &wire.Message{Header: wire.Header{Kind: wire.KindShare, From: 1, To: 0, Round: 0, Seq: 1}, Blob: wire.Blob{Data: []byte{1}}}
	if err := wire.Sign(m, ids[1]); err != nil {
		t.Fatal(err)
	}
	nodetest.Begin(t, 0, node.Neighborhood{In: []int{1}, InDegree: []int{1}, Degree: 1}, plain)
	if err := plain.Step(m); err == nil {
		t.Fatal("a share message reached a node without a layer for it")
	}
	nodetest.Outbox(t, plain)
	if rd := nodetest.End(t, plain, node.EndOptions{}); !slices.Equal(rd.Rejections, []node.Rejection{{1, node.ReasonUnexpectedKind, 1}}) {
		t.Fatalf("rejections %+v", rd.Rejections)
	}
}

// scorer reports agreement scores, as LIGHTYEAR does.
type scorer struct{ strategy.FedAvg }

func (*scorer) Reports() []strategy.Report {
	return []strategy.Report{strategy.Scores{{From: 1, Kind: "ntk", Value: 0.75}}}
}

// Ready carries what the simulator used to read from the node's insides:
// the strategy's weights and scores, the evaluation when asked, training.
func TestReadyCarriesTheRound(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 2)
	n := nodetest.NewNode(t, 0, ids, dir, &scorer{})
	p := nodetest.NewNode(t, 1, ids, dir, &strategy.FedAvg{})
	hood := node.Neighborhood{In: []int{1}, InDegree: []int{1}, Degree: 1}
	m := vectorFrom(t, p, 0, hood)
	nodetest.Begin(t, 0, hood, n)
	if err := n.Step(m); err != nil {
		t.Fatal(err)
	}
	nodetest.Outbox(t, n)
	rd := nodetest.End(t, n, node.EndOptions{Evaluate: true, Global: true})
	if rd.Weights[1] != 0.5 || len(nodetest.Scores(rd)) != 1 || nodetest.Scores(rd)[0].Value != 0.75 || rd.Eval == nil ||
		rd.Eval.Local.Accuracy < 0 || nodetest.Trust(rd) != nil || rd.Train.Steps != 1 {
		t.Fatalf("ready %+v", rd)
	}
	// Keep closes without combining: no weights, no scores, model unchanged.
	nodetest.Begin(t, 1, hood, n)
	before := slices.Clone(n.Model().Params())
	nodetest.Outbox(t, n)
	rd = nodetest.End(t, n, node.EndOptions{Keep: true})
	if rd.Combined || rd.Weights != nil || nodetest.Scores(rd) != nil || !slices.Equal(before, n.Model().Params()) {
		t.Fatalf("Keep: %+v", rd)
	}
}
