package node_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// asyncRecorder is async_mean that keeps what each Combine was handed.
type asyncRecorder struct {
	strategy.AsyncMean
	seen []strategy.Incoming
}

func (r *asyncRecorder) AsyncInputs() bool { return true }
func (r *asyncRecorder) Combine(v *strategy.View, in []strategy.Incoming) (map[int]float64, error) {
	r.seen = append(r.seen[:0], in...)
	return r.AsyncMean.Combine(v, in)
}

// asyncNode is node id of dir in asynchronous timing with max staleness 3.
func asyncNode(t *testing.T, id int, ids []*wire.Identity, dir *wire.Directory, st strategy.Strategy) *node.Node {
	return nodetest.NewNode(t, id, ids, dir, st, func(c *node.Config) { c.Async = &node.Async{MaxStaleness: 3} })
}

// vecAt is a model vector from node from at its step, with sequence
// number seq, signed.
func vecAt(t *testing.T, ids []*wire.Identity, from uint32, step int, seq uint64, n int) *wire.Message {
	return signedFrom(t, ids, from, step, seq, wire.KindVector, func(m *wire.Message) {
		m.Payload.Tag = strategy.TagModel
		m.Payload.Data = make([]float32, n)
		m.Payload.Data[0] = float32(step)
	})
}

// step runs one asynchronous step of n: Begin, Train, Outbox, End.
func step(t *testing.T, n *node.Node, s int, hood node.Neighborhood) node.Ready {
	t.Helper()
	nodetest.Begin(t, s, hood, n)
	nodetest.Outbox(t, n)
	return nodetest.End(t, n, node.EndOptions{})
}

var hood12 = node.Neighborhood{In: []int{1, 2}, InDegree: []int{2, 2}, Degree: 2}

// A message older than max_staleness of the receiver's steps never
// reaches the strategy: dropped on arrival when it is already too old,
// and at End when the receiver's steps left it behind while it waited;
// the others reach it with their staleness, the receiver's step minus
// the sender's (0 for a sender ahead).
func TestAsyncStaleInputsNeverReachTheStrategy(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 3)
	rec := &asyncRecorder{}
	n := asyncNode(t, 0, ids, dir, rec)
	params := n.Model().NumParams()
	nodetest.Begin(t, 10, hood12, n)
	if err := n.Step(vecAt(t, ids, 1, 5, 1, params)); err == nil {
		t.Fatal("a message 5 steps old taken at max_staleness 3")
	}
	for _, m := range []*wire.Message{vecAt(t, ids, 2, 8, 1, params), vecAt(t, ids, 1, 9, 1, params), vecAt(t, ids, 2, 12, 1, params)} {
		if err := n.Step(m); err != nil {
			t.Fatal(err)
		}
	}
	nodetest.Outbox(t, n)
	rd := nodetest.End(t, n, node.EndOptions{})
	type seen struct{ from, staleness int }
	got := []seen{}
	for _, in := range rec.seen {
		got = append(got, seen{in.From, in.Staleness})
	}
	// Node 2's step 12 replaced its step 8 (the newest per sender).
	if want := []seen{{1, 1}, {2, 0}}; !slices.Equal(got, want) {
		t.Fatalf("the strategy saw %+v, want %+v", got, want)
	}
	if want := []node.Rejection{{From: 1, Reason: node.ReasonStale, Count: 1}}; !slices.Equal(rd.Rejections, want) {
		t.Fatalf("rejections %+v, want %+v", rd.Rejections, want)
	}
	if want := []node.InputAge{{From: 1, Tag: strategy.TagModel, Staleness: 1}, {From: 2, Tag: strategy.TagModel}}; !slices.Equal(rd.Ages, want) {
		t.Fatalf("ages %+v, want %+v", rd.Ages, want)
	}
	// Between steps: node 2's step 13, one step ahead on arrival, waits
	// while the receiver skips to step 17: 4 steps old at its End.
	if err := n.Step(vecAt(t, ids, 2, 13, 1, params)); err != nil {
		t.Fatal(err)
	}
	if h := node.Held(n); h.Bytes[2] == 0 {
		t.Fatal("the waiting message is not held")
	}
	rd = step(t, n, 17, hood12)
	if len(rec.seen) != 0 {
		t.Fatalf("the strategy saw %+v, want nothing", rec.seen)
	}
	if want := []node.Rejection{{From: 2, Reason: node.ReasonStale, Count: 1}}; !slices.Equal(rd.Rejections, want) {
		t.Fatalf("rejections %+v, want %+v", rd.Rejections, want)
	}
	if h := node.Held(n); h.TotalBytes != 0 || len(h.Bytes) != 0 {
		t.Fatalf("held after End: %+v", h)
	}
}

