package strategy

import (
	"fmt"
	"math"
	"strings"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/vec"
)

// RobustRule aggregates the node's own trained model and its neighbors'
// with any rule of package aggregate (mean, median, trimmed mean, …): the
// "robust rule on models" baseline. Inputs are in sender-id order with the
// node's own model at its id's position. When the rule reports how much
// each input counted (aggregate.Selector), those are the weights returned;
// otherwise each input counts 1/n.
//
// The rules msr, ios and rtc (alone or behind pre-aggregators; AroundOwn)
// run as aggregate.Centered, with the node's own model (or update) as the
// reference and only the neighbors' as inputs: their decentralized form in
// the survey (W-MSR around the node's own value, §4.4) and in their papers.
// The weights are then the neighbors' shares, summing to 1 minus what the
// own vector kept.
//
// With Updates the nodes exchange their round's update w~ − w_start
// instead (tag "update") and step from the start of the round by the
// aggregated update: the server-style setting of the survey's attacks
// (spec/robust-rules.md), where min-max and min-sum perturb updates.
type RobustRule struct {
	Rule    aggregate.Rule
	Updates bool
	// FFraction, when positive, sets the f of a krum or multi_krum Rule at
	// every Combine to the expected number of faulty neighbors,
	// round(FFraction·k) for the k neighbors heard, capped at the largest
	// f the rule allows, floor((n − 3)/2) for n = k + 1 inputs (n > 2f +
	// 2): the DMTT paper's Multi-Krum baseline, with FFraction the
	// Byzantine fraction (options f_fraction, f_expected).
	FFraction float64
	xs        [][]float32
	out       []float32
	upd       []float32
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
	around := AroundOwn(s.Rule.Name())
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
	if s.FFraction > 0 {
		k := len(got)
		f := max(0, min(int(math.Round(s.FFraction*float64(k))), (k+1-3)/2))
		switch r := s.Rule.(type) {
		case *aggregate.Krum:
			r.F = f
		case *aggregate.MultiKrum:
			r.F = f
		}
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
			return nil, fmt.Errorf("%s around the own vector over %d neighbors: %w", s.Rule.Name(), len(s.xs), err)
		}
	} else if err := s.Rule.Aggregate(out, s.xs); err != nil {
		return nil, fmt.Errorf("%s over %d models: %w", s.Rule.Name(), len(s.xs), err)
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

// AroundOwn reports whether robust runs the rule named rule around the
// node's own vector (RobustRule): msr, ios and rtc, alone or behind
// pre-aggregators.
func AroundOwn(rule string) bool {
	last := rule[strings.LastIndex(rule, "+")+1:]
	return last == "msr" || last == "ios" || last == "rtc"
}
