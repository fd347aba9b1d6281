package aggregate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/trellis-fl/trellis/internal/memsize"
)

// kind describes one rule or pre-aggregator name: whether it has an f (the
// number of faulty inputs it tolerates, Params.F), and for a rule whether a
// node runs it around its own vector (Centered) rather than counting its
// own vector as one more input.
type kind struct {
	name      string
	takesF    bool
	aroundOwn bool
	// lowDim marks a rule for low-dimensional vectors only (safe_area,
	// centerpoint_lp, tverberg, radon: d <= SafeAreaMaxDim): ParseSpec accepts
	// it, Names leaves it out.
	lowDim bool
	// scratch is the heap bytes the rule keeps for n inputs of dim floats
	// and what they are (Spec.Scratch); nil: none to speak of.
	scratch func(n, dim int64) (int64, string)
}

// ruleKinds are the rules NewWith builds, in the order of the toolbox
// table (docs/methods/toolbox.md).
var ruleKinds = []kind{
	{name: "mean"},
	{name: "median", scratch: columnsScratch},
	{name: "trimmed_mean", takesF: true, scratch: columnsScratch},
	{name: "krum", takesF: true, scratch: gramScratch},
	{name: "multi_krum", takesF: true, scratch: gramScratch},
	{name: "geometric_median", scratch: geomedScratch},
	{name: "centered_clipping", takesF: true, scratch: cclipScratch},
	{name: "bulyan", takesF: true, scratch: bulyanScratch},
	{name: "msr", takesF: true, aroundOwn: true, scratch: msrScratch},
	{name: "ios", takesF: true, aroundOwn: true, scratch: iosScratch},
	{name: "rtc", takesF: true, aroundOwn: true, scratch: rtcScratch},
	{name: "safe_area", takesF: true, lowDim: true},
	{name: "centerpoint_lp", takesF: true, lowDim: true},
	{name: "tverberg", takesF: true, lowDim: true},
	{name: "radon", takesF: true, lowDim: true},
}

// preKinds are the pre-aggregators NewWith accepts in front of a rule.
var preKinds = []kind{
	{name: "bucketing", scratch: bucketingScratch},
	{name: "nnm", takesF: true, scratch: nnmScratch},
	{name: "clip", scratch: clipScratch},
	{name: "arc", takesF: true, scratch: clipScratch},
}

func kindNames(ks []kind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.name
	}
	return out
}

func findKind(ks []kind, name string) (kind, bool) {
	i := slices.IndexFunc(ks, func(k kind) bool { return k.name == name })
	if i < 0 {
		return kind{}, false
	}
	return ks[i], true
}

// Names returns the rule names New accepts for vectors of any length
// (models); LowDimNames those it accepts for low-dimensional vectors only.
func Names() []string {
	return kindNames(slices.DeleteFunc(slices.Clone(ruleKinds), func(k kind) bool { return k.lowDim }))
}

// LowDimNames returns the rule names New accepts that aggregate only
// low-dimensional vectors (safe_area, centerpoint_lp, tverberg and radon, for
// vector consensus with d <= SafeAreaMaxDim): not in Names, so that tables of rules on models
// (resilience.StandardRules) leave them out.
func LowDimNames() []string {
	return kindNames(slices.DeleteFunc(slices.Clone(ruleKinds), func(k kind) bool { return !k.lowDim }))
}

// PreNames returns the pre-aggregator names NewWith accepts before a rule
// ("nnm+krum").
func PreNames() []string { return kindNames(preKinds) }

// ChainSeparator joins pre-aggregators and the rule in a rule string.
const ChainSeparator = "+"

// Spec is a parsed rule string: pre-aggregators in the order they run,
// then the rule ("nnm+krum": Pre [nnm], Rule krum). ParseSpec is the one
// parser of rule strings; everything that needs to know what a rule string
// means (which rule it ends in, whether it has an f, whether it runs around
// the node's own vector, how large an f it tolerates) asks a Spec.
type Spec struct {
	Pre  []string
	Rule string
}

