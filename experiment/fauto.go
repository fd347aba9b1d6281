package experiment

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/vec"
)

// FSetting is strategy.f, the number of faulty inputs a rule tolerates:
// a count, or "auto" (the default), which robust resolves from the
// declared Byzantine fraction at every aggregation (autoRule); for the
// other strategies that take an f (scclip, clipped_gossip, rdpfl's
// trimmed mean) "auto" is their spec default.
type FSetting struct {
	Auto  bool
	Count int
}

// AutoF is the default strategy.f.
func AutoF() *FSetting { return &FSetting{Auto: true} }

// FCount is an explicit strategy.f.
func FCount(n int) *FSetting { return &FSetting{Count: n} }

// UnmarshalTOML implements toml.Unmarshaler: an integer or "auto".
func (f *FSetting) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		*f = FSetting{Count: int(x)}
		return nil
	case string:
		if x == "auto" {
			*f = FSetting{Auto: true}
			return nil
		}
		if n, err := strconv.Atoi(x); err == nil {
			*f = FSetting{Count: n}
			return nil
		}
	}
	return fmt.Errorf("strategy.f = %v: want a whole number ≥ 0 or \"auto\"", v)
}

// MarshalTOML implements toml.Marshaler.
func (f FSetting) MarshalTOML() ([]byte, error) {
	if f.Auto {
		return []byte(`"auto"`), nil
	}
	return []byte(strconv.Itoa(f.Count)), nil
}

func (f FSetting) String() string {
	if f.Auto {
		return "auto"
	}
	return strconv.Itoa(f.Count)
}

// explicitF is strategy.f when it is a count.
func (c Config) explicitF() (int, bool) {
	if c.Strategy.F == nil || c.Strategy.F.Auto {
		return 0, false
	}
	return c.Strategy.F.Count, true
}

// fRules are the rules and pre-aggregators that take an f
// (aggregate.Params.F).
var fRules = []string{"trimmed_mean", "krum", "multi_krum", "bulyan", "msr", "centered_clipping", "nnm", "arc"}

// ruleTakesF reports whether a rule (with its pre-aggregators) has an f.
func ruleTakesF(rule string) bool {
	for _, part := range strings.Split(rule, "+") {
		if slices.Contains(fRules, part) {
			return true
		}
	}
	return false
}

// declaredFraction is the Byzantine fraction the defenders are told: the
// configured fraction, or the share of adversary.ids. It is what f =
// "auto" derives from; the real number of Byzantine neighbours of a node
// is whatever the placement gives (recorded in the manifest), so a
// defender that underestimates f stays expressible with an explicit f.
func (c Config) declaredFraction() float64 {
	if len(c.Adversary.IDs) > 0 && c.Nodes > 0 {
		return float64(len(c.Adversary.IDs)) / float64(c.Nodes)
	}
	return c.Adversary.Fraction
}

// autoCount is f = "auto" for a node aggregating n inputs (itself and
// n − 1 neighbours) when a fraction beta of all nodes is declared
// Byzantine: ⌈beta·(n − 1)⌉, the expected number of Byzantine neighbours
// rounded up, capped at fmax, the most the rule tolerates with n inputs.
func autoCount(beta float64, n, fmax int) int {
	want := int(math.Ceil(beta*float64(n-1) - 1e-9))
	return max(0, min(want, fmax))
}

// maxF is the largest f for which rule (with parameters p) aggregates n
// inputs, found by asking the rule itself on n distinct small vectors;
// -1 when it cannot aggregate n inputs even with f = 0.
func maxF(rule string, p aggregate.Params, n int) int {
	if n < 1 {
		return -1
	}
	xs := make([][]float32, n)
	for i := range xs {
		xs[i] = []float32{float32(i), float32(i * i % 7)}
	}
	dst := make([]float32, 2)
	best := -1
	for f := 0; f <= n; f++ {
		p.F = f
		r, err := aggregate.NewWith(rule, p)
		if err != nil {
			break
		}
		if err := r.Aggregate(dst, xs); err != nil {
			break
		}
		best = f
	}
	return best
}

// autoRule is robust's rule with f = "auto": each aggregation of n inputs
// uses f = autoCount(beta, n, maxF(n)), n counting finite inputs only
// (the rules drop the others), with one rule per f.
type autoRule struct {
	name  string
	p     aggregate.Params
	beta  float64
	fmax  map[int]int
	rules map[int]aggregate.Rule
	last  aggregate.Rule
}

func newAutoRule(name string, p aggregate.Params, beta float64) *autoRule {
	return &autoRule{name: name, p: p, beta: beta, fmax: map[int]int{}, rules: map[int]aggregate.Rule{}}
}

// Name implements aggregate.Rule.
func (a *autoRule) Name() string { return a.name }

// F is the f used with n inputs.
func (a *autoRule) F(n int) int {
	fm, ok := a.fmax[n]
	if !ok {
		fm = maxF(a.name, a.p, n)
		a.fmax[n] = fm
	}
	return autoCount(a.beta, n, fm)
}

// Aggregate implements aggregate.Rule.
func (a *autoRule) Aggregate(dst []float32, xs [][]float32) error {
	n := 0
	for _, x := range xs {
		if ok, _ := vec.AllFinite(x); ok {
			n++
		}
	}
	f := a.F(max(n, 1))
	r := a.rules[f]
	if r == nil {
		p := a.p
		p.F = f
		var err error
		if r, err = aggregate.NewWith(a.name, p); err != nil {
			return err
		}
		a.rules[f] = r
	}
	a.last = r
	return r.Aggregate(dst, xs)
}

// Weights implements aggregate.Selector when the rule does (nil
// otherwise: the caller then counts inputs equally, as for a rule without
// weights).
func (a *autoRule) Weights() []float64 {
	if s, ok := a.last.(aggregate.Selector); ok {
		return s.Weights()
	}
	return nil
}
