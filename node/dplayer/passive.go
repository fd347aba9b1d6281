package dplayer

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// passive is the part of node.Layer every DP layer of this package shares:
// one exchange phase, no message kinds of its own (so nothing to expect or
// handle), nothing to observe and, unless the layer says otherwise, nothing
// to show the strategy. what names the layer in Handle's error.
type passive struct{ what string }

// Phases implements node.Layer.
func (passive) Phases() int { return 1 }

// Owns implements node.Layer: no message kinds of its own.
func (passive) Owns(wire.Kind) bool { return false }

// Expects implements node.Layer.
func (passive) Expects(int) []node.Expect { return nil }

// Observe implements node.Layer.
func (passive) Observe(*wire.Message, error) error { return nil }

// Handle implements node.Layer (never called: the layer owns no kind).
func (p passive) Handle(m *wire.Message) error {
	return fmt.Errorf("%s: owns no %s messages", p.what, m.Kind)
}

// See implements node.Layer.
func (passive) See(*strategy.View) {}

// Stepwise implements node.Stepwise: a DP layer needs nothing of its
// peers' messages, so an asynchronous step is a round to it (one release,
// charged like a round's).
func (passive) Stepwise() {}

// releasing is passive plus node.Releaser's fixed half, shared by the
// layers that rewrite the strategy's vectors in place: they still go out,
// in exchange phase 0.
type releasing struct{ passive }

// ReleasesVectors implements node.Releaser: rewritten, they go out.
func (releasing) ReleasesVectors() bool { return true }

// ReleasePhase implements node.Releaser.
func (releasing) ReleasePhase() int { return 0 }

// spentBytes is the length of appendSpent's state: a version byte, the
// privacy spent (ε or δ) as float64 bits and the releases so far, both
// u64 little endian — the whole state of the layers with a closed-form
// account (Decaying, Ternary) and the head of DecayingTracking's.
const spentBytes = 17

// appendSpent appends the state head of a layer that has spent spent over
// releases releases.
func appendSpent(b []byte, spent float64, releases int) []byte {
	b = append(b, stateVersion)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(spent))
	return binary.LittleEndian.AppendUint64(b, uint64(releases))
}

// readSpent reads appendSpent's head of b (at least spentBytes long, its
// version checked by the caller).
func readSpent(b []byte) (spent float64, releases int) {
	return math.Float64frombits(binary.LittleEndian.Uint64(b[1:])), int(binary.LittleEndian.Uint64(b[9:]))
}

// checkKeptModel is the check of the layers whose one release a round is
// the model the node kept: vector m must be tagged as the model and be w
// bit for bit. kept names that model in the error ("quantized"), why says
// what the layer releases.
func checkKeptModel(what, kept, why string, w []float32, m *wire.Message) error {
	d := m.Payload.Data
	if m.Payload.Tag != strategy.TagModel {
		return fmt.Errorf("%s: a %q vector is not the model; %s", what, m.Payload.Tag, why)
	}
	if len(d) != len(w) {
		return fmt.Errorf("%s: a model vector of %d values, the model has %d", what, len(d), len(w))
	}
	for i := range d {
		if math.Float32bits(d[i]) != math.Float32bits(w[i]) {
			return fmt.Errorf("%s: the model vector differs from the node's %s model at %d", what, kept, i)
		}
	}
	return nil
}