// ParseSpec parses a rule string: a rule name (Names) optionally preceded
// by pre-aggregators (PreNames) joined by "+": "median", "nnm+krum",
// "bucketing+clip+trimmed_mean". Unknown names are errors naming the valid
// choices.
func ParseSpec(s string) (Spec, error) {
	parts := strings.Split(s, ChainSeparator)
	sp := Spec{Pre: parts[:len(parts)-1], Rule: parts[len(parts)-1]}
	if sp.Rule == "centerpoint" {
		return Spec{}, fmt.Errorf("aggregate %q: centerpoint is not available as a rule on models: the float32-exact Tukey-depth centerpoint is implemented for d <= 2 only, and for n <= d + 1 inputs its promised depth ceil(n/(d+1)) is 1, which any input has (see aggregate.Centerpoint; for low-dimensional vectors centerpoint_lp; valid rules: %s)", s, strings.Join(Names(), ", "))
	}
	if _, ok := findKind(ruleKinds, sp.Rule); !ok {
		if _, pre := findKind(preKinds, sp.Rule); pre {
			return Spec{}, fmt.Errorf("aggregate %q: %s is a pre-aggregator and must be followed by a rule, as in %s+median (rules: %s)", s, sp.Rule, sp.Rule, strings.Join(Names(), ", "))
		}
		return Spec{}, fmt.Errorf("aggregate: unknown rule %q (valid: %s; for low-dimensional vectors %s; optionally preceded by pre-aggregators %s joined with +)", sp.Rule, strings.Join(Names(), ", "), strings.Join(LowDimNames(), ", "), strings.Join(PreNames(), ", "))
	}
	for _, pre := range sp.Pre {
		if _, ok := findKind(preKinds, pre); !ok {
			return Spec{}, fmt.Errorf("aggregate %q: unknown pre-aggregator %q (valid: %s)", s, pre, strings.Join(PreNames(), ", "))
		}
	}
	return sp, nil
}

// String is the rule string ParseSpec reads.
func (s Spec) String() string {
	return strings.Join(append(slices.Clone(s.Pre), s.Rule), ChainSeparator)
}

// Uses reports whether name is the rule or one of the pre-aggregators.
func (s Spec) Uses(name string) bool {
	return s.Rule == name || slices.Contains(s.Pre, name)
}

// TakesF reports whether the rule or one of its pre-aggregators has an f
// (Params.F): without one, f changes nothing.
func (s Spec) TakesF() bool {
	if k, _ := findKind(ruleKinds, s.Rule); k.takesF {
		return true
	}
	for _, pre := range s.Pre {
		if k, _ := findKind(preKinds, pre); k.takesF {
			return true
		}
	}
	return false
}

// FRules returns the rule and pre-aggregator names that have an f.
func FRules() []string {
	var out []string
	for _, k := range append(slices.Clone(ruleKinds), preKinds...) {
		if k.takesF {
			out = append(out, k.name)
		}
	}
	return out
}

// AroundOwn reports whether a node runs the rule around its own vector
// (the rule is Centered and that is its decentralized form: msr, ios and
// rtc, alone or behind pre-aggregators) instead of counting its own vector
// as one input.
func (s Spec) AroundOwn() bool {
	k, _ := findKind(ruleKinds, s.Rule)
	return k.aroundOwn
}

// New builds the rule with parameters p (NewWith without the parsing).
func (s Spec) New(p Params) (Rule, error) {
	if err := p.check(s); err != nil {
		return nil, err
	}
	return s.build(p), nil
}

// Scratch is the heap bytes the rules of s keep between aggregations
// (each rounded as the Go allocator does) for n inputs of dim floats, and
// what the larger ones are, for a memory estimate: every rule and
// pre-aggregator counts its own (its kind's scratch, next to its
// allocations).
func (s Spec) Scratch(n, dim int) (int64, string) {
	var total int64
	var what []string
	for i, name := range append(slices.Clone(s.Pre), s.Rule) {
		ks := preKinds
		if i == len(s.Pre) {
			ks = ruleKinds
		}
		k, ok := findKind(ks, name)
		if !ok || k.scratch == nil {
			continue
		}
		b, w := k.scratch(int64(n), int64(dim))
		total = memsize.Add(total, b)
		if w != "" {
			what = append(what, name+": "+w)
		}
	}
	return total, strings.Join(what, "; ")
}

// MaxF is the largest f for which the rule (with parameters p, whose F is
// ignored) aggregates n inputs, found by asking the rule itself on n
// distinct small vectors; -1 when it cannot aggregate n inputs even with
// f = 0.
func (s Spec) MaxF(p Params, n int) int {
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
		r, err := s.New(p)
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

// FRounding says how a fraction of the neighbours becomes a count.
type FRounding int

const (
	// Up is ⌈fraction · neighbours⌉: the expected number of faulty
	// neighbours, rounded up (f = "auto").
	Up FRounding = iota
	// Nearest is round(fraction · neighbours): the DMTT paper's Multi-Krum
	// baseline (strategy option f_fraction).
	Nearest
)

// FFor is the f of a node aggregating n inputs (itself and n − 1
// neighbours) when a fraction of all nodes is taken to be faulty: the
// fraction of the n − 1 neighbours, rounded as r says, capped at fmax (the
// most the rule tolerates with n inputs, MaxF) and at least 0.
func FFor(fraction float64, n, fmax int, r FRounding) int {
	want := fraction * float64(n-1)
	var f int
	if r == Nearest {
		f = int(math.Round(want))
	} else {
		f = int(math.Ceil(want - 1e-9))
	}
	return max(0, min(f, fmax))
}
