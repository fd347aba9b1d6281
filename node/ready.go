package node

import (
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/strategy"
)

// Ready is everything a node's round produced, returned by End: a driver
// reads nothing else of the node. Who is Byzantine is not in it (the node
// never learns it); a driver adds what it knows when it turns Ready into
// metrics records.
type Ready struct {
	Round int
	// Trained says whether the round trained; Train is what it did.
	Trained bool
	Train   nn.TrainResult
	// Combined says whether the strategy combined (EndOptions.Keep not
	// set); Weights is the weight it gave each sender, and Scores the
	// agreement scores it reports (strategy.ScoreReporter: LIGHTYEAR).
	Combined bool
	Weights  map[int]float64
	Scores   []strategy.PeerScore
	// Direction is R-DPFL's neighbourhood-direction diagnostics of the
	// round (nil for other strategies, or without a Combine).
	Direction *strategy.RDPFLRound
	// Trust is the topology-trust layer's state at the end of the round
	// (nil without one).
	Trust *TrustReport
	// Privacy is a DP layer's account of the node's ε so far (nil
	// without one).
	Privacy *PrivacyReport
	// SecAgg is the secure-aggregation layer's account of the round (nil
	// without one): its group, survivors, and whether it fell back to its
	// own model.
	SecAgg *SecAggReport
	// Rejected counts the messages refused this round (by the validator or
	// a layer, or dropped as stale, early beyond bounds or of no known
	// kind), including those of the round that arrived before it began or
	// after the previous one ended; Rejections lists them by sender and
	// reason.
	Rejected   int
	Rejections []Rejection
	// Eval is the evaluation EndOptions asked for, nil otherwise.
	Eval *Evaluation
	// Diverged says the node's model is diverged at the end of the round:
	// its training met a non-finite loss or gradient, or its parameters or
	// outputs are not finite. It is an outcome, not an error: the round
	// goes on, Eval holds the accuracy as measured (nn.EvaluateDiverged)
	// and a loss of 0 (undefined).
	Diverged bool
}

// Rejection is how many messages from one sender were refused for one
// reason (a wire.Reason name, a layer's Refusal reason, or Reason*).
type Rejection struct {
	From   int
	Reason string
	Count  int
}

// Evaluation is a node's model quality after a round.
type Evaluation struct {
	Local  nn.EvalResult
	Global nn.EvalResult // zero when the node has no global test set
}

// TrustReport is the topology-trust layer's state at the end of a round
// (spec/dmtt.md, "Learning step" item 7 diagnostics).
type TrustReport struct {
	// Trust is T_topo of every peer, indexed by id up to the directory's
	// largest (0 for ids outside it and for the node itself: its own
	// value is not a belief).
	Trust []float64
	// Screened lists, in increasing order, the topology-screened
	// neighbours (direct, reachable, trusted).
	Screened []int
	// Edges is the trusted view of the graph, in (U, V) order.
	Edges [][2]int
	// ClaimsAccepted counts the claims taken into the pools this round and
	// ClaimsRejected those refused as evidence against someone, by reason.
	ClaimsAccepted uint64
	ClaimsRejected map[string]uint64
}
