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
	// set); Weights is the weight it gave each sender.
	Combined bool
	Weights  map[int]float64
	// Reports are what the layers (in the node's order) and then the
	// strategy (strategy.Reporter) said about the round, each with its own
	// fields: the trust layer's TrustReport, a DP layer's PrivacyReport, a
	// secure-aggregation layer's SecAggReport, LIGHTYEAR's
	// strategy.Scores, R-DPFL's *strategy.RDPFLRound. ReportOf finds one
	// by type.
	Reports []Report
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

// Report is a layer's or the strategy's account of a round
// (strategy.Report): a driver turns the kinds it knows into records.
type Report = strategy.Report

// ReportOf is the first report of type T in rd's Reports, and whether
// there is one.
func ReportOf[T Report](rd Ready) (T, bool) {
	for _, r := range rd.Reports {
		if t, ok := r.(T); ok {
			return t, true
		}
	}
	var zero T
	return zero, false
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

// ReportKind implements Report.
func (*TrustReport) ReportKind() string { return "trust" }

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

// The strategies' reports, named here so that a consumer of Ready needs
// only node: agreement scores (LIGHTYEAR, DMTT, Murmura) and R-DPFL's
// neighbourhood direction.
type (
	ScoresReport    = strategy.Scores
	DirectionReport = strategy.RDPFLRound
)
