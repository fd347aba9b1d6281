package nn

import (
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/vec"
)

// EvalResult summarizes a model on a set of samples.
type EvalResult struct {
	N        int
	Accuracy float64
	// Loss is the mean loss per sample, as the head defines it.
	Loss float64
}

// Evaluate runs the model in evaluation mode (no dropout, batch-norm running
// statistics) over src in batches of the model's batch size. It uses only
// forward buffers and changes no parameter or state.
func (m *Model) Evaluate(src Batches) (EvalResult, error) {
	m.Acquire()
	defer m.Release()
	var res EvalResult
	var correct int
	err := m.eachBatch(src, func(start, n int, logits []float32, _ []float32) error {
		res.N += n
		l, err := m.head.Loss(logits, m.ybuf[:n], n, m.classes, nil)
		if err != nil {
			return err
		}
		res.Loss += l
		for i := 0; i < n; i++ {
			if argmax(logits[i*m.classes:(i+1)*m.classes]) == m.ybuf[i] {
				correct++
			}
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	if res.N > 0 {
		res.Accuracy = float64(correct) / float64(res.N)
		res.Loss /= float64(res.N)
	}
	return res, nil
}

// EvaluateDiverged measures the accuracy of a model whose outputs are not
// all finite (a diverged model), as it is: a sample whose logits hold a
// NaN counts as wrong, otherwise the largest logit (+Inf included) is the
// prediction. The loss is undefined for such a model and left 0.
func (m *Model) EvaluateDiverged(src Batches) (EvalResult, error) {
	m.Acquire()
	defer m.Release()
	var res EvalResult
	var correct int
	total := src.Len()
	m.run = pass{eng: m.eng}
	p := &m.run
	src.Reset()
	for {
		x := m.xbuf
		b := src.Next(x, m.ybuf)
		if b == 0 {
			break
		}
		if res.N+b > total {
			return res, fmt.Errorf("evaluation: the source yielded more than its %d samples", total)
		}
		x = x[:b*m.inSize]
		for _, l := range m.layers {
			x = l.forward(p, x, b)
		}
		for i := 0; i < b; i++ {
			z := x[i*m.classes : (i+1)*m.classes]
			if slices.ContainsFunc(z, func(v float32) bool { return v != v }) {
				continue
			}
			if argmax(z) == m.ybuf[i] {
				correct++
			}
		}
		res.N += b
	}
	if res.N > 0 {
		res.Accuracy = float64(correct) / float64(res.N)
	}
	return res, nil
}

// FeatureSize is the width of the penultimate-layer features (the input of
// the final linear layer).
func (m *Model) FeatureSize() int { return m.layers[m.featureLayer].(*linear).in }

// Outputs writes, for every sample of a pass over src in order, the class probabilities
// (Len×Classes) into probs, the vacuity u = K/S into vacuity (evidential
// head only) and the penultimate-layer features (Len×FeatureSize) into
// features. Any destination may be nil.
func (m *Model) Outputs(src Batches, probs, vacuity, features []float32) error {
	m.Acquire()
	defer m.Release()
	n, k, f := src.Len(), m.classes, m.FeatureSize()
	if probs != nil && len(probs) < n*k {
		return fmt.Errorf("outputs: probs holds %d values, need %d", len(probs), n*k)
	}
	if features != nil && len(features) < n*f {
		return fmt.Errorf("outputs: features holds %d values, need %d", len(features), n*f)
	}
	var uh UncertaintyHead
	if vacuity != nil {
		var ok bool
		if uh, ok = m.head.(UncertaintyHead); !ok {
			return fmt.Errorf("outputs: the %s head has no vacuity", m.head.Name())
		}
		if len(vacuity) < n {
			return fmt.Errorf("outputs: vacuity holds %d values, need %d", len(vacuity), n)
		}
	}
	return m.eachBatch(src, func(start, b int, logits, feat []float32) error {
		if probs != nil {
			m.head.Probs(logits, probs[start*k:(start+b)*k], b, k)
		}
		if uh != nil {
			uh.Vacuity(logits, vacuity[start:start+b], b, k)
		}
		if features != nil {
			copy(features[start*f:(start+b)*f], feat[:b*f])
		}
		return nil
	})
}

// eachBatch runs the evaluation-mode forward pass over one pass of src and
// hands each batch's logits and penultimate features to fn. A source that
// yields more samples than its Len is an error, so callers can size their
// outputs by Len.
func (m *Model) eachBatch(src Batches, fn func(start, n int, logits, features []float32) error) error {
	total := src.Len()
	m.run = pass{eng: m.eng}
	p := &m.run
	src.Reset()
	for start := 0; ; {
		x := m.xbuf
		b := src.Next(x, m.ybuf)
		if b == 0 {
			return nil
		}
		if start+b > total {
			return fmt.Errorf("evaluation: the source yielded more than its %d samples", total)
		}
		x = x[:b*m.inSize]
		var feat []float32
		for li, l := range m.layers {
			if li == m.featureLayer {
				feat = x
			}
			x = l.forward(p, x, b)
		}
		if ok, _ := vec.AllFinite(x); !ok {
			return fmt.Errorf("evaluation: %w output for samples %d–%d", ErrNonFinite, start, start+b-1)
		}
		if err := fn(start, b, x, feat); err != nil {
			return err
		}
		start += b
	}
}

func argmax(z []float32) int {
	best := 0
	for j, v := range z {
		if v > z[best] {
			best = j
		}
	}
	return best
}
