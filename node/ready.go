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
	// KeptOwn says the strategy's rule could not run on the inputs that
	// arrived (strategy.ErrKeptOwn): the node kept its trained model, and
	// those inputs are in Rejections with ReasonTooFew.
	KeptOwn bool
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
	// Ages are, in asynchronous timing, the staleness of each input the
	// strategy was handed, in its order (nil in rounds).
	Ages []InputAge
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

// InputAge is one asynchronous input's sender, tag and staleness in the
// receiver's steps (strategy.Incoming.Staleness).
type InputAge struct {
	From      int
	Tag       string
	Staleness int
}
