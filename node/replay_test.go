package node_test

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/node/internal/nodetest"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// rss is the process's resident set in bytes after a full collection with
// the freed memory returned to the OS (Linux /proc/self/statm); false
// where there is no /proc.
func rss(t *testing.T) (int, bool) {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		t.Fatalf("/proc/self/statm: %q", b)
	}
	pages, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatal(err)
	}
	return pages * os.Getpagesize(), true
}

// Replaying one captured signed message 3,000 times at a node, 1,500
// times before its round (held for it) and 1,500 during it (after it was
// delivered), each arrival a fresh decoded copy as a transport hands over,
// raises the node's resident memory by less than two copies of the
// message: the node keeps it once and refuses the copies before reading
// them. The model has 262,144 parameters (1 MiB of float32).
func TestReplayedMessageIsKeptOnce(t *testing.T) {
	if _, ok := rss(t); !ok {
		t.Skip("no /proc/self/statm: resident memory cannot be measured here")
	}
	if testing.Short() {
		t.Skip("decodes 3,000 one-megabyte messages")
	}
	const inputs, classes = 65535, 4 // 65,535·4 weights + 4 biases = 262,144 parameters
	ids, dir := wire.SimIdentities(7, 2)
	build := func(id int) *node.Node {
		m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{inputs}, Classes: classes}, 1, nn.Options{Batch: 1})
		if err != nil {
			t.Fatal(err)
		}
		opt, _ := nn.NewOptimizer(nn.OptimizerSpec{LR: 0.1}, m.NumParams())
		d := &nodetest.Data{}
		n, err := node.New(node.Config{ID: id, Model: m, Optimizer: opt, Strategy: &strategy.FedAvg{},
			TrainData: d, Test: d, Identity: ids[id], Directory: dir, Seed: 1, Rounds: 3})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	n, peer := build(0), build(1)
	if p := n.Model().NumParams(); p != 1<<18 {
		t.Fatalf("%d parameters, want 262,144", p)
	}
	hood := node.Neighborhood{In: []int{1}, InDegree: []int{1}, Degree: 1}
	// The peer's signed broadcasts of rounds 0 and 2, encoded: the second
	// is the captured message.
	var sent [][]byte
	for _, r := range []int{0, 2} {
		if err := peer.Begin(r, hood); err != nil {
			t.Fatal(err)
		}
		out, _, err := peer.Outbox()
		if err != nil {
			t.Fatal(err)
		}
		b, err := wire.AppendEncode(nil, out[0])
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, b)
		if _, err := peer.End(node.EndOptions{Keep: true}); err != nil {
			t.Fatal(err)
		}
	}
	captured := sent[1]
	peer = nil
	replay := func(b []byte, times int) (refused int) {
		for range times {
			m := new(wire.Message)
			if err := wire.Decode(b, m); err != nil {
				t.Fatal(err)
			}
			if n.Step(m) != nil {
				refused++
			}
		}
		return refused
	}
	round := func(r int) {
		if err := n.Begin(r, hood); err != nil {
			t.Fatal(err)
		}
		if _, _, err := n.Outbox(); err != nil {
			t.Fatal(err)
		}
	}
	// A first round, with the peer's round-0 message, warms the node's
	// own buffers (its send copy, the validator's, the combine's scratch),
	// which are not the replay's doing.
	round(0)
	if replay(sent[0], 1) != 0 {
		t.Fatal("the peer's round-0 message refused")
	}
	if _, err := n.End(node.EndOptions{}); err != nil {
		t.Fatal(err)
	}
	round(1)
	before, _ := rss(t)
	if refused := replay(captured, 1500); refused != 1499 {
		t.Fatalf("before its round: %d of 1,500 copies refused, want all but the first", refused)
	}
	if _, err := n.End(node.EndOptions{}); err != nil {
		t.Fatal(err)
	}
	round(2)
	if refused := replay(captured, 1500); refused != 1500 {
		t.Fatalf("during its round: %d of 1,500 copies refused, want all", refused)
	}
	after, _ := rss(t)
	if node.Inbox(n) != 1 {
		t.Fatalf("%d messages reached the strategy's inbox, want 1", node.Inbox(n))
	}
	rise := after - before
	t.Logf("RSS %d → %d bytes (%+d); the message is %d bytes", before, after, rise, len(captured))
	if rise >= 2*len(captured) {
		t.Fatalf("RSS rose by %d bytes replaying one %d-byte message 3,000 times, want less than two copies", rise, len(captured))
	}
	runtime.KeepAlive(n)
}