// A sender flooding its receiver with thousands of messages — increasing
// steps, repeated steps, older steps, exact copies — never makes it hold
// more than the per-sender bound; only its newest step reaches the
// strategy, and every refusal is counted under its reason.
func TestAsyncFloodingSenderIsBounded(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 3)
	rec := &asyncRecorder{}
	n := asyncNode(t, 0, ids, dir, rec)
	params := n.Model().NumParams()
	nodetest.Begin(t, 0, hood12, n)
	// As many messages of a step as fit the per-sender bound (four of the
	// largest message the node takes, tag included), and two more.
	size, err := wire.EncodedSize(vecAt(t, ids, 1, 0, 1, params))
	if err != nil {
		t.Fatal(err)
	}
	fit := node.Held(n).PerSenderBytes / size
	const steps = 500
	perStep := fit + 2
	var want = map[string]int{}
	maxHeld := 0
	check := func() {
		h := node.Held(n)
		if h.Bytes[1] > h.PerSenderBytes || h.TotalBytes != h.Bytes[1] {
			t.Fatalf("held %d bytes of node 1 (total %d), bound %d", h.Bytes[1], h.TotalBytes, h.PerSenderBytes)
		}
		maxHeld = max(maxHeld, h.TotalBytes)
	}
	for s := range steps {
		var taken *wire.Message
		for k := range perStep {
			m := vecAt(t, ids, 1, s, uint64(k+1), params)
			if k < fit {
				taken = m
			}
			if err := n.Step(m); (err == nil) != (k < fit) {
				t.Fatalf("step %d message %d: %v", s, k, err)
			}
			check()
		}
		want[node.ReasonBufferFull] += perStep - fit
		_ = n.Step(taken) // a copy
		want[node.ReasonDuplicate]++
		if s > 0 {
			_ = n.Step(vecAt(t, ids, 1, s-1, 99, params)) // an older step
			want[node.ReasonSuperseded]++
		}
		check()
	}
	nodetest.Outbox(t, n)
	rd := nodetest.End(t, n, node.EndOptions{})
	if len(rec.seen) != fit {
		t.Fatalf("the strategy saw %d inputs, want the newest step's %d", len(rec.seen), fit)
	}
	for _, in := range rec.seen {
		if in.Vector[0] != steps-1 || in.From != 1 {
			t.Fatalf("input %+v, want node 1's step %d", in, steps-1)
		}
	}
	got := map[string]int{}
	for _, r := range rd.Rejections {
		got[r.Reason] += r.Count
	}
	for reason, c := range want {
		if got[reason] != c {
			t.Fatalf("rejections %v, want %v", got, want)
		}
	}
	if h := node.Held(n); maxHeld != fit*size || h.TotalBytes != 0 {
		t.Fatalf("at most %d bytes held, want %d·%d within the bound %d; %d after End", maxHeld, fit, size, h.PerSenderBytes, h.TotalBytes)
	}
}

