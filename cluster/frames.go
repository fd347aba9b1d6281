package cluster

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"

	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/wire"
)

// The frames of the cluster (doc.go, "Frames"): a wire message (first byte
// wire.FormatVersion), a phase marker or a record (first byte controlByte).
const (
	controlByte  = 0xC1
	markerType   = 'P'
	recordType   = 'R'
	markerSize   = 27 + wire.SignatureSize
	recordHeader = 18
	// The signature contexts of markers and records (Ed25519ctx).
	markerContext = "trellis/cluster/v1 phase marker"
	recordContext = "trellis/cluster/v1 record"
	// maxRecordBytes bounds a record's body (a node's Ready: its weights,
	// scores and trust state are O(nodes²) at most).
	maxRecordBytes = 64 << 20
)

// leavePhase in a marker's phase says that its sender takes part in no
// round from Round on (a graceful stop): its peers stop waiting for it.
// joinPhase says that it takes part again from Round on (a node restarted
// with --resume after it left): its peers wait for it again.
const (
	leavePhase = ^uint32(0)
	joinPhase  = ^uint32(0) - 1
)

// Marker says that From sent To Count messages in phase Phase of round
// Round, and whether it was the round's last phase (or, with Phase =
// leavePhase, that From takes part in no round from Round on; with Phase
// = joinPhase, that it takes part again from Round on).
type Marker struct {
	From, To uint32
	Round    uint64
	Phase    uint32
	Count    uint32
	Last     bool
}

// encodeMarker signs and encodes a marker.
func encodeMarker(mk Marker, id *wire.Identity) ([]byte, error) {
	b := make([]byte, 27, markerSize)
	b[0], b[1] = controlByte, markerType
	binary.LittleEndian.PutUint32(b[2:], mk.From)
	binary.LittleEndian.PutUint32(b[6:], mk.To)
	binary.LittleEndian.PutUint64(b[10:], mk.Round)
	binary.LittleEndian.PutUint32(b[18:], mk.Phase)
	binary.LittleEndian.PutUint32(b[22:], mk.Count)
	if mk.Last {
		b[26] = 1
	}
	sig, err := id.SignContext(markerContext, b)
	if err != nil {
		return nil, err
	}
	return append(b, sig...), nil
}

// decodeMarker decodes a marker and checks its sender's signature.
func decodeMarker(b []byte, dir *wire.Directory) (Marker, error) {
	if len(b) != markerSize || b[26] > 1 {
		return Marker{}, errors.New("malformed phase marker")
	}
	mk := Marker{From: binary.LittleEndian.Uint32(b[2:]), To: binary.LittleEndian.Uint32(b[6:]),
		Round: binary.LittleEndian.Uint64(b[10:]), Phase: binary.LittleEndian.Uint32(b[18:]),
		Count: binary.LittleEndian.Uint32(b[22:]), Last: b[26] == 1}
	pub, ok := dir.Key(mk.From)
	if !ok {
		return mk, fmt.Errorf("phase marker from unknown node %d", mk.From)
	}
	if ed25519.VerifyWithOptions(pub, b[:27], b[27:], &ed25519.Options{Context: markerContext}) != nil {
		return mk, fmt.Errorf("phase marker from node %d: bad signature", mk.From)
	}
	return mk, nil
}

// Record is what a node pushes to the monitor after each round: its Ready
// and what only the node's driver measured. The monitor adds the ground
// truth and builds the round's metrics.Round as the simulator does
// (metrics.Record).
type Record struct {
	Node, Round int
	Ready       node.Ready
	// BytesSent and ClaimBytes count what the node put on its links
	// (metrics.Traffic).
	BytesSent, ClaimBytes int
	// Late counts messages that arrived after their round closed here;
	// Missing lists the in-neighbours whose phase markers had not arrived
	// when a phase closed (at its deadline or timeout).
	Late    int
	Missing []int
	// Refused counts what the driver dropped before the node saw it, by
	// reason (Refused* constants; "oversized" frames, refused "handshake"s).
	Refused map[string]int
	// RoundSeconds and TrainSeconds are the round's wall-clock durations.
	RoundSeconds, TrainSeconds float64
	// Done marks the node's last record (it stops after it).
	Done bool
	// ResumedAfter, on the first record of a node restarted with
	// --resume, is the round of the checkpoint it restored, plus one (0
	// otherwise).
	ResumedAfter int
	// Wall (asynchronous timing) is when the step ended, in seconds since
	// the node process started its first step.
	Wall float64
}

// The reports a Ready carries (node.Ready.Reports) go through gob as
// interface values: each concrete kind is registered here, and a record
// with a kind that is not fails to encode, naming it.
func init() {
	for _, r := range []node.Report{&node.PrivacyReport{}, &node.SecAggReport{}, &node.TrustReport{},
		node.ScoresReport{}, &node.DirectionReport{}} {
		gob.Register(r)
	}
}

// encodeRecord signs and encodes a record.
func encodeRecord(r *Record, id *wire.Identity) ([]byte, error) {
	var body bytes.Buffer
	body.Write(make([]byte, recordHeader))
	if err := gob.NewEncoder(&body).Encode(r); err != nil {
		return nil, fmt.Errorf("encoding record: %w", err)
	}
	b := body.Bytes()
	b[0], b[1] = controlByte, recordType
	binary.LittleEndian.PutUint32(b[2:], uint32(r.Node))
	binary.LittleEndian.PutUint64(b[6:], uint64(r.Round))
	binary.LittleEndian.PutUint32(b[14:], uint32(len(b)-recordHeader))
	sig, err := id.SignContext(recordContext, b)
	if err != nil {
		return nil, err
	}
	return append(b, sig...), nil
}

// decodeRecord checks a record's signature, then decodes it: nothing from a
// node that does not hold its key is decoded.
func decodeRecord(b []byte, dir *wire.Directory) (*Record, error) {
	if len(b) < recordHeader+wire.SignatureSize || b[0] != controlByte || b[1] != recordType {
		return nil, errors.New("malformed record")
	}
	from := binary.LittleEndian.Uint32(b[2:])
	n := binary.LittleEndian.Uint32(b[14:])
	if uint64(n) != uint64(len(b)-recordHeader-wire.SignatureSize) || n > maxRecordBytes {
		return nil, fmt.Errorf("record from node %d: body length %d does not match the frame", from, n)
	}
	pub, ok := dir.Key(from)
	if !ok {
		return nil, fmt.Errorf("record from unknown node %d", from)
	}
	signed := b[:len(b)-wire.SignatureSize]
	if ed25519.VerifyWithOptions(pub, signed, b[len(signed):], &ed25519.Options{Context: recordContext}) != nil {
		return nil, fmt.Errorf("record from node %d: bad signature", from)
	}
	var r Record
	if err := gob.NewDecoder(bytes.NewReader(signed[recordHeader:])).Decode(&r); err != nil {
		return nil, fmt.Errorf("record from node %d: %w", from, err)
	}
	if r.Node != int(from) || uint64(r.Round) != binary.LittleEndian.Uint64(b[6:]) {
		return nil, fmt.Errorf("record from node %d: its body names node %d, round %d", from, r.Node, r.Round)
	}
	return &r, nil
}
