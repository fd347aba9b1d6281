package dplayer

import (
	"fmt"

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

// releasing is passive plus node.Releaser's fixed half, shared by the
// layers that rewrite the strategy's vectors in place: they still go out,
// in exchange phase 0.
type releasing struct{ passive }

// ReleasesVectors implements node.Releaser: rewritten, they go out.
func (releasing) ReleasesVectors() bool { return true }

// ReleasePhase implements node.Releaser.
func (releasing) ReleasePhase() int { return 0 }
