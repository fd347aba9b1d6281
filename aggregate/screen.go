package aggregate

import (
	"fmt"

	"github.com/trellis-fl/trellis/vec"
)

// screen is the input check every rule runs first: at least one input, all
// inputs and dst of one length, and non-finite inputs dropped and counted
// (defense in depth: the wire layer already drops
// them). It remembers which inputs it kept, so that weights computed over the
// kept inputs map back to the caller's input order, dropped ones getting 0.
type screen struct {
	buf     [][]float32 // the kept inputs when some were dropped (cleared after the call)
	idx     []int       // caller index of each kept input; nil when none was dropped
	bad     []bool      // per input: holds NaN or Inf
	n       int         // inputs of the last successful call, 0 if none
	dropped int         // inputs dropped by the last call
	xs      [][]float32 // the call's inputs, while the finiteness task runs
}

// Dropper is implemented by every rule of this package: Dropped reports how
// many inputs of the last call held NaN or Inf and were left out.
type Dropper interface {
	Dropped() int
}

// in validates a call to rule and returns the finite inputs, in order, and
// their common length. A call whose inputs are all non-finite fails with an
// error wrapping both ErrNoInputs and ErrNonFinite.
func (s *screen) in(rule string, dst []float32, xs [][]float32, threads int) ([][]float32, int, error) {
	s.n, s.dropped = 0, 0
	if len(xs) == 0 {
		return nil, 0, fmt.Errorf("%s: %w", rule, ErrNoInputs)
	}
	d := len(xs[0])
	for i, x := range xs {
		if len(x) != d {
			return nil, 0, fmt.Errorf("%s: %w: input %d has length %d, input 0 has length %d", rule, ErrLength, i, len(x), d)
		}
	}
	if len(dst) != d {
		return nil, 0, fmt.Errorf("%s: %w: dst has length %d, inputs have length %d", rule, ErrLength, len(dst), d)
	}
	if cap(s.bad) < len(xs) {
		s.bad = make([]bool, len(xs))
	}
	s.bad = s.bad[:len(xs)]
	s.xs = xs
	parallel(workers(threads), len(xs), s)
	s.xs = nil
	for _, b := range s.bad {
		if b {
			s.dropped++
		}
	}
	if s.dropped == 0 {
		s.idx = nil
		return xs, d, nil
	}
	if s.dropped == len(xs) {
		return nil, 0, fmt.Errorf("%s: %w: all %d inputs hold NaN or Inf (%w)", rule, ErrNoInputs, len(xs), ErrNonFinite)
	}
	s.buf, s.idx = s.buf[:0], make([]int, 0, len(xs)-s.dropped)
	for i, x := range xs {
		if !s.bad[i] {
			s.buf = append(s.buf, x)
			s.idx = append(s.idx, i)
		}
	}
	return s.buf, d, nil
}

// do implements task: input g's finiteness.
func (s *screen) do(_, g int) {
	ok, _ := vec.AllFinite(s.xs[g])
	s.bad[g] = !ok
}

// done records a successful call and drops the references to the caller's
// vectors.
func (s *screen) done() {
	s.n = len(s.bad)
	clear(s.buf)
}

// fail forgets the last call: its weights are no longer valid.
func (s *screen) fail() {
	s.n = 0
	clear(s.buf)
}

// Dropped reports how many inputs of the last call held NaN or Inf.
func (s *screen) Dropped() int { return s.dropped }

// expand maps weights over the kept inputs of the last successful call to
// the caller's inputs, 0 for dropped ones. It returns nil when there was no
// successful call or w is nil.
func (s *screen) expand(w []float64) []float64 {
	if s.n == 0 || w == nil {
		return nil
	}
	if s.idx == nil {
		return w
	}
	full := make([]float64, s.n)
	for k, i := range s.idx {
		full[i] = w[k]
	}
	return full
}

// tooFew is the error of a rule that needs more inputs than it kept.
func (s *screen) tooFew(rule string, n, f int, need string) error {
	if s.dropped > 0 {
		return fmt.Errorf("%s: %w: n = %d inputs (after dropping %d non-finite) with f = %d, need %s", rule, ErrTooFewInputs, n, s.dropped, f, need)
	}
	return fmt.Errorf("%s: %w: n = %d inputs with f = %d, need %s", rule, ErrTooFewInputs, n, f, need)
}
