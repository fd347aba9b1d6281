package cluster

import (
	"bytes"
	"testing"

	"github.com/trellis-fl/trellis/wire"
)

// FuzzFrames: whatever bytes a peer sends as a frame, the node's inbox
// and the monitor's record decoder return without panicking, and the
// ZMTP handshake parser likewise.
func FuzzFrames(f *testing.F) {
	ids, dir := wire.SimIdentities(1, 2)
	m := &wire.Message{Header: wire.Header{Kind: wire.KindVector, From: 1, To: wire.Broadcast, Seq: 1},
		Payload: wire.Payload{Tag: "model", Data: []float32{1, 2}}}
	_ = wire.Sign(m, ids[1])
	msg, _ := wire.AppendEncode(nil, m)
	mk, _ := encodeMarker(Marker{From: 1, To: 0, Count: 1}, ids[1])
	rec, _ := encodeRecord(&Record{Node: 1, Round: 0, BytesSent: 3}, ids[1])
	for _, b := range [][]byte{msg, mk, rec, readyCommand("PUSH")[8:], {controlByte}, {1}, nil} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in := newInbox(0, 2, dir, wire.DefaultLimits(), 1<<20)
		in.handle(b)
		in.open(1)
		in.take([]int{1}, slot{})
		_, _ = decodeRecord(b, dir)
		_, _ = decodeMarker(b, dir)
		_, _ = parseProperties(b)
		_, _, _ = readFrameHeader(bytes.NewReader(b))
	})
}