// In asynchronous timing a node refuses what it refuses in rounds: a
// sender outside its in-neighbours (also before its first step), a body
// of the wrong size, a copy, a bad signature.
func TestAsyncRefusesAsInRounds(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 4)
	rec := &asyncRecorder{}
	n := asyncNode(t, 0, ids, dir, rec)
	params := n.Model().NumParams()
	if err := n.Step(vecAt(t, ids, 1, 0, 1, params)); err == nil {
		t.Fatal("a message before the first step taken")
	}
	nodetest.Begin(t, 2, hood12, n)
	good := vecAt(t, ids, 1, 2, 1, params)
	forged := vecAt(t, ids, 2, 2, 1, params)
	forged.Payload.Data[1] = 7 // after signing
	for _, c := range []struct {
		m      *wire.Message
		reason string
	}{
		{vecAt(t, ids, 3, 2, 1, params), node.ReasonNotNeighbor},
		{vecAt(t, ids, 1, 2, 1, params+1), node.ReasonWrongSize},
		{good, ""},
		{good, node.ReasonDuplicate},
		{forged, wire.BadSignature.String()},
	} {
		err := n.Step(c.m)
		if (err == nil) != (c.reason == "") {
			t.Fatalf("from %d: %v, want refusal %q", c.m.From, err, c.reason)
		}
	}
	nodetest.Outbox(t, n)
	rd := nodetest.End(t, n, node.EndOptions{})
	want := []node.Rejection{
		{From: 1, Reason: node.ReasonDuplicate, Count: 1},
		{From: 1, Reason: node.ReasonNotNeighbor, Count: 1}, // before the first step
		{From: 1, Reason: node.ReasonWrongSize, Count: 1},
		{From: 2, Reason: wire.BadSignature.String(), Count: 1},
		{From: 3, Reason: node.ReasonNotNeighbor, Count: 1},
	}
	if !slices.Equal(rd.Rejections, want) {
		t.Fatalf("rejections %+v, want %+v", rd.Rejections, want)
	}
	if len(rec.seen) != 1 || rec.seen[0].From != 1 {
		t.Fatalf("the strategy saw %+v, want node 1's one message", rec.seen)
	}
}

// A sender's message stays as sent while its receiver holds it across the
// sender's next steps: each step's vector has a buffer of its own.
func TestAsyncSentVectorsOutliveTheStep(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 3)
	n := asyncNode(t, 1, ids, dir, &strategy.AsyncMean{})
	hood := node.Neighborhood{In: []int{0}, InDegree: []int{1}, Degree: 1}
	nodetest.Begin(t, 0, hood, n)
	m0 := nodetest.Outbox(t, n)[0]
	kept := slices.Clone(m0.Payload.Data)
	nodetest.End(t, n, node.EndOptions{})
	nodetest.Begin(t, 1, hood, n)
	m1 := nodetest.Outbox(t, n)[0]
	if !slices.Equal(m0.Payload.Data, kept) || slices.Equal(m1.Payload.Data, kept) || m1.Round != 1 {
		t.Fatalf("step 0's vector %v changed to %v, or step 1's (round %d) equals it", kept, m0.Payload.Data, m1.Round)
	}
}

