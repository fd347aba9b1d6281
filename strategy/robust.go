package strategy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/vec"
)

var robustRow = Row{
	Name:       "robust",
	Summary:    "any rule of package aggregate over the own and the neighbours' models (or updates)",
	Rule:       true,
	RuleParams: true,
	F:          true,
	Async:      true,
	Options: []Option{
		// f per aggregation from the neighbourhood, rounded to nearest: the
		// DMTT paper's Multi-Krum baseline. f_fraction is the fraction;
		// f_expected = 1 makes it the run's declared Byzantine fraction
		// (Params.Declared), the paper's "expected number of Byzantine
		// neighbours".
		{Name: "f_fraction", Default: 0, Lo: 0, Hi: 1},
		{Name: "f_expected", Default: 0, Lo: 0, Hi: 1, Whole: true},
		// Asynchronous inputs staler than this many of the node's steps
		// are left out before the rule sees them (the default, the
		// largest timing.max_staleness, leaves none out); every input of
		// a synchronous round has staleness 0.
		{Name: "staleness_bound", Default: noStalenessBound, Lo: 0, Hi: noStalenessBound, Whole: true},
	},
	OptionsNote: "; the rule's parameters are not options: f, m, tau, iterations, from_previous, bucket, clip",
	build:       newRobust,
}

// noStalenessBound is staleness_bound's default: no input is that stale.
const noStalenessBound = 100_000

// newRobust builds robust's rule. Its f is set one way, by the rule
// (aggregate.Spec): an explicit f; or one resolved at every aggregation
// from a fraction of the neighbours (aggregate.Auto): f_fraction (or the
// declared fraction with f_expected = 1) rounded to nearest, else, for a
// rule that has an f, the declared fraction rounded up (f = "auto").
func newRobust(p Params, o Values) (Strategy, error) {
	if p.Rule == "" {
		return nil, paramErr("robust", "rule", `""`, "rule missing (valid: "+strings.Join(aggregate.Names(), ", ")+
			"; optionally preceded by pre-aggregators "+strings.Join(aggregate.PreNames(), ", ")+" joined with +)")
	}
	spec, err := aggregate.ParseSpec(p.Rule)
	if err != nil {
		return nil, paramErr("robust", "rule", fmt.Sprintf("%q", p.Rule), err.Error())
	}
	if p.RuleParams.F != 0 {
		return nil, paramErr("robust", "f", p.RuleParams.F, "give f as Params.F, not in RuleParams")
	}
	fraction := o["f_fraction"]
	if o["f_expected"] == 1 {
		if fraction != 0 {
			return nil, paramErr("robust", "options.f_fraction", fraction, "f_fraction and f_expected = 1 both give the fraction; give one")
		}
		fraction = p.Declared
	}
	if o["f_fraction"] != 0 || o["f_expected"] != 0 {
		key, v := "options.f_fraction", o["f_fraction"]
		if v == 0 {
			key, v = "options.f_expected", o["f_expected"]
		}
		if !spec.TakesF() {
			return nil, paramErr("robust", key, v, fmt.Sprintf("sets f per round, and rule %q takes no f (rules and pre-aggregators with one: %s)", p.Rule, strings.Join(aggregate.FRules(), ", ")))
		}
		if p.F != nil {
			return nil, paramErr("robust", key, v, fmt.Sprintf("sets f per round, and f = %d sets it too; give one", *p.F))
		}
	}
	if !(p.Declared >= 0 && p.Declared <= 1) {
		return nil, fmt.Errorf("strategy robust: declared Byzantine fraction %v, allowed range [0, 1]", p.Declared)
	}
	var r aggregate.Rule
	rp := p.RuleParams
	switch {
	case p.F != nil:
		rp.F = *p.F
		r, err = spec.New(rp)
	case fraction > 0:
		r, err = aggregate.NewAuto(spec, rp, fraction, aggregate.Nearest)
	case spec.TakesF() && p.Declared > 0:
		r, err = aggregate.NewAuto(spec, rp, p.Declared, aggregate.Up)
	default:
		r, err = spec.New(rp)
	}
	if err != nil {
		return nil, fmt.Errorf("strategy robust: %w", err)
	}
	rr := &RobustRule{Rule: r, Updates: p.Updates}
	if b := o["staleness_bound"]; b < noStalenessBound {
		rr.StaleFilter, rr.MaxStaleness = true, int(b)
	}
	return rr, nil
}

// RobustRule aggregates the node's own trained model and its neighbors'
// with any rule of package aggregate (mean, median, trimmed mean, …): the
// "robust rule on models" baseline. Inputs are in sender-id order with the
// node's own model at its id's position. When the rule reports how much
// each input counted (aggregate.Selector), those are the weights returned;
// otherwise each input counts 1/n.
//
// The rules msr, ios and rtc (alone or behind pre-aggregators;
// aggregate.Spec.AroundOwn) run as aggregate.Centered, with the node's own model (or update) as the
// reference and only the neighbors' as inputs: their decentralized form in
// the survey (W-MSR around the node's own value, §4.4) and in their papers.
// The weights are then the neighbors' shares, summing to 1 minus what the
// own vector kept.
//
// With Updates the nodes exchange their round's update w~ − w_start
// instead (tag "update") and step from the start of the round by the
// aggregated update: the server-style setting of the survey's attacks
// (docs/methods/toolbox.md), where min-max and min-sum perturb updates.
//
// With StaleFilter, inputs staler than MaxStaleness of the node's steps
// (Incoming.Staleness, asynchronous timing) are left out before the rule
// runs: the rule then sees only inputs recent enough to be comparable, and
// its f applies to those (docs/methods/async.md).
type RobustRule struct {
	Rule         aggregate.Rule
	Updates      bool
	StaleFilter  bool
	MaxStaleness int
	spec         *aggregate.Spec // Rule's name parsed, once
	xs           [][]float32
	out          []float32
	upd          []float32
}

