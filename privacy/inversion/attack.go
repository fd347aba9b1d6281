package inversion

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/trellis-fl/trellis/nn"
)

// Update is the round update a node shares after one local SGD step of
// rate lr on the batch (x, y) from model m's parameters: u = w' − w =
// −lr·∇L. It runs nn's own training step (nn.Model.Step) and leaves m's
// parameters as they were.
func Update(m *nn.Model, x []float32, y []int, lr float64) ([]float32, error) {
	opt, err := nn.NewOptimizer(nn.OptimizerSpec{Name: "sgd", LR: lr}, m.NumParams())
	if err != nil {
		return nil, err
	}
	start := slices.Clone(m.Params())
	if _, err := m.Step(x, y, len(y), opt, nn.TrainConfig{}, nil); err != nil {
		return nil, err
	}
	u := make([]float32, len(start))
	for i, w := range m.Params() {
		u[i] = w - start[i]
	}
	copy(m.Params(), start)
	return u, nil
}

// Attacker is a curious neighbour: it knows the victim's start model
// (Net), the local step size (configs are shared), and has data of its
// own (MeanProbs for label counts, the prior image for the optimization).
type Attacker struct {
	Net       *Net
	LR        float64
	MeanProbs []float64
	DLG       DLGConfig
}

// Outcome is one inversion: the recovered labels (for a view of n > 1
// samples, the n labels of the counts), the reconstructions (n images,
// normalized units, sample-major) and how they were obtained.
type Outcome struct {
	Labels []int
	Recon  []float64
	// Method is "analytic" or "DLG"; Objective the final cosine distance
	// of DLG (0 for the analytic inversion).
	Method    string
	Objective float64
}

// Invert attacks a view covering n samples. The view is an update after
// one step of rate lr, so −view/lr is the batch's mean gradient (after
// several local steps, −view/(lr·steps) is about the mean gradient over
// all the steps' samples: the attack then treats them as one batch). One
// sample: iDLG's label and the analytic inversion. More: the labels'
// counts, then DLG with them.
func (a *Attacker) Invert(view []float32, n int, rng *rand.Rand) (Outcome, error) {
	if len(view) != a.Net.NumParams() {
		return Outcome{}, fmt.Errorf("inversion: a view of %d values for a net of %d parameters", len(view), a.Net.NumParams())
	}
	g := make([]float64, len(view))
	for i, v := range view {
		g[i] = -float64(v) / a.LR
	}
	if n == 1 {
		return Outcome{Labels: []int{a.Net.LabelOne(g)}, Recon: a.Net.Analytic(g), Method: "analytic"}, nil
	}
	labels := a.Net.LabelCounts(g, n, a.MeanProbs)
	x, obj := a.Net.DLG(g, labels, a.DLG, rng)
	return Outcome{Labels: labels, Recon: x, Method: "DLG", Objective: obj}, nil
}

// TopLabels is the guess of a target's b labels from a group's n ≥ b
// recovered labels: the b most frequent (ties: smaller class first), one
// label per class occurrence.
func TopLabels(labels []int, b int) []int {
	count := map[int]int{}
	for _, c := range labels {
		count[c]++
	}
	classes := make([]int, 0, len(count))
	for c := range count {
		classes = append(classes, c)
	}
	slices.SortFunc(classes, func(p, q int) int {
		if count[p] != count[q] {
			return count[q] - count[p]
		}
		return p - q
	})
	var out []int
	for _, c := range classes {
		for range count[c] {
			if len(out) < b {
				out = append(out, c)
			}
		}
	}
	return out
}
