package aggregate

import "errors"

// Rule combines vectors. Inputs xs are in sender-id order and share one
// length; dst has that length and receives the aggregate. dst may not alias
// any input.
type Rule interface {
	// Name is the rule's config name ("mean", "median", ...).
	Name() string
	Aggregate(dst []float32, xs [][]float32) error
}

// Centered is a rule that needs the aggregating node's own vector x_0 as
// well as its inputs (centered clipping, MSR, SCClip in
// docs/methods/toolbox.md): CenteredClipping and MSR here, and a Chain whose
// rule is one of them. own is not one of xs.
type Centered interface {
	Name() string
	AggregateAround(dst, own []float32, xs [][]float32) error
}

// Selector is implemented by rules that can say how much each input counted
// in their last output, for the influence metric delta_max (the DMTT paper).
// Weights reports, for the last successful call, the weight each input
// received, in input order, summing to 1: for the mean 1/n each; for
// coordinate-wise rules the share of each coordinate an input's value
// contributed, averaged over coordinates; each rule's doc says what its
// weights are. Inputs dropped as non-finite get 0. After a Centered call
// (and for centered clipping started from its previous output) the
// weights sum to 1 minus the share of the own (or previous) vector. It
// returns a new slice, or nil when there was no successful call.
type Selector interface {
	Weights() []float64
}

// Errors wrapped by the rules, for errors.Is.
var (
	// ErrNoInputs: the rule was given zero vectors.
	ErrNoInputs = errors.New("no input vectors")
	// ErrLength: an input or dst does not have the common length.
	ErrLength = errors.New("length mismatch")
	// ErrTooFewInputs: n is too small for the f the rule must tolerate.
	ErrTooFewInputs = errors.New("too few inputs")
	// ErrNonFinite: an own vector holds NaN or Inf, or every input did
	// (non-finite inputs are dropped and counted, see Dropper).
	ErrNonFinite = errors.New("non-finite input")
)