func (s *RobustRule) Name() string {
	if s.Updates {
		return "robust/" + s.Rule.Name() + "/updates"
	}
	return "robust/" + s.Rule.Name()
}

// Share sends the trained model (or, with Updates, the round's update) to
// every out-neighbor.
func (s *RobustRule) Share(v *View) []Outgoing {
	if s.Updates {
		return []Outgoing{{To: Broadcast, Tag: TagUpdate, Vector: s.update(v)}}
	}
	return []Outgoing{{To: Broadcast, Tag: TagModel, Vector: v.Model.Params()}}
}

// update sets s.upd to the round's update w~ − w_start.
func (s *RobustRule) update(v *View) []float32 {
	w := v.Model.Params()
	s.upd = resize(s.upd, len(w))
	vec.Sub(s.upd, w, v.Start)
	return s.upd
}

// Combine applies the rule to own and received models (or updates).
func (s *RobustRule) Combine(v *View, in []Incoming) (map[int]float64, error) {
	w := v.Model.Params()
	tag := TagModel
	if s.Updates {
		tag = TagUpdate
		if len(s.upd) != len(w) {
			s.update(v)
		}
		w = s.upd
	}
	got, err := withTag(in, tag, len(w))
	if err != nil {
		return nil, err
	}
	if s.StaleFilter {
		got = fresh(got, s.MaxStaleness)
	}
	around := s.aroundOwn()
	if around && len(got) == 0 {
		return map[int]float64{}, nil // nothing arrived: keep the own vector
	}
	s.xs = s.xs[:0]
	from := make([]int, 0, len(got)+1)
	ownAdded := around // around the own vector, it is no input
	for _, m := range got {
		if !ownAdded && m.From > v.ID {
			s.xs, from = append(s.xs, w), append(from, v.ID)
			ownAdded = true
		}
		s.xs, from = append(s.xs, m.Vector), append(from, m.From)
	}
	if !ownAdded {
		s.xs, from = append(s.xs, w), append(from, v.ID)
	}
	if cap(s.out) < len(w) {
		s.out = make([]float32, len(w))
	}
	out := s.out[:len(w)]
	if around {
		c, ok := s.Rule.(aggregate.Centered)
		if !ok {
			return nil, fmt.Errorf("%s has no own-vector form", s.Rule.Name())
		}
		if err := c.AggregateAround(out, w, s.xs); err != nil {
			return nil, keptOwn(fmt.Errorf("%s around the own vector over %d neighbors: %w", s.Rule.Name(), len(s.xs), err))
		}
	} else if err := s.Rule.Aggregate(out, s.xs); err != nil {
		return nil, keptOwn(fmt.Errorf("%s over %d models: %w", s.Rule.Name(), len(s.xs), err))
	}
	if s.Updates {
		vec.Add(v.Model.Params(), v.Start, out)
	} else {
		copy(w, out)
	}
	weights := make(map[int]float64, len(got))
	var used []float64
	if sel, ok := s.Rule.(aggregate.Selector); ok {
		used = sel.Weights()
	}
	for k, id := range from {
		if id == v.ID {
			continue
		}
		switch {
		case used != nil:
			weights[id] = used[k]
		case around:
			weights[id] = 1 / float64(len(from)+1)
		default:
			weights[id] = 1 / float64(len(from))
		}
	}
	return weights, nil
}

// ErrKeptOwn is a Combine error that changed nothing: the strategy's rule
// cannot run on the inputs that arrived (fewer than its f needs: a
// neighbour silent, refused, or in asynchronous timing not arrived yet),
// and the node's model stays as trained. The node goes on and counts those
// inputs as refused (node.ReasonTooFew); any other Combine error stops it.
// Keeping the own model is the choice that lets no input in when the rule
// cannot tell which to trust (W-MSR keeps its own value when it would
// discard every neighbour's).
var ErrKeptOwn = errors.New("too few inputs for the rule: kept the own model")

// keptOwn marks a rule's ErrTooFewInputs as ErrKeptOwn (Combine wrote
// nothing before the rule ran).
func keptOwn(err error) error {
	if errors.Is(err, aggregate.ErrTooFewInputs) {
		return fmt.Errorf("%w: %w", ErrKeptOwn, err)
	}
	return err
}

// fresh is in without the inputs staler than bound, in order; in itself
// when none is (every synchronous round: nothing is copied).
func fresh(in []Incoming, bound int) []Incoming {
	k := slices.IndexFunc(in, func(m Incoming) bool { return m.Staleness > bound })
	if k < 0 {
		return in
	}
	out := slices.Clone(in[:k])
	for _, m := range in[k+1:] {
		if m.Staleness <= bound {
			out = append(out, m)
		}
	}
	return out
}

// aroundOwn reports whether the rule runs around the node's own vector
// (aggregate.Spec.AroundOwn); a rule whose name is no rule string (one
// written outside package aggregate) does not.
func (s *RobustRule) aroundOwn() bool {
	if s.spec == nil {
		sp, _ := aggregate.ParseSpec(s.Rule.Name())
		s.spec = &sp
	}
	return s.spec.AroundOwn()
}
