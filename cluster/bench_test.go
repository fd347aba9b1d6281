package cluster

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/wire"
)

// BenchmarkTransfer1M sends signed model messages of 1M float32
// parameters (4 MB) from a Pusher to a Listener over a Unix socket (two
// goroutines of one process; the bytes cross the kernel as between two
// processes): "raw" hands frames to a counter, "validated" runs the node's
// inbox on them (decode within wire's limits and verify the Ed25519ctx
// signature, as every received message is before the node sees it);
// "raw-curve" is "raw" with the CURVE mechanism (each frame boxed by the
// sender and opened by the receiver).
func BenchmarkTransfer1M(b *testing.B) {
	ids, dir := wire.SimIdentities(1, 2)
	data := make([]float32, 1<<20)
	for i := range data {
		data[i] = float32(i%1000) * 1e-3
	}
	m := &wire.Message{Header: wire.Header{Kind: wire.KindVector, From: 1, To: 0, Seq: 1},
		Payload: wire.Payload{Tag: "model", Data: data}}
	if err := wire.Sign(m, ids[1]); err != nil {
		b.Fatal(err)
	}
	frame, err := wire.AppendEncode(nil, m)
	if err != nil {
		b.Fatal(err)
	}
	server, client := newCurveKey(b), newCurveKey(b)
	for _, mode := range []string{"raw", "raw-curve", "validated"} {
		b.Run(mode, func(b *testing.B) {
			ep := "ipc://" + filepath.Join(b.TempDir(), "b.sock")
			if len(ep) > 100 {
				ep = "tcp://127.0.0.1:0"
			}
			var got atomic.Int64
			in := newInbox(0, 2, dir, wire.DefaultLimits(), 1<<40)
			handle := func([]byte) bool { got.Add(1); return true }
			if mode == "validated" {
				handle = func(f []byte) bool {
					ok := in.handleMessage(f)
					in.take(nil, slot{}) // drop what was buffered
					got.Add(1)
					return ok
				}
			}
			var cs *CurveServer
			var cc *CurveClient
			if mode == "raw-curve" {
				cs = &CurveServer{Key: server, Allow: allowOnly(client)}
				cc = &CurveClient{Key: client, Server: server.Public}
			}
			l, err := ListenCurve(ep, wire.DefaultLimits().MaxMessageBytes, 4, cs, handle)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			if ep[:3] == "tcp" {
				ep = "tcp://" + l.Addr().String()
			}
			p, err := DialCurve(ep, 64, 1<<30, cc)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close(time.Second)
			b.SetBytes(int64(len(frame)))
			b.ResetTimer()
			for i := range b.N {
				for !p.Send(frame) {
					time.Sleep(100 * time.Microsecond) // queue full: the benchmark waits, a node would drop
				}
				_ = i
			}
			for got.Load() < int64(b.N) {
				time.Sleep(100 * time.Microsecond)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// BenchmarkCheckpoint is a node's checkpoint after a round (Snapshot and
// SaveCheckpoint: the directory replaced whole) for the DMTT node of
// bench/cluster/dmtt-10.toml (the evidential MLP 784-256-128-10, SGD, the
// trust layer), after one trained round.
func BenchmarkCheckpoint(b *testing.B) {
	c, err := config.Load(filepath.Join("..", "bench", "cluster", "dmtt-10.toml"))
	if err != nil {
		b.Fatal(err)
	}
	tt, err := experiment.LoadData(c)
	if err != nil {
		b.Fatal(err)
	}
	s, err := experiment.SetupOf(c, tt)
	if err != nil {
		b.Fatal(err)
	}
	n, err := s.BuildNode(0, wire.NewSeedKeys(c.Seed, c.Nodes))
	if err != nil {
		b.Fatal(err)
	}
	if err := n.Begin(0, node.Neighborhood{In: []int{1, 2}, InDegree: []int{2, 2}, Degree: 2}); err != nil {
		b.Fatal(err)
	}
	if _, err := n.Train(b.Context()); err != nil {
		b.Fatal(err)
	}
	for more := true; more; {
		if _, more, err = n.Outbox(); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := n.End(node.EndOptions{}); err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "node-0.state")
	var size int64
	cp := experiment.NodeCheckpoints{Node: n}
	for b.Loop() {
		if err := SaveCheckpoint(dir, func(d string) error { return cp.Save(d, 0) }); err != nil {
			b.Fatal(err)
		}
	}
	for _, f := range []string{experiment.CheckpointBin, experiment.CheckpointJSON} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err == nil {
			size += fi.Size()
		}
	}
	b.ReportMetric(float64(size), "bytes/checkpoint")
}
