package cluster_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/cluster"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/wire"
)

// tap is a test's man in the middle between a deployed run's processes:
// it listens where the other processes were told a process listens and
// pushes every frame that arrives, from any connection, on to where that
// process really listens, over one connection of its own. Each
// connection's frames keep their order (see runs on the connection's
// goroutine before its frame is passed on, and may hold it back); frames
// the test pushes itself (out.Send) go on the same connection.
type tap struct {
	ln  *cluster.Listener
	out *cluster.Pusher
}

func startTap(t *testing.T, listen, forward string, see func(frame []byte)) *tap {
	t.Helper()
	out, err := cluster.Dial(forward, 4096, 1<<28)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := cluster.Listen(listen, 1<<26, 64, func(frame []byte) bool {
		see(frame)
		out.Send(frame)
		return true
	})
	if err != nil {
		out.Close(0)
		t.Fatal(err)
	}
	tp := &tap{ln: ln, out: out}
	t.Cleanup(func() {
		ln.Close()
		out.Close(time.Second)
	})
	return tp
}

// TestRelayedMessageRefusedInCluster: on a five-node ring in lock-step, a
// Byzantine relay forwards node 2's signed broadcast of every round to
// node 0, whose in-neighbours are nodes 1 and 4 only. The relay is this
// test, on a genuine network path: it sits in front of node 3 (one of the
// links node 2 sends on), copies node 2's frames, and pushes them into
// node 0's socket. The frames pass every check of node 0's driver (they
// are node 2's, correctly signed, of the open round); node 0 itself
// refuses each, as not_in_neighbor, counts it in the round's record, and
// gives node 2 no weight. The run's files are the simulator's, which
// routes along the ring's links only: rounds.jsonl and edges.jsonl byte
// for byte, and metrics.jsonl byte for byte but for node 0's "rejected"
// field, which counts the relayed messages (0 in the simulator).
//
// So that every relayed message reaches node 0 within its round (not
// after the round closed, where it would count as a stale round), a
// second tap sits in front of node 0 and holds back node 1's and node 4's
// phase markers of round r, without which node 0 cannot close round r,
// until node 2's messages of round r went to node 0 ahead of them on the
// same connection. A third, in front of the monitor, reads node 0's
// signed records (its refusals by sender and reason, its weights).
func TestRelayedMessageRefusedInCluster(t *testing.T) {
	bin := trellisBinary(t) // skips under -short: it starts six processes
	const nodes, rounds = 5, 4
	const victim, source, via = 0, 2, 3 // node 2's message relayed to node 0, taken on its link to node 3
	text := logregFedAvg("relay", nodes, rounds, 9, 1000) + "[topology]\nkind = \"ring\"\n"
	c, cfgPath, simDir := simulate(t, text)
	dir := filepath.Dir(cfgPath)
	keys, err := wire.NewSeedKeys(c.Seed, nodes).Directory()
	if err != nil {
		t.Fatal(err)
	}

	sock, err := os.MkdirTemp("", "relay-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	bound := cluster.IPCEndpoints(sock, nodes) // where each process listens
	tapped := func(ep string) string { return ep + ".tap" }

	var mu sync.Mutex
	relayed := make([]int, rounds)             // node 2's messages pushed into node 0, per round
	sent := make([]chan struct{}, rounds)      // closed once node 2's round is relayed whole
	records := make([]*cluster.Record, rounds) // node 0's, as it sent them to the monitor
	stop := make(chan struct{})                // the test is over: hold nothing back
	seen := map[string]bool{}                  // frames relayed (a Pusher resends after a reconnect)
	for r := range sent {
		sent[r] = make(chan struct{})
	}

	into0 := startTap(t, tapped(bound.Endpoint(victim)), bound.Endpoint(victim), func(frame []byte) {
		if !cluster.IsMarker(frame) {
			return
		}
		mk, err := cluster.DecodeMarker(frame, keys)
		if err != nil || mk.Phase == cluster.LeavePhase || mk.Round >= rounds {
			return
		}
		select {
		case <-sent[mk.Round]:
		case <-stop:
		case <-time.After(2 * time.Minute): // a hang guard
			t.Errorf("node %d's messages of round %d never came past node %d", source, mk.Round, via)
		}
	})
	startTap(t, tapped(bound.Endpoint(via)), bound.Endpoint(via), func(frame []byte) {
		if cluster.IsMarker(frame) {
			// Node 2's marker of its round's last phase follows its
			// messages of the round on its connection: they are relayed.
			if mk, err := cluster.DecodeMarker(frame, keys); err == nil && mk.From == source && mk.Last &&
				mk.Phase != cluster.LeavePhase && mk.Round < rounds {
				mu.Lock()
				defer mu.Unlock()
				select {
				case <-sent[mk.Round]: // a marker sent again after a reconnect
				default:
					close(sent[mk.Round])
				}
			}
			return
		}
		var m wire.Message
		if wire.Decode(frame, &m) != nil || m.From != source || m.Round >= rounds {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !seen[string(frame)] {
			seen[string(frame)] = true
			relayed[m.Round]++
			into0.out.Send(frame)
		}
	})
	startTap(t, tapped(bound.Monitor), bound.Monitor, func(frame []byte) {
		if !cluster.IsRecord(frame) {
			return
		}
		if rec, err := cluster.DecodeRecord(frame, keys); err == nil && rec.Node == victim && !rec.Done && rec.Round >= 0 && rec.Round < rounds {
			mu.Lock()
			records[rec.Round] = rec
			mu.Unlock()
		}
	})
	t.Cleanup(func() { close(stop) }) // before the taps close (cleanups run last first)

	// Every process is told the taps' endpoints for node 0, node 3 and the
	// monitor, but binds its own real one.
	peersFile := func(name string, self int) string {
		p := &cluster.Peers{Monitor: tapped(bound.Monitor)}
		for i := range nodes {
			ep := bound.Endpoint(i)
			if (i == victim || i == via) && i != self {
				ep = tapped(ep)
			}
			p.Nodes = append(p.Nodes, cluster.Peer{ID: i, Endpoint: ep})
		}
		if self < 0 {
			p.Monitor = bound.Monitor
		}
		path := filepath.Join(dir, name)
		if err := p.Write(path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	out := filepath.Join(dir, "cluster")
	monitor := startProcess(t, bin, "monitor", "-o", out, "--config", cfgPath, "--peers", peersFile("monitor-peers.toml", -1), "-q")
	var procs []*exec.Cmd
	for i := range nodes {
		procs = append(procs, startProcess(t, bin, "node", "--id", strconv.Itoa(i), "--config", cfgPath,
			"--peers", peersFile(fmt.Sprintf("node-%d-peers.toml", i), i), "-q"))
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Errorf("node %d: %v", i, err)
		}
	}
	if err := monitor.Wait(); err != nil {
		t.Fatalf("monitor: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	for r, rec := range records {
		switch {
		case relayed[r] == 0:
			t.Errorf("round %d: no message of node %d was relayed", r, source)
			continue
		case rec == nil:
			t.Errorf("round %d: no record of node %d", r, victim)
			continue
		}
		want := []node.Rejection{{From: source, Reason: node.ReasonNotNeighbor, Count: relayed[r]}}
		if !slices.Equal(rec.Ready.Rejections, want) || rec.Ready.Rejected != relayed[r] {
			t.Errorf("round %d: node %d refused %+v (%d), want the %d relayed message(s) of node %d as %s",
				r, victim, rec.Ready.Rejections, rec.Ready.Rejected, relayed[r], source, node.ReasonNotNeighbor)
		}
		if w, ok := rec.Ready.Weights[source]; ok {
			t.Errorf("round %d: node %d gave node %d weight %v", r, victim, source, w)
		}
		if len(rec.Refused) > 0 {
			t.Errorf("round %d: node %d's driver refused %v: the relayed frames should pass the transport's checks and be refused by the node", r, victim, rec.Refused)
		}
	}

	for _, f := range []string{rundir.RoundsFile, rundir.EdgesFile} {
		want, got := readBoth(t, simDir, out, f)
		sameBytes(t, f, want, got)
	}
	// metrics.jsonl: the simulator's, with node 0's "rejected" of each
	// round set to the messages relayed to it in that round.
	want, got := readBoth(t, simDir, out, rundir.MetricsFile)
	var expect []byte
	for _, line := range bytes.SplitAfter(want, []byte("\n")) {
		var x struct{ Round, Node int }
		if len(bytes.TrimSpace(line)) > 0 {
			if err := json.Unmarshal(line, &x); err != nil {
				t.Fatal(err)
			}
			if x.Node == victim {
				zero := []byte(`"rejected":0`)
				if bytes.Count(line, zero) != 1 {
					t.Fatalf("the simulator's record of node %d round %d has no %s", victim, x.Round, zero)
				}
				line = bytes.Replace(line, zero, fmt.Appendf(nil, `"rejected":%d`, relayed[x.Round]), 1)
			}
		}
		expect = append(expect, line...)
	}
	sameBytes(t, rundir.MetricsFile+" (node 0's rejected counts set to the relayed messages)", expect, got)
}
