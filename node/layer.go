package node

import (
	"math/rand/v2"

	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// Layer is a protocol addition that is not a strategy: DMTT's topology
// trust (package trustlayer), DP noise with its accountant (dplayer),
// secure aggregation (secagg). The node calls its layers in the order of
// Config.Layers, at fixed points of the round:
//
//	Begin(r, hood)                      when round r opens
//	Outbox(p)                           at every exchange phase p < Phases()
//	Observe(m, err) for every message   after the validator (err its verdict)
//	Handle(m) for messages of its kinds after Observe, when both accepted
//	End(rd)                             when the round closes, before the strategy combines
//	See(v)                              whenever the strategy is shown a View
//	Snapshot / Restore                  between rounds (Node.Snapshot, Node.Restore)
//
// A Layer is owned by one node and called from one goroutine.
type Layer interface {
	// Name names the layer in errors and records.
	Name() string
	// Begin opens round r with the round's neighborhood.
	Begin(r int, hood Neighborhood) error
	// Phases is how many exchange phases the layer needs (at least 1);
	// the node runs the most any layer needs.
	Phases() int
	// Outbox returns the layer's messages of exchange phase p: kind, To
	// and body set; the node fills in sender, round and sequence number
	// and signs them.
	Outbox(p int) ([]*wire.Message, error)
	// Observe is told of every message of the open round after the
	// validator judged it (verr nil: accepted). For an accepted message an
	// error is the layer's refusal of it (a *Refusal for evidence against
	// the sender): the message goes no further and is counted rejected.
	Observe(m *wire.Message, verr error) error
	// Owns reports whether messages of kind k are the layer's: they go to
	// Handle, never to the strategy.
	Owns(k wire.Kind) bool
	// Expects lists the messages of the layer's kinds its peers send in
	// exchange phase p, each kind with the exact or bounded length of its
	// body for this model and the layer's parameters. The node refuses,
	// before any decoding, a message no phase expects or one outside its
	// bound (inputs.go); it asks once, so the answer depends only on the
	// layer's configuration.
	Expects(p int) []Expect
	// Handle takes an accepted message of a kind the layer owns; an error
	// is a refusal, as for Observe.
	Handle(m *wire.Message) error
	// End closes the layer's round before the strategy combines and adds
	// the layer's diagnostics to the round's Ready.
	End(rd *Ready) error
	// See adds what the layer shows the strategy (View.Trust, ...).
	See(v *strategy.View)
	// Snapshot returns everything of the layer that must survive a restart
	// (DP's accountant, keys that live across rounds, trust), between
	// rounds; Restore puts it into a fresh layer of the same configuration
	// before its first Begin, refusing another layer's or version's state.
	// A layer with nothing to carry still saves a version, so that its
	// state is checked.
	Snapshot() ([]byte, error)
	Restore([]byte) error
}

// Stepwise marks a Layer defined for asynchronous steps (Config.Async):
// one that works on the node's own release alone. It owns no message kind,
// needs one exchange phase and has nothing to learn from its peers'
// messages, so a step is a round to it: Begin(step, hood), Outbox(0),
// Release, End, See, Snapshot and Restore come as in rounds; Observe and
// Handle never do (asynchronous inputs go from the node's checks to the
// strategy). DP's layers are stepwise, each step one release charged to
// the node's accountant; topology trust and secure aggregation, which
// need every neighbour's messages of the same round, are not.
type Stepwise interface {
	Layer
	Stepwise()
}

// Releaser is a Layer that changes what the strategy releases before it is
// signed: node-level DP clips and noises the released vector once per
// round, whoever it goes to; secure aggregation replaces it by a masked
// integer vector. The releasers of a node agree on one release phase (the
// largest any names) in which the strategy's vectors go out.
type Releaser interface {
	Layer
	// ReleasePhase is the exchange phase of the strategy's vectors.
	ReleasePhase() int
	// ReleasesVectors reports whether the strategy's vectors still go out
	// after Release (rewritten or not): if any releaser keeps them in the
	// node, no peer's vector is taken either.
	ReleasesVectors() bool
	// Release may rewrite the round's outgoing vector messages (unsigned;
	// their payloads are the node's own copies, which it may change in
	// place) or replace them with messages of its own kinds.
	Release(out []*wire.Message) ([]*wire.Message, error)
}

// Refusal is a layer's refusal of a message, with the reason under which
// the round's records count it (e.g. "claim_equivocation").
type Refusal struct {
	Reason string
	Err    error
}

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// Trainer trains the node's model in place of nn.Model.Train
// (Config.Trainer): sample-level DP's DP-SGD (dplayer.Sample).
type Trainer interface {
	Train(src nn.Batches, opt nn.Optimizer, cfg nn.TrainConfig, rng *rand.Rand) (nn.TrainResult, error)
}
