package aggregate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/trellis-fl/trellis/vec"
)

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
// spec/robust-rules.md). Implementations come with the Byzantine toolbox.
type Centered interface {
	Name() string
	AggregateAround(dst, own []float32, xs [][]float32) error
}

// Selector is implemented by rules that can say how much each input counted
// in their last output, for the influence metric delta_max (spec/dmtt.md).
// Weights reports, for the last successful call, the weight each input
// received, in input order, summing to 1: for the mean 1/n each; for
// coordinate-wise rules the share of each coordinate an input's value
// contributed, averaged over coordinates. It returns a new slice, or nil
// when there was no successful call.
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
	// ErrNonFinite: an input holds NaN or Inf.
	ErrNonFinite = errors.New("non-finite input")
)

// names lists the rules New accepts, in the order of spec/robust-rules.md.
var names = []string{"mean", "median", "trimmed_mean"}

// Names returns the rule names New accepts.
func Names() []string { return append([]string(nil), names...) }

// New returns the rule called name, tolerating f faulty inputs where the
// rule has such a parameter (trimmed_mean); mean and median ignore f.
// Every rule is returned as a pointer and, like all rule values, serves one
// goroutine at a time.
func New(name string, f int) (Rule, error) {
	if f < 0 {
		return nil, fmt.Errorf("aggregate %s: f = %d, allowed range [0, ∞)", name, f)
	}
	switch name {
	case "mean":
		return &Mean{}, nil
	case "median":
		return &Median{}, nil
	case "trimmed_mean":
		return &TrimmedMean{F: f}, nil
	}
	return nil, fmt.Errorf("aggregate: unknown rule %q (valid: %s)", name, strings.Join(names, ", "))
}

// check validates a call: at least one input, all inputs and dst of one
// length, every value finite. It returns the common length.
func check(rule string, dst []float32, xs [][]float32) (int, error) {
	if len(xs) == 0 {
		return 0, fmt.Errorf("%s: %w", rule, ErrNoInputs)
	}
	d := len(xs[0])
	for i, x := range xs {
		if len(x) != d {
			return 0, fmt.Errorf("%s: %w: input %d has length %d, input 0 has length %d", rule, ErrLength, i, len(x), d)
		}
	}
	if len(dst) != d {
		return 0, fmt.Errorf("%s: %w: dst has length %d, inputs have length %d", rule, ErrLength, len(dst), d)
	}
	for i, x := range xs {
		if ok, at := vec.AllFinite(x); !ok {
			return 0, fmt.Errorf("%s: %w: input %d has %v at coordinate %d", rule, ErrNonFinite, i, x[at], at)
		}
	}
	return d, nil
}
