package strategy

import (
	"fmt"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/agreement"
	"github.com/trellis-fl/trellis/nn"
)

// Broadcast as an Outgoing recipient means every out-neighbor of the round.
const Broadcast = -1

// Tags distinguish vectors when a strategy sends more than one per round.
const (
	TagModel     = "model"     // model parameters after local training
	TagStart     = "start"     // model parameters at the start of the round
	TagTracker   = "tracker"   // gradient-tracking variable y
	TagDirection = "direction" // R-DPFL's local direction u (an average gradient)
	TagUpdate    = "update"    // a round's model update w~ − w_start
)

// View is what a strategy may know about its own node in a round. The node
// fills it in; the strategy never sees the driver.
type View struct {
	ID     int
	Round  int
	Rounds int
	// Model is the node's model after this round's local training; Combine
	// writes the new parameters into Model.Params().
	Model *nn.Model
	// Start holds the parameters at the start of the round, before local
	// training; nil for a strategy ReadsStart says never reads it.
	Start []float32
	// Neighbors lists, sorted, the peers the node may hear from this round
	// (its in-neighbors in the round's graph), and NeighborDegree their
	// degrees, aligned; Degree is the node's own.
	Neighbors      []int
	NeighborDegree []int
	Degree         int
	// RNG is the strategy's own stream for (seed, node, round).
	RNG *rand.Rand
	// LR is the learning rate of this round's local training and Steps the
	// optimizer steps it took (R-DPFL's eta and K).
	LR    float64
	Steps int
	// BatchLoss, when set, returns the loss of the given parameters on one
	// fixed batch of the node's local training data this round; filled by
	// the node. Strategies that test peers' models on local data (UBAR)
	// need it; it must not keep or modify params.
	BatchLoss func(params []float32) (float64, error)
	// TrainCopy, when set, runs the node's local training of this round on
	// the given parameters in place (not on the node's model), with an
	// optimizer of its own; filled by the node. Ditto trains its global
	// model with it.
	TrainCopy func(params []float32) (nn.TrainResult, error)
	// Validate, when set, writes the outputs (probabilities, vacuity for an
	// evidential head, penultimate features, labels) of the given
	// parameters on the first n samples of the node's validation split
	// (all of them if it is smaller) into dst, reusing dst's buffers;
	// filled by the node. LIGHTYEAR scores peers' models with it; it must
	// not keep or modify params, and the node's model is left as it was.
	Validate func(params []float32, n int, dst *agreement.Outputs) error
	// Trust, when the node runs DMTT's topology-trust layer, answers what
	// the node believes of its peers as topology reporters; nil otherwise.
	// In Share it describes the previous round's end, in Combine this
	// round's (the node closes the trust round before combining).
	Trust TopologyTrust
}

// TopologyTrust is the part of a node's topology-trust layer (package trust)
// a strategy may read (the DMTT paper, §IV-E).
type TopologyTrust interface {
	// Trust is T_topo of peer j (0 for an id outside the directory).
	Trust(j int) float64
	// Reliability is the link reliability p_ij.
	Reliability(j int) float64
	// Screened lists, in increasing order, the reachable topology-screened
	// neighbors: direct neighbors with p_ij ≥ 0.1 and T_topo ≥ τ_trust.
	Screened() []int
}

// PeerScore is an agreement score a strategy gave a sender's message in a
// round, by score kind (LIGHTYEAR's diagnostics, the LIGHTYEAR paper).
type PeerScore struct {
	From  int
	Kind  string
	Value float64
}

// ScoreReporter is a strategy that reports the agreement scores of its last
// Combine, so the driver can record them next to who was Byzantine (which
// the strategy never learns).
type ScoreReporter interface {
	Scores() []PeerScore
}

// Outgoing is a vector a strategy sends; To is a peer id or Broadcast. The
// vector may alias strategy or model memory: the node copies it before the
// strategy runs again.
type Outgoing struct {
	To     int
	Tag    string
	Vector []float32
}

// Incoming is a validated vector that arrived this round.
type Incoming struct {
	From   int
	Tag    string
	Vector []float32
	// Staleness is how many of the receiver's steps the vector is behind
	// (asynchronous timing: the receiver's step minus the sender's step the
	// vector was sent at, never negative); 0 in synchronous rounds. Only
	// the strategies whose row has Async read it.
	Staleness int
}

// Strategy is how a node collaborates.
type Strategy interface {
	Name() string
	// Share returns what to send after local training.
	Share(v *View) []Outgoing
	// Combine sets the node's next parameters from its own and what arrived
	// (sorted by sender id, then tag) and returns the weight it gave each
	// sender (senders it ignored may be omitted or given 0). An error
	// wrapping ErrKeptOwn says it changed nothing because too few inputs
	// arrived, and the node goes on; any other error stops the node.
	Combine(v *View, in []Incoming) (map[int]float64, error)
}

var localRow = Row{
	Name:         "local",
	Personalized: true,
	Summary:      "no collaboration",
	Async:        true, // it takes no inputs
	build:        func(Params, Values) (Strategy, error) { return Local{}, nil },
}

// Local never collaborates: the node keeps its locally trained model.
type Local struct{}

func (Local) Name() string                                       { return "local" }
func (Local) Share(*View) []Outgoing                             { return nil }
func (Local) Combine(*View, []Incoming) (map[int]float64, error) { return nil, nil }

// withTag returns the incoming vectors with the given tag, checking their
// length; the order (sender id) is kept.
func withTag(in []Incoming, tag string, n int) ([]Incoming, error) {
	out := in[:0:0]
	for _, m := range in {
		if m.Tag != tag {
			continue
		}
		if len(m.Vector) != n {
			return nil, fmt.Errorf("vector from %d has %d values, want %d", m.From, len(m.Vector), n)
		}
		out = append(out, m)
	}
	return out, nil
}
