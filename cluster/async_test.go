package cluster

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/sim"
	"github.com/trellis-fl/trellis/wire"
)

// asyncSix is six nodes in asynchronous timing on a 3-regular graph:
// non-IID shares of different sizes, so the nodes step at different
// speeds and take each other's messages of other steps. Three epochs a
// step and no practical staleness bound, so that on a loaded machine too
// the nodes take and combine each other's models before they finish (a
// step of a few milliseconds can end the run before the first message
// arrives, and a tight bound drops what does).
const asyncSix = `
name = "async-six"
nodes = 6
rounds = 20
seed = 5
eval_every = 1
[data]
samples = 3000
[partition]
method = "dirichlet"
alpha = 0.3
[model]
kind = "logreg"
[training]
lr = 0.05
epochs = 3
[topology]
kind = "kregular"
k = 3
[strategy]
name = "async_mean"
[evaluation]
global_test = 200
[timing]
mode = "async"
max_staleness = 1000
`

// roundsWriter keeps the monitor's records.
type roundsWriter struct {
	mu     sync.Mutex
	rounds []*metrics.Round
}

func (w *roundsWriter) Round(r *metrics.Round) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rounds = append(w.rounds, r)
	return nil
}
func (w *roundsWriter) Timing(metrics.Timing) {}