// New refuses asynchronous timing with a strategy not defined for it, a
// layer that is not Stepwise, or a negative max_staleness; a step refuses
// a layer of more than one exchange phase.
func TestAsyncRefusedConfigurations(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 2)
	build := func(st strategy.Strategy, edit func(c *node.Config)) error {
		c := node.Config{Async: &node.Async{MaxStaleness: 2}}
		edit(&c)
		_, err := node.New(nodetest.Config(t, 0, ids, dir, st, func(x *node.Config) { x.Async, x.Layers = c.Async, c.Layers }))
		return err
	}
	if err := build(&strategy.FedAvg{}, func(*node.Config) {}); err == nil {
		t.Error("fedavg taken in asynchronous timing")
	}
	if err := build(&strategy.AsyncMean{}, func(c *node.Config) { c.Async.MaxStaleness = -1 }); err == nil {
		t.Error("max_staleness -1 taken")
	}
	if err := build(&strategy.AsyncMean{}, func(c *node.Config) { c.Layers = []node.Layer{&phased{}} }); err == nil {
		t.Error("a layer taken in asynchronous timing")
	}
	if err := build(&strategy.AsyncMean{}, func(*node.Config) {}); err != nil {
		t.Error(err)
	}
	// A layer that says it is stepwise but needs three exchange phases:
	// taken by New, refused when its first step begins.
	n, err := node.New(nodetest.Config(t, 0, ids, dir, &strategy.AsyncMean{}, func(x *node.Config) {
		x.Async, x.Layers = &node.Async{MaxStaleness: 2}, []node.Layer{stepwisePhased{&phased{}}}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Begin(0, hood12); err == nil {
		t.Error("a step begun with a layer of three exchange phases")
	}
}

// stepwisePhased is phased claiming to be node.Stepwise.
type stepwisePhased struct{ *phased }

func (stepwisePhased) Stepwise() {}

// Whatever bytes arrive, an asynchronous node does not panic, holds no
// more than the per-sender bound per in-neighbour, and its step ends
// without error: decoded as sent, or re-addressed and re-signed by one of
// the directory's keys (so that the checks after the signature see it),
// each message twice (a replay).
func FuzzAsyncStep(f *testing.F) {
	ids, dir := wire.SimIdentities(7, 4)
	for _, m := range []*wire.Message{vecAt(&testing.T{}, ids, 1, 3, 1, 6), vecAt(&testing.T{}, ids, 2, 9, 2, 7)} {
		b, err := wire.AppendEncode(nil, m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(1), uint16(3), uint16(1), false)
		f.Add(b, uint8(2), uint16(0), uint16(4), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, from uint8, step, seq uint16, resign bool) {
		n := asyncNode(t, 0, ids, dir, &strategy.AsyncMean{Decay: 0.5})
		nodetest.Begin(t, 5, hood12, n)
		var m wire.Message
		if err := wire.Decode(b, &m); err != nil {
			return
		}
		if resign {
			m.From, m.Round, m.Seq = uint32(from%4), uint64(step), uint64(seq)
			if err := wire.Sign(&m, ids[m.From]); err != nil {
				return
			}
		}
		_ = n.Step(&m)
		_ = n.Step(&m)
		h := node.Held(n)
		for id, bytes := range h.Bytes {
			if bytes > h.PerSenderBytes || (id != 1 && id != 2) {
				t.Fatalf("node %d: %d bytes held, bound %d", id, bytes, h.PerSenderBytes)
			}
		}
		nodetest.Outbox(t, n)
		nodetest.End(t, n, node.EndOptions{})
	})
}

// A restored asynchronous node keeps the newest step and sequence number
// it took from each sender (Snapshot.Senders): a copy of a message the
// original took is refused as a duplicate and an older step as
// superseded, as the original would; a fresh node takes both. A snapshot
// with senders does not restore into a node of rounds.
func TestAsyncRestoreKeepsSenders(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 3)
	orig := asyncNode(t, 0, ids, dir, &strategy.AsyncMean{})
	params := orig.Model().NumParams()
	taken := vecAt(t, ids, 1, 5, 1, params)
	nodetest.Begin(t, 3, hood12, orig)
	if err := orig.Step(taken); err != nil {
		t.Fatal(err)
	}
	nodetest.Outbox(t, orig)
	nodetest.End(t, orig, node.EndOptions{})
	snap, err := orig.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if want := []node.SenderStep{{From: 1, Step: 5, Seq: 1}}; !slices.Equal(snap.Senders, want) {
		t.Fatalf("snapshot senders %+v, want %+v", snap.Senders, want)
	}
	for _, restored := range []bool{true, false} {
		n := asyncNode(t, 0, ids, dir, &strategy.AsyncMean{})
		if restored {
			if err := n.Restore(snap); err != nil {
				t.Fatal(err)
			}
		}
		nodetest.Begin(t, 4, hood12, n)
		errCopy, errOld := n.Step(taken), n.Step(vecAt(t, ids, 1, 4, 1, params))
		nodetest.Outbox(t, n)
		rd := nodetest.End(t, n, node.EndOptions{})
		if !restored {
			if errCopy != nil || len(rd.Ages) != 1 {
				t.Errorf("a fresh node: %v, %v, inputs %+v; want the copy taken (and the older step superseded by it)", errCopy, errOld, rd.Ages)
			}
			continue
		}
		want := []node.Rejection{{From: 1, Reason: node.ReasonDuplicate, Count: 1}, {From: 1, Reason: node.ReasonSuperseded, Count: 1}}
		slices.SortFunc(rd.Rejections, func(a, b node.Rejection) int { return strings.Compare(a.Reason, b.Reason) })
		if errCopy == nil || errOld == nil || !slices.Equal(rd.Rejections, want) || len(rd.Ages) != 0 {
			t.Errorf("restored: %v, %v, rejections %+v, inputs %+v; want both refused (%+v)", errCopy, errOld, rd.Rejections, rd.Ages, want)
		}
	}
	rounds := nodetest.NewNode(t, 0, ids, dir, &strategy.FedAvg{})
	if err := rounds.Restore(snap); err == nil || !strings.Contains(err.Error(), "asynchronous senders") {
		t.Errorf("a snapshot with senders restored into a node of rounds: %v", err)
	}
}

// With Async.Latest a sender's newest set stays the node's input step
// after step, its staleness growing, until a newer step replaces it or it
// passes max_staleness (then refused as stale once and forgotten); without
// it a step combines only what arrived since the last.
func TestAsyncLatestKeepsEachSendersNewest(t *testing.T) {
	ids, dir := wire.SimIdentities(7, 3)
	for _, latest := range []bool{false, true} {
		rec := &asyncRecorder{}
		n := nodetest.NewNode(t, 0, ids, dir, rec, func(c *node.Config) { c.Async = &node.Async{MaxStaleness: 3, Latest: latest} })
		params := n.Model().NumParams()
		ages := func(step int, msgs ...*wire.Message) ([]int, []node.Rejection) {
			t.Helper()
			nodetest.Begin(t, step, hood12, n)
			for _, m := range msgs {
				if err := n.Step(m); err != nil {
					t.Fatal(err)
				}
			}
			nodetest.Outbox(t, n)
			rd := nodetest.End(t, n, node.EndOptions{})
			var out []int
			for _, in := range rec.seen {
				out = append(out, in.From*100+in.Staleness)
			}
			if len(rd.Ages) != len(rec.seen) {
				t.Fatalf("step %d: %d ages for %d inputs", step, len(rd.Ages), len(rec.seen))
			}
			return out, rd.Rejections
		}
		got := [][]int{}
		a, _ := ages(5, vecAt(t, ids, 1, 5, 1, params), vecAt(t, ids, 2, 4, 1, params))
		got = append(got, a)
		a, _ = ages(6, vecAt(t, ids, 2, 6, 1, params))
		got = append(got, a)
		a, _ = ages(8)
		got = append(got, a)
		a, rej := ages(9)
		got = append(got, a)
		// Inputs as sender·100 + staleness.
		want := [][]int{{100, 201}, {200}, nil, nil}
		wantRej := []node.Rejection(nil)
		if latest {
			// Step 8: node 1's step 5 is 3 old, node 2's step 6 2 old;
			// step 9: node 1's is 4 > 3, refused once.
			want = [][]int{{100, 201}, {101, 200}, {103, 202}, {203}}
			wantRej = []node.Rejection{{From: 1, Reason: node.ReasonStale, Count: 1}}
		}
		for k := range want {
			if !slices.Equal(got[k], want[k]) {
				t.Errorf("latest %v: inputs %v, want %v", latest, got, want)
				break
			}
		}
		if !slices.Equal(rej, wantRej) {
			t.Errorf("latest %v: step 9's rejections %+v, want %+v", latest, rej, wantRej)
		}
	}
}
