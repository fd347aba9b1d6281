package strategy

import (
	"fmt"

	"github.com/trellis-fl/trellis/aggregate"
)

// RobustRule aggregates the node's own trained model and its neighbors'
// with any rule of package aggregate (mean, median, trimmed mean, …): the
// "robust rule on models" baseline. Inputs are in sender-id order with the
// node's own model at its id's position. When the rule reports how much
// each input counted (aggregate.Selector), those are the weights returned;
// otherwise each input counts 1/n.
type RobustRule struct {
	Rule aggregate.Rule
	xs   [][]float32
	out  []float32
}

func (s *RobustRule) Name() string { return "robust/" + s.Rule.Name() }

// Share sends the trained model to every out-neighbor.
func (s *RobustRule) Share(v *View) []Outgoing {
	return []Outgoing{{To: Broadcast, Tag: TagModel, Vector: v.Model.Params()}}
}

// Combine applies the rule to own and received models.
func (s *RobustRule) Combine(v *View, in []Incoming) (map[int]float64, error) {
	w := v.Model.Params()
	got, err := withTag(in, TagModel, len(w))
	if err != nil {
		return nil, err
	}
	s.xs = s.xs[:0]
	from := make([]int, 0, len(got)+1)
	ownAdded := false
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
	if err := s.Rule.Aggregate(out, s.xs); err != nil {
		return nil, fmt.Errorf("%s over %d models: %w", s.Rule.Name(), len(s.xs), err)
	}
	copy(w, out)
	weights := make(map[int]float64, len(got))
	var used []float64
	if sel, ok := s.Rule.(aggregate.Selector); ok {
		used = sel.Weights()
	}
	for k, id := range from {
		if id == v.ID {
			continue
		}
		if used != nil {
			weights[id] = used[k]
		} else {
			weights[id] = 1 / float64(len(from))
		}
	}
	return weights, nil
}
