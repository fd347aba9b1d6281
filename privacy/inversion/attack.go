package inversion

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/trellis-fl/trellis/nn"
)

// Update is the round update a node shares after local SGD of rate lr on
// the samples (x, y) from model m's parameters, in steps of batch
// samples each (len(y)/batch steps, the samples in order): u = w' − w,
// which for one step is −lr·∇L of the batch. It runs nn's own training
// step (nn.Model.Step) and leaves m's parameters as they were.
func Update(m *nn.Model, x []float32, y []int, batch int, lr float64) ([]float32, error) {
	if batch < 1 || len(y)%batch != 0 {
		return nil, fmt.Errorf("inversion: %d samples in steps of %d", len(y), batch)
	}
	opt, err := nn.NewOptimizer(nn.OptimizerSpec{Name: "sgd", LR: lr}, m.NumParams())
	if err != nil {
		return nil, err
	}
	start := slices.Clone(m.Params())
	D := m.InputSize()
	for lo := 0; lo < len(y); lo += batch {
		if _, err := m.Step(x[lo*D:(lo+batch)*D], y[lo:lo+batch], batch, opt, nn.TrainConfig{}, nil); err != nil {
			copy(m.Params(), start)
			return nil, err
		}
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
	Net *Net
	LR  float64
	// Steps is the number of local steps behind an update (0 means 1).
	Steps int
	// Batch is the samples of one local step (0: the view's n samples
	// over Steps distinct batches, n/Steps each; n: Steps steps on the
	// same batch).
	Batch int
	// Unroll makes a batch's reconstruction simulate the victim's Steps
	// steps on the dummies and match the simulated update (Unrolled)
	// instead of reading −view/(lr·Steps) as one gradient.
	Unroll bool
	// Labels, when set, are the view's n labels given to the attacker
	// rather than recovered (in the update's sample order: step by step
	// for distinct batches): an oracle, to measure what the recovered
	// labels' errors cost the reconstruction.
	Labels    []int
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
// one step of rate lr, so −view/lr is the batch's mean gradient; after s
// local steps, −view/(lr·s) is the mean of the s steps' gradients, each
// taken at the model of its step: to first order in lr the mean gradient
// of all the steps' samples at the start model, which the attack treats
// as one batch of n samples (the baseline), or, with Unroll, simulates
// the steps (DLGUnrolled). One sample: iDLG's label and the analytic
// inversion (exact after any number of steps on that one sample: every
// step's first-layer gradient is a multiple of it). More: the labels'
// counts, then DLG with them.
func (a *Attacker) Invert(view []float32, n int, rng *rand.Rand) (Outcome, error) {
	if len(view) != a.Net.NumParams() {
		return Outcome{}, fmt.Errorf("inversion: a view of %d values for a net of %d parameters", len(view), a.Net.NumParams())
	}
	scale := -1 / (a.LR * float64(max(a.Steps, 1)))
	g := make([]float64, len(view))
	for i, v := range view {
		g[i] = float64(v) * scale
	}
	if a.Labels != nil && len(a.Labels) != n {
		return Outcome{}, fmt.Errorf("inversion: %d labels given for a view of %d samples", len(a.Labels), n)
	}
	if n == 1 {
		label := a.Net.LabelOne(g)
		if a.Labels != nil {
			label = a.Labels[0]
		}
		return Outcome{Labels: []int{label}, Recon: a.Net.Analytic(g), Method: "analytic"}, nil
	}
	labels := a.Labels
	if labels == nil {
		if len(a.MeanProbs) != a.Net.Classes() {
			return Outcome{}, fmt.Errorf("inversion: %d mean probabilities for %d classes (a batch's label counts need them)", len(a.MeanProbs), a.Net.Classes())
		}
		labels = a.Net.LabelCounts(g, n, a.MeanProbs)
	}
	steps := max(a.Steps, 1)
	if !a.Unroll || steps == 1 {
		x, obj := a.Net.DLG(g, labels, a.DLG, rng)
		return Outcome{Labels: labels, Recon: x, Method: "DLG", Objective: obj}, nil
	}
	b := a.Batch
	if b == 0 {
		b = n / steps
	}
	if b < 1 || (b != n && b*steps != n) {
		return Outcome{}, fmt.Errorf("inversion: %d samples in %d steps of %d: neither one batch nor distinct batches", n, steps, b)
	}
	// The counts are of n samples and do not say which step held which
	// label: the sorted labels are dealt to the steps in order (given
	// Labels are in step order already).
	u := make([]float64, len(view))
	for i, v := range view {
		u[i] = float64(v)
	}
	x, obj := a.Net.DLGUnrolled(u, labels, a.LR, steps, b, a.DLG, rng)
	return Outcome{Labels: labels, Recon: x, Method: "DLG unrolled", Objective: obj}, nil
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
