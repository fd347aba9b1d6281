package node

import (
	"fmt"

	"github.com/trellis-fl/trellis/agreement"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
)

// The hooks the node puts in strategy.View: each evaluates parameters on
// the node's own data through its model and restores the model after.

// validate is View.Validate: the outputs of params on the first max
// samples of the node's validation split, the node's model restored
// afterwards.
func (n *Node) validate(params []float32, max int, dst *agreement.Outputs) error {
	m := n.cfg.Model
	if len(params) != m.NumParams() {
		return fmt.Errorf("validate: %d parameters, the model has %d", len(params), m.NumParams())
	}
	if n.cfg.Val == nil || n.cfg.Val.Len() == 0 {
		return fmt.Errorf("node %d has no validation samples", n.cfg.ID)
	}
	src := &firstN{src: n.cfg.Val, n: min(max, n.cfg.Val.Len())}
	cnt, k, f := src.Len(), m.Classes(), m.FeatureSize()
	if len(n.valLabels) != cnt {
		// Labels do not depend on the parameters: read them once.
		n.valLabels = make([]int, 0, cnt)
		n.valX = grow(n.valX, m.Batch()*m.InputSize())
		y := make([]int, m.Batch())
		src.Reset()
		for b := src.Next(n.valX, y); b > 0; b = src.Next(n.valX, y) {
			n.valLabels = append(n.valLabels, y[:b]...)
		}
	}
	dst.N, dst.Classes, dst.Dim, dst.Labels = cnt, k, f, n.valLabels
	dst.Probs = grow(dst.Probs, cnt*k)
	dst.Features = grow(dst.Features, cnt*f)
	vac := dst.Vacuity
	dst.Vacuity = nil
	if _, ok := m.Head().(nn.UncertaintyHead); ok {
		dst.Vacuity = grow(vac, cnt)
	}
	n.saved = append(n.saved[:0], m.Params()...)
	copy(m.Params(), params)
	err := m.Outputs(src, dst.Probs, dst.Vacuity, dst.Features)
	copy(m.Params(), n.saved)
	return err
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// firstN yields the first n samples of a source.
type firstN struct {
	src  nn.Batches
	n    int
	seen int
}

func (f *firstN) Len() int { return f.n }
func (f *firstN) Reset()   { f.src.Reset(); f.seen = 0 }
func (f *firstN) Next(x []float32, y []int) int {
	if f.seen >= f.n {
		return 0
	}
	b := f.src.Next(x, y[:min(len(y), f.n-f.seen)])
	f.seen += b
	return b
}

// trainCopy is View.TrainCopy: this round's local training applied to
// params in place, with its own optimizer and training stream, the
// node's model restored afterwards.
func (n *Node) trainCopy(params []float32) (nn.TrainResult, error) {
	m := n.cfg.Model
	if len(params) != m.NumParams() {
		return nn.TrainResult{}, fmt.Errorf("train copy: %d parameters, the model has %d", len(params), m.NumParams())
	}
	if n.copyOpt == nil {
		if n.cfg.NewOptimizer == nil {
			return nn.TrainResult{}, fmt.Errorf("node %d: the strategy trains a second model but the node has no NewOptimizer", n.cfg.ID)
		}
		var err error
		if n.copyOpt, err = n.cfg.NewOptimizer(); err != nil {
			return nn.TrainResult{}, err
		}
	}
	n.saved = append(n.saved[:0], m.Params()...)
	copy(m.Params(), params)
	res, err := m.Train(n.cfg.TrainData, n.copyOpt, n.cfg.Train,
		n.random.Stream(seed.Train, uint64(n.cfg.ID), uint64(n.rs.r), 1))
	copy(params, m.Params())
	copy(m.Params(), n.saved)
	return res, err
}

// batchLoss is View.BatchLoss: the mean loss of params on one batch of the
// node's training data, the same batch for the whole round (UBAR's test).
// The model's own parameters are restored afterwards.
func (n *Node) batchLoss(params []float32) (float64, error) {
	m := n.cfg.Model
	if len(params) != m.NumParams() {
		return 0, fmt.Errorf("batch loss: %d parameters, the model has %d", len(params), m.NumParams())
	}
	if n.probe.x == nil || n.probeRound != n.rs.r {
		if n.probe.x == nil {
			n.probe.x = make([]float32, m.Batch()*m.InputSize())
			n.probe.y = make([]int, m.Batch())
		}
		n.cfg.TrainData.Reset()
		n.probe.n = n.cfg.TrainData.Next(n.probe.x, n.probe.y)
		n.probeRound = n.rs.r
	}
	n.saved = append(n.saved[:0], m.Params()...)
	copy(m.Params(), params)
	res, err := m.Evaluate(&n.probe)
	copy(m.Params(), n.saved)
	return res.Loss, err
}

// oneBatch is a fixed batch as nn.Batches.
type oneBatch struct {
	x    []float32
	y    []int
	n    int
	done bool
}

func (b *oneBatch) Len() int { return b.n }
func (b *oneBatch) Reset()   { b.done = false }
func (b *oneBatch) Next(x []float32, y []int) int {
	if b.done {
		return 0
	}
	b.done = true
	copy(x, b.x)
	copy(y, b.y[:b.n])
	return b.n
}
