package cluster

import "github.com/trellis-fl/trellis/wire"

// Test-only access to the frame formats, for the tests of package
// cluster_test that watch a deployed run's traffic from outside its
// processes (relay_test.go).

// IsMarker reports whether frame is a phase marker.
func IsMarker(frame []byte) bool {
	return len(frame) >= 2 && frame[0] == controlByte && frame[1] == markerType
}

// IsRecord reports whether frame is a record.
func IsRecord(frame []byte) bool {
	return len(frame) >= 2 && frame[0] == controlByte && frame[1] == recordType
}

// DecodeMarker is decodeMarker.
func DecodeMarker(frame []byte, dir *wire.Directory) (Marker, error) { return decodeMarker(frame, dir) }

// DecodeRecord is decodeRecord.
func DecodeRecord(frame []byte, dir *wire.Directory) (*Record, error) {
	return decodeRecord(frame, dir)
}

// LeavePhase is the phase of a marker saying its sender leaves the run.
const LeavePhase = leavePhase
