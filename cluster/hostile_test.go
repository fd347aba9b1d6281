package cluster

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/wire"
)

const twoNodes = `
name = "hostile"
nodes = 2
rounds = 3
seed = 11
[data]
samples = 600
[model]
kind = "logreg"
[strategy]
name = "fedavg"
[evaluation]
global_test = 0
`

// testSetup parses a config and builds its Setup with its data.
func testSetup(t *testing.T, text string) (config.Config, experiment.Setup) {
	t.Helper()
	c, err := config.Parse([]byte(text), "test config")
	if err != nil {
		t.Fatal(err)
	}
	tt, err := experiment.LoadData(c)
	if err != nil {
		t.Fatal(err)
	}
	s, err := experiment.SetupOf(c, tt)
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

// testNode is node id of the experiment as a node process, keys from
// keys: what `trellis node` builds (cmd/trellis, nodeProcess) but for the
// transport, timing and the config's fingerprint.
func testNode(t testing.TB, s experiment.Setup, id int, keys wire.KeySource) NodeConfig {
	t.Helper()
	d, err := s.Deploy()
	if err != nil {
		t.Fatal(err)
	}
	n, adv, err := d.Node(id, keys)
	if err != nil {
		t.Fatal(err)
	}
	ident, err := keys.Identity(id)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := keys.Directory()
	if err != nil {
		t.Fatal(err)
	}
	return NodeConfig{Node: n, Identity: ident, Directory: dir, Run: testRun(d), Adversary: adv, Global: d.Global(),
		Checkpoints: experiment.NodeCheckpoints{Node: n}}
}

// testRun is the deployment's Run.
func testRun(d *experiment.Deployment) Run {
	s := d.Setup
	return Run{Nodes: s.Nodes, Rounds: s.Rounds, EvalEvery: s.EvalEvery, Graph: d.Graph, Drops: d.Drops,
		Byzantine: d.Adversary.Byzantine, ByzantineIdle: s.ByzantineIdle, Async: s.Async != nil}
}

// testCluster is a node 0 run in-process (RunNode) with the test playing
// node 1 and the monitor.
type testCluster struct {
	peers   *Peers
	keyDir  string // with key files: where they are
	keys    wire.KeySource
	self    *wire.Identity // node 1's key, which the test holds
	markers chan Marker    // node 0's markers to node 1
	vectors chan *wire.Message
	records chan *Record
	done    chan error
	metrics *NodeMetrics // node 0's
}

// startNode0 starts node 0; with keyFiles the keys are fresh key files
// (else derived from the seed), and with listen1 the test binds node 1's
// endpoint itself. The endpoints are Unix sockets.
func startNode0(t *testing.T, text string, keyFiles, listen1 bool) *testCluster {
	t.Helper()
	sock, err := os.MkdirTemp("", "tc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	return startNode0On(t, IPCEndpoints(sock, 2), text, keyFiles, listen1)
}

// startNode0On is startNode0 on the endpoints of peers; links over TCP
// are encrypted (EncryptAuto), the test's sockets too.
func startNode0On(t *testing.T, peers *Peers, text string, keyFiles, listen1 bool) *testCluster {
	t.Helper()
	c, s := testSetup(t, text)
	var err error
	tc := &testCluster{peers: peers, keys: wire.NewSeedKeys(c.Seed, 2),
		markers: make(chan Marker, 64), vectors: make(chan *wire.Message, 64), records: make(chan *Record, 64), done: make(chan error, 1),
		metrics: NewNodeMetrics(0)}
	node0Keys := tc.keys
	if keyFiles {
		tc.keyDir = t.TempDir()
		if err := WriteKeys(tc.keyDir, tc.peers, rand.Reader); err != nil {
			t.Fatal(err)
		}
		tc.keys = Keys{Peers: tc.peers, PrivatePath: filepath.Join(tc.keyDir, wire.NodeKeyFile(1))}
		node0Keys = Keys{Peers: tc.peers, PrivatePath: filepath.Join(tc.keyDir, wire.NodeKeyFile(0))}
	}
	if tc.self, err = tc.keys.Identity(1); err != nil {
		t.Fatal(err)
	}
	dir, _ := tc.keys.Directory()
	monID := SeedMonitorIdentity(c.Seed)
	if keyFiles {
		if monID, err = ReadMonitorKey(filepath.Join(tc.keyDir, MonitorKeyFile), tc.peers); err != nil {
			t.Fatal(err)
		}
	}
	mon, err := listenSecured(EncryptAuto, tc.peers.Monitor, maxRecordBytes, 8, monID, dir, nil, func(b []byte) bool {
		if r, err := decodeRecord(b, dir); err == nil {
			tc.records <- r
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mon.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	nc := testNode(t, s, 0, node0Keys)
	nc.Peers, nc.Timing, nc.Metrics, nc.MonitorKey = tc.peers, Timing{Mode: Lockstep, PhaseTimeout: time.Minute}, tc.metrics, monID.Public()
	go func() { tc.done <- RunNode(ctx, nc) }()
	if !listen1 {
		return tc
	}
	me, err := listenSecured(EncryptAuto, tc.peers.Endpoint(1), 1<<26, 8, tc.self, dir, nil, func(b []byte) bool {
		if len(b) > 0 && b[0] == controlByte {
			if mk, err := decodeMarker(b, dir); err == nil {
				tc.markers <- mk
			}
			return true
		}
		var m wire.Message
		if wire.Decode(b, &m) == nil && m.Kind == wire.KindVector {
			tc.vectors <- &m
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { me.Close() })
	return tc
}

// hangGuard fails the test if ch yields nothing for a long time: a stall
// is the failure looked for, not slowness.
func hangGuard[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(2 * time.Minute):
		t.Fatalf("no %s after 2 minutes: the node stalled", what)
	}
	var zero T
	return zero
}

// rawPush connects to endpoint and completes the PUSH handshake.
func rawPush(t *testing.T, endpoint string) net.Conn {
	t.Helper()
	network, addr, _ := splitEndpoint(endpoint)
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := handshake(c, "PUSH", "PULL"); err != nil {
		t.Fatal(err)
	}
	return c
}

func writeFrame(c net.Conn, flags byte, b []byte) {
	h := []byte{flags | flagLong}
	h = binary.BigEndian.AppendUint64(h, uint64(len(b)))
	_, _ = c.Write(append(h, b...))
}

// TestHostileSender: a peer that sends garbage before and after the
// handshake, multi-part messages, an oversized frame header, forged,
// replayed, far-future and past-round messages, and replayed markers
// neither crashes nor stalls the node: it finishes every round with the
// honest peer's messages used, and the record counts what was refused.
func TestHostileSender(t *testing.T) {
	tc := startNode0(t, twoNodes, false, true)
	node0 := tc.peers.Endpoint(0)

	// Garbage instead of a greeting, once the node listens.
	network, addr, _ := splitEndpoint(node0)
	var g net.Conn
	for deadline := time.Now().Add(2 * time.Minute); g == nil; {
		var err error
		if g, err = net.Dial(network, addr); err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("node 0 does not listen: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	junk := make([]byte, 200)
	_, _ = rand.Read(junk)
	junk[0] = 0 // not a greeting's first byte
	_, _ = g.Write(junk)
	g.Close()
	// Garbage frames, each closing its connection; a multi-part message
	// (dropped); a frame announcing 1 TiB (closing its connection before
	// anything is allocated).
	junk = junk[:100]
	closes := func(what string, frames ...func(net.Conn)) {
		c := rawPush(t, node0)
		defer c.Close()
		for _, f := range frames {
			f(c)
		}
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Minute))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("the node kept the connection open after %s", what)
		}
	}
	frame := func(flags byte, b []byte) func(net.Conn) { return func(c net.Conn) { writeFrame(c, flags, b) } }
	closes("a garbage frame", frame(0, junk))
	closes("a message that does not decode", frame(0, append([]byte{wire.FormatVersion}, junk...)))
	closes("a malformed marker", frame(0, []byte{controlByte, markerType, 1, 2, 3}))
	closes("a 1 TiB frame header", frame(flagMore, junk[:10]), frame(0, junk[:10]), func(c net.Conn) {
		_, _ = c.Write(binary.BigEndian.AppendUint64([]byte{flagLong}, 1<<40))
	})

	// The honest part of node 1, over a PUSH socket, with forged,
	// replayed and wrong-round messages mixed in.
	p, err := Dial(node0, 1024, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(time.Second)
	other := wire.NewIdentity(999, 1) // not node 1's key
	encode := func(m *wire.Message, id *wire.Identity) []byte {
		if err := wire.Sign(m, id); err != nil {
			t.Fatal(err)
		}
		b, err := wire.AppendEncode(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	send := func(m *wire.Message, id *wire.Identity) []byte {
		b := encode(m, id)
		p.Send(b)
		return b
	}
	var oldMarker []byte
	for r := 0; ; r++ {
		// Node 0's vector of round r tells the payload's tag and length.
		v := hangGuard(t, tc.vectors, "vector from node 0")
		if v.Round != uint64(r) {
			t.Fatalf("node 0 sent round %d, want %d", v.Round, r)
		}
		mk := hangGuard(t, tc.markers, "phase marker from node 0")
		data := make([]float32, len(v.Payload.Data))
		for k := range data {
			data[k] = 0.01
		}
		m := &wire.Message{Header: wire.Header{Kind: wire.KindVector, From: 1, To: wire.Broadcast, Round: uint64(r), Seq: 1},
			Payload: wire.Payload{Tag: v.Payload.Tag, Data: data}}
		genuine := send(m, tc.self)
		p.Send(genuine) // an exact replay
		forged := *m
		forged.Seq = 2
		// A forgery on a connection of its own, which the node closes once
		// it counted the refusal: waiting for the close (not sleeping) makes
		// the count certain before the round can end.
		closes("a forged message", frame(0, encode(&forged, other)))
		early := *m
		early.Round = 1 << 40
		send(&early, tc.self)
		if r > 0 {
			past := *m
			past.Round, past.Seq = uint64(r-1), 9
			send(&past, tc.self)
			p.Send(oldMarker) // a replayed marker of the previous round
		}
		b, err := encodeMarker(Marker{From: 1, To: 0, Round: uint64(r), Phase: mk.Phase, Count: 1, Last: mk.Last}, tc.self)
		if err != nil {
			t.Fatal(err)
		}
		p.Send(b)
		oldMarker = b
		if r == 2 {
			break
		}
	}
	if err := hangGuard(t, tc.done, "end of node 0's run"); err != nil {
		t.Fatalf("RunNode: %v", err)
	}
	refused := map[string]int{}
	late := 0
	for r := 0; r < 3; r++ {
		rec := hangGuard(t, tc.records, "record")
		if rec.Round != r || rec.Done {
			t.Fatalf("record %d: round %d (done %v)", r, rec.Round, rec.Done)
		}
		if w := rec.Ready.Weights[1]; !(w > 0) {
			t.Errorf("round %d: weight of the honest peer %v, want > 0 (its message was used)", r, w)
		}
		if len(rec.Missing) > 0 {
			t.Errorf("round %d: markers missing from %v", r, rec.Missing)
		}
		for k, v := range rec.Refused {
			refused[k] += v
		}
		late += rec.Late
	}
	if rec := hangGuard(t, tc.records, "last record"); rec.Done {
		for k, v := range rec.Refused {
			refused[k] += v
		}
	}
	for _, reason := range []string{RefusedGarbage, RefusedSignature, RefusedDuplicate, RefusedEarly, RefusedMarker, "oversized", "handshake", "closed"} {
		if refused[reason] == 0 {
			t.Errorf("no %q refusal counted (counted: %v)", reason, refused)
		}
	}
	if late == 0 {
		t.Errorf("no late message counted")
	}
	// The node's Prometheus metrics count the same refusals, by reason.
	prom := scrape(t, tc.metrics)
	for _, reason := range []string{RefusedGarbage, RefusedSignature, RefusedDuplicate, RefusedEarly, RefusedMarker, "oversized", "closed"} {
		if v := prom[`trellis_node_refused_total{node="0",reason="`+reason+`"}`]; int(v) != refused[reason] {
			t.Errorf("metrics: %v %q refusals, the records %d", v, reason, refused[reason])
		}
	}
	if v := prom[`trellis_node_late_total{node="0"}`]; int(v) != late {
		t.Errorf("metrics: %v late, the records %d", v, late)
	}
}

// TestWallclockEndsRoundAtDeadline: in wall-clock mode a node whose
// training would take longer than its share of the window stops training
// at the deadline, and a node whose peer never speaks ends every round at
// its deadline with what it has (its own model), the silent peer listed as
// missing.
func TestWallclockEndsRoundAtDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs rounds of a wall-clock second: skipped under -short")
	}
	// 2,000 epochs of an MLP on 210 samples (7 batches each): far more
	// than half a second of training.
	c, s := testSetup(t, twoNodes+"[training]\nepochs = 2000\n[partition]\nmethod = \"iid\"\n")
	s.Model.Kind, s.Model.Hidden = "mlp", []int{256}
	sock, err := os.MkdirTemp("", "wd-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sock)
	peers := IPCEndpoints(sock, 2)
	keys := wire.NewSeedKeys(c.Seed, 2)
	dir, _ := keys.Directory()
	records := make(chan *Record, 16)
	mon, err := Listen(peers.Monitor, maxRecordBytes, 8, func(b []byte) bool {
		if r, err := decodeRecord(b, dir); err == nil {
			records <- r
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	done := make(chan error, 1)
	nc := testNode(t, s, 0, keys)
	nc.Peers, nc.Timing = peers, Timing{Mode: Wallclock, Epoch: time.Now().Add(time.Second), Delta: time.Second}
	go func() { done <- RunNode(context.Background(), nc) }()
	if err := hangGuard(t, done, "end of the run"); err != nil {
		t.Fatal(err)
	}
	n := 0
	for r := 0; r < c.Rounds; r++ {
		rec := hangGuard(t, records, "record")
		if rec.Done {
			break
		}
		n++
		if len(rec.Missing) != 1 || rec.Missing[0] != 1 || !rec.Ready.Combined {
			t.Errorf("round %d: missing %v, combined %v; want the silent peer missing and the round ended", rec.Round, rec.Missing, rec.Ready.Combined)
		}
		if full := 2000 * 7; rec.Ready.Train.Steps >= full {
			t.Errorf("round %d: %d training steps, want training stopped at its deadline (2,000 epochs are %d steps)", rec.Round, rec.Ready.Train.Steps, full)
		}
	}
	if n == 0 {
		t.Error("no round recorded")
	}
}
