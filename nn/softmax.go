package nn

import "math"

// Softmax is the softmax cross-entropy head.
type Softmax struct{}

// Name implements Head.
func (Softmax) Name() string { return "softmax" }

// Loss implements Head: −log softmax(z)_y per sample, computed through the
// log-sum-exp.
func (Softmax) Loss(logits []float32, labels []int, n, k int, grad []float32) (float64, error) {
	var total float64
	inv := 1 / float64(n)
	for i := 0; i < n; i++ {
		if err := checkLabel(labels[i], k, i); err != nil {
			return 0, err
		}
		z := logits[i*k : (i+1)*k]
		lse := logSumExp(z)
		total += lse - float64(z[labels[i]])
		if grad != nil {
			g := grad[i*k : (i+1)*k]
			for j, v := range z {
				g[j] = float32(math.Exp(float64(v)-lse) * inv)
			}
			g[labels[i]] -= float32(inv)
		}
	}
	return total, nil
}

// Probs implements Head.
func (Softmax) Probs(logits, probs []float32, n, k int) {
	for i := 0; i < n; i++ {
		z := logits[i*k : (i+1)*k]
		lse := logSumExp(z)
		for j, v := range z {
			probs[i*k+j] = float32(math.Exp(float64(v) - lse))
		}
	}
}

// logSumExp is log Σ exp(z_j), with the maximum subtracted first so large
// logits do not overflow.
func logSumExp(z []float32) float64 {
	m := float64(z[0])
	for _, v := range z[1:] {
		m = math.Max(m, float64(v))
	}
	var s float64
	for _, v := range z {
		s += math.Exp(float64(v) - m)
	}
	return m + math.Log(s)
}