// TestAsyncClusterReplaysInSimulator runs six asynchronous node processes'
// drivers in-process over real ZeroMQ (IPC) sockets with a monitor; each
// node writes its arrival log. The simulator's replay (sim.Replay) drives
// six freshly built nodes in the logged order and must give every node's
// step records (as the monitor wrote them) and final model bit for bit.
func TestAsyncClusterReplaysInSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a six-node asynchronous deployment in-process")
	}
	c, s := testSetup(t, asyncSix)
	if s.Async == nil {
		t.Fatal("the config is not asynchronous")
	}
	const n = 6
	sock, err := os.MkdirTemp("", "as-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sock)
	peers := IPCEndpoints(sock, n)
	keys := wire.NewSeedKeys(c.Seed, n)
	dir, _ := keys.Directory()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a hang guard
	defer cancel()
	d, err := s.Deploy()
	if err != nil {
		t.Fatal(err)
	}
	w := &roundsWriter{}
	monDone := make(chan error, 1)
	go func() {
		monDone <- RunMonitor(ctx, MonitorConfig{Run: testRun(d), Out: w, Endpoint: peers.Monitor, Directory: dir, Dir: out})
	}()
	nodes := make([]*node.Node, n)
	epoch := time.Now().Add(2 * time.Second) // after every node bound its socket
	done := make(chan error, n)
	for i := range n {
		nc := testNode(t, s, i, keys)
		nodes[i] = nc.Node
		nc.Peers, nc.Timing = peers, Timing{Mode: Async, Epoch: epoch}
		nc.Arrivals = filepath.Join(out, fmt.Sprintf("node-%d.arrivals.jsonl", i))
		go func() { done <- RunNode(ctx, nc) }()
	}
	for range n {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-monDone; err != nil {
		t.Fatal(err)
	}

	logs := make([][]sim.ReplayEvent, n)
	offStep := 0 // messages taken of a step other than the receiver's
	allTakes := 0
	for i := range n {
		f, err := os.Open(filepath.Join(out, fmt.Sprintf("node-%d.arrivals.jsonl", i)))
		if err != nil {
			t.Fatal(err)
		}
		logs[i], err = sim.ReadReplayLog(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		takes, step := 0, -1
		for _, e := range logs[i] {
			switch e.Ev {
			case "begin":
				step = e.Step
			case "take":
				takes++
				if e.Step != step {
					offStep++
				}
			}
		}
		allTakes += takes
	}
	// A fast node may finish before its neighbours' messages come: not
	// every node takes some, but the run must have exchanged models.
	t.Logf("messages taken: %d, of another step than the receiver's: %d", allTakes, offStep)
	if allTakes < n {
		t.Fatalf("%d messages taken by six nodes in %d steps: hardly a run", allTakes, c.Rounds)
	}

	built, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	replayed := make([][]sim.StepRecord, n)
	err = sim.Replay(t.Context(), built.Config, built.Nodes, logs, func(r sim.StepRecord) error {
		replayed[r.Node] = append(replayed[r.Node], r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.rounds) != c.Rounds {
		t.Fatalf("the monitor wrote %d steps, want %d", len(w.rounds), c.Rounds)
	}
	for i := range n {
		if len(replayed[i]) != c.Rounds {
			t.Fatalf("node %d: %d steps replayed, want %d", i, len(replayed[i]), c.Rounds)
		}
		for k, r := range replayed[i] {
			got := w.rounds[k].Nodes[i]
			want := r.NodeRound
			if r.Step != k {
				t.Fatalf("node %d: replayed step %d at position %d", i, r.Step, k)
			}
			got.ClaimBytes, want.ClaimBytes = 0, 0 // the simulator's step record leaves it out
			if !reflect.DeepEqual(got, want) {
				t.Errorf("node %d step %d:\ncluster %+v\nreplay  %+v", i, k, got, want)
			}
		}
		if k := firstDiff(nodes[i].Model().Params(), built.Nodes[i].Model().Params()); k >= 0 {
			t.Fatalf("node %d: parameter %d differs between the cluster and the replay", i, k)
		}
	}

	// The comparison sees the order: the same replay with the takes of
	// the first node that combined an input left out gives that node
	// another model.
	taker := -1
	for i := range n {
		for _, r := range replayed[i] {
			if r.Inputs > 0 && taker < 0 {
				taker = i
			}
		}
	}
	if taker < 0 {
		t.Fatal("no node combined an input")
	}
	again, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	var cut []sim.ReplayEvent
	for _, e := range logs[taker] {
		if e.Ev != "take" {
			cut = append(cut, e)
		}
	}
	logs[taker] = cut
	if err := sim.Replay(t.Context(), again.Config, again.Nodes, logs, nil); err != nil {
		t.Fatal(err)
	}
	if firstDiff(nodes[taker].Model().Params(), again.Nodes[taker].Model().Params()) < 0 {
		t.Errorf("node %d: the same model without the messages it took", taker)
	}
}

// firstDiff is the first index where a and b differ bitwise, or -1.
func firstDiff(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for k := range a {
		if math.Float32bits(a[k]) != math.Float32bits(b[k]) {
			return k
		}
	}
	return -1
}

// TestAsyncHorizonCompletesTheRun: nodes with far more steps than they
// can take stop at the horizon; the run is complete (no error from the
// monitor or any node), the monitor wrote the steps taken, and each
// node's arrival log ends with a step's end.
func TestAsyncHorizonCompletesTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a three-node asynchronous deployment in-process")
	}
	text := strings.Replace(strings.Replace(asyncSix, "nodes = 6", "nodes = 3", 1), "rounds = 20", "rounds = 1000000", 1)
	text = strings.Replace(text, "k = 3", "k = 2", 1)
	c, s := testSetup(t, text)
	const n = 3
	sock, err := os.MkdirTemp("", "ah-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sock)
	peers := IPCEndpoints(sock, n)
	keys := wire.NewSeedKeys(c.Seed, n)
	dir, _ := keys.Directory()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a hang guard
	defer cancel()
	d, err := s.Deploy()
	if err != nil {
		t.Fatal(err)
	}
	w := &roundsWriter{}
	monDone := make(chan error, 1)
	go func() {
		monDone <- RunMonitor(ctx, MonitorConfig{Run: testRun(d), Out: w, Endpoint: peers.Monitor, Directory: dir, Dir: out})
	}()
	epoch := time.Now().Add(time.Second)
	done := make(chan error, n)
	for i := range n {
		nc := testNode(t, s, i, keys)
		nc.Peers, nc.Timing = peers, Timing{Mode: Async, Epoch: epoch, Horizon: 500 * time.Millisecond}
		nc.Arrivals = filepath.Join(out, fmt.Sprintf("node-%d.arrivals.jsonl", i))
		go func() { done <- RunNode(ctx, nc) }()
	}
	for range n {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-monDone; err != nil {
		t.Fatalf("monitor: %v", err)
	}
	t.Logf("%d steps written", len(w.rounds))
	if len(w.rounds) == 0 || len(w.rounds) >= c.Rounds {
		t.Fatalf("%d steps written of %d", len(w.rounds), c.Rounds)
	}
	for i := range n {
		f, err := os.Open(filepath.Join(out, fmt.Sprintf("node-%d.arrivals.jsonl", i)))
		if err != nil {
			t.Fatal(err)
		}
		log, err := sim.ReadReplayLog(f)
		f.Close()
		if err != nil || len(log) == 0 || log[len(log)-1].Ev != "end" {
			t.Fatalf("node %d: a log of %d events ending %+v (%v)", i, len(log), log[max(0, len(log)-1):], err)
		}
	}
}
