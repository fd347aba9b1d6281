package aggregate_test

import (
	"fmt"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/strategy"
)

// clampedMean is a rule written outside the package (docs/guides/extending.md,
// "Adding a rule"): per coordinate, every input is clamped to [−bound, bound]
// before the mean, so one input moves the result by at most 2·bound/n.
type clampedMean struct{ bound float32 }

func (clampedMean) Name() string { return "clamped_mean" }

// Aggregate writes the clamped mean of xs into dst. A rule returns an
// error, never panics, on inputs it cannot take.
func (r clampedMean) Aggregate(dst []float32, xs [][]float32) error {
	if len(xs) == 0 {
		return fmt.Errorf("clamped_mean: no inputs")
	}
	for j := range dst {
		var sum float64 // accumulate in float64, as the package's rules do
		for _, x := range xs {
			if len(x) != len(dst) {
				return fmt.Errorf("clamped_mean: input of %d values, want %d", len(x), len(dst))
			}
			sum += float64(min(max(x[j], -r.bound), r.bound))
		}
		dst[j] = float32(sum / float64(len(xs)))
	}
	return nil
}

// Example_newRule is the guide's rule: the five vectors of the package
// example, whose second coordinates {2, 7, 1, 8, 100} carry an outlier.
// The mean gives 118/5 = 23.6; clamped to 10 the outlier counts as 10, so
// (2 + 7 + 1 + 8 + 10)/5 = 5.6. Any aggregate.Rule runs in a node as the
// strategy robust's rule: here node 0 combines its own model with two
// neighbours' under strategy.RobustRule, all three weighing 1/3.
func Example_newRule() {
	xs := [][]float32{{3, 2}, {1, 7}, {4, 1}, {1, 8}, {5, 100}}
	dst := make([]float32, 2)
	var rule aggregate.Rule = clampedMean{bound: 10}
	if err := rule.Aggregate(dst, xs); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s %.4f\n", rule.Name(), dst)

	m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{1}, Classes: 2}, 1, nn.Options{Batch: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	copy(m.Params(), []float32{1, 2, 3, 4}) // the node's trained model
	v := &strategy.View{ID: 0, Model: m, Neighbors: []int{1, 2}, NeighborDegree: []int{2, 2}, Degree: 2}
	in := []strategy.Incoming{
		{From: 1, Tag: strategy.TagModel, Vector: []float32{4, 5, 6, 7}},
		{From: 2, Tag: strategy.TagModel, Vector: []float32{100, -100, 0, 1}},
	}
	s := &strategy.RobustRule{Rule: rule}
	w, err := s.Combine(v, in)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s weights %.4f %.4f, parameters %.4f\n", s.Name(), w[1], w[2], m.Params())
	// Output:
	// clamped_mean [2.8000 5.6000]
	// robust/clamped_mean weights 0.3333 0.3333, parameters [5.0000 -1.0000 3.0000 4.0000]
}
