package cluster

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/wire"
)

// TestCurveHidesModelsOnTheWire: two nodes run three lock-step rounds
// over TCP with a proxy on the link from node 0 to node 1 that keeps
// every byte it forwards. Behind the proxy a tap (holding node 1's key)
// decrypts the frames, keeps the model vectors node 0 sent, and forwards
// them to node 1. Then the capture is searched for every run of four
// floats (16 bytes, their float32 encoding) of those models: with
// encryption off the search finds them (so the test can fail), with
// CURVE (the default over TCP) it finds none.
func TestCurveHidesModelsOnTheWire(t *testing.T) {
	for _, tc := range []struct {
		enc       Encryption
		wantClear bool
	}{{EncryptNone, true}, {EncryptAuto, false}} {
		t.Run(string(tc.enc), func(t *testing.T) {
			captured, models := runThroughProxy(t, tc.enc)
			found, windows := floatRunsIn(captured, models)
			t.Logf("%d bytes captured; %d of %d runs of 4 floats of node 0's %d models found in them", len(captured), found, windows, len(models))
			switch {
			case len(models) < 3 || windows < 1000:
				t.Fatalf("%d models, %d float runs: too few to search for", len(models), windows)
			case tc.wantClear && found < windows/2:
				t.Errorf("encryption off: only %d of %d float runs found in the clear (the search does not work)", found, windows)
			case !tc.wantClear && found > 0:
				t.Errorf("CURVE: %d of %d float runs of the model are readable on the wire", found, windows)
			}
		})
	}
}

// runThroughProxy runs the two-node config with enc and returns the bytes
// the proxy saw going to node 1 and the model vectors node 0 sent.
func runThroughProxy(t *testing.T, enc Encryption) (captured []byte, models [][]float32) {
	t.Helper()
	c, s := testSetup(t, twoNodes)
	keys := wire.NewSeedKeys(c.Seed, 2)
	dir, _ := keys.Directory()
	ids := keys.All()
	monID := SeedMonitorIdentity(c.Seed)
	peers, err := LoopbackEndpoints(2)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	records := make(chan *Record, 64)
	mon, err := listenSecured(enc, peers.Monitor, maxRecordBytes, 8, monID, dir, nil, func(b []byte) bool {
		if r, err := decodeRecord(b, dir); err == nil {
			records <- r
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mon.Close() })

	// The tap: node 1's key, forwarding to node 1 as node 0 would.
	fwd, err := dialSecured(enc, peers.Endpoint(1), ids[0], ids[1].Public(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fwd.Close(time.Second) })
	tap, err := listenSecured(enc, "tcp://127.0.0.1:0", 1<<26, 8, ids[1], dir, nil, func(b []byte) bool {
		var m wire.Message
		if wire.Decode(b, &m) == nil && m.Kind == wire.KindVector {
			mu.Lock()
			models = append(models, m.Payload.Data)
			mu.Unlock()
		}
		fwd.Send(b)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tap.Close() })

	// The proxy: raw TCP in front of the tap, keeping what node 0 sends.
	proxy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	go func() {
		for {
			in, err := proxy.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", tap.Addr().String())
			if err != nil {
				in.Close()
				continue
			}
			go func() { _, _ = io.Copy(in, out); in.Close() }()
			go func() {
				buf := make([]byte, 64<<10)
				for {
					n, err := in.Read(buf)
					mu.Lock()
					captured = append(captured, buf[:n]...)
					mu.Unlock()
					if _, werr := out.Write(buf[:n]); err != nil || werr != nil {
						out.Close()
						return
					}
				}
			}()
		}
	}()

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 2)
	for i := range 2 {
		nc := testNode(t, s, i, keys)
		p := *peers
		p.Nodes = append([]Peer(nil), peers.Nodes...)
		if i == 0 {
			p.Nodes[1].Endpoint = "tcp://" + proxy.Addr().String()
		}
		nc.Peers, nc.Timing, nc.Encryption, nc.MonitorKey = &p, Timing{Mode: Lockstep, PhaseTimeout: time.Minute}, enc, monID.Public()
		go func() { done <- RunNode(ctx, nc) }()
	}
	for range 2 {
		if err := hangGuard(t, done, "end of a node's run"); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 * 3 {
		if rec := hangGuard(t, records, "record"); len(rec.Refused) != 0 || rec.Ready.Rejected != 0 {
			t.Errorf("node %d round %d: refused %v, rejected %d", rec.Node, rec.Round, rec.Refused, rec.Ready.Rejected)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return bytes.Clone(captured), slices.Clone(models)
}

// floatRunsIn counts the runs of four consecutive floats of models (their
// little-endian float32 encoding, 16 bytes) that occur anywhere in b.
// Runs holding a zero are left out: zeros are everywhere in a protocol's
// padding.
func floatRunsIn(b []byte, models [][]float32) (found, windows int) {
	in := make(map[[16]byte]bool, len(b))
	for i := 0; i+16 <= len(b); i++ {
		in[[16]byte(b[i:i+16])] = true
	}
	for _, m := range models {
		for i := 0; i+4 <= len(m); i++ {
			var w [16]byte
			zero := false
			for k := range 4 {
				zero = zero || m[i+k] == 0
				binary.LittleEndian.PutUint32(w[4*k:], math.Float32bits(m[i+k]))
			}
			if zero {
				continue
			}
			windows++
			if in[w] {
				found++
			}
		}
	}
	return found, windows
}
