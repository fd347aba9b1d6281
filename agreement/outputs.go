package agreement

import "fmt"

// Outputs are one model's outputs on n samples, row-major: what nn.Model's
// Outputs writes, plus the labels.
type Outputs struct {
	N, Classes, Dim int
	// Probs is N×Classes class probabilities.
	Probs []float32
	// Vacuity is u = K/S per sample for an evidential head; nil for softmax.
	Vacuity []float32
	// Features is N×Dim penultimate-layer features.
	Features []float32
	// Labels are the N true classes (calibration only).
	Labels []int
}

// check reports outputs whose slices do not match their sizes.
func (o *Outputs) check(needFeatures, needLabels bool) error {
	switch {
	case o.N < 0 || o.Classes < 1:
		return fmt.Errorf("agreement: %d samples of %d classes", o.N, o.Classes)
	case len(o.Probs) < o.N*o.Classes:
		return fmt.Errorf("agreement: %d probabilities for %d samples × %d classes", len(o.Probs), o.N, o.Classes)
	case o.Vacuity != nil && len(o.Vacuity) < o.N:
		return fmt.Errorf("agreement: %d vacuities for %d samples", len(o.Vacuity), o.N)
	case needFeatures && len(o.Features) < o.N*o.Dim:
		return fmt.Errorf("agreement: %d feature values for %d samples × %d", len(o.Features), o.N, o.Dim)
	case needLabels && len(o.Labels) < o.N:
		return fmt.Errorf("agreement: %d labels for %d samples", len(o.Labels), o.N)
	}
	return nil
}

// Predicted returns the class of largest probability of sample i (the
// first on ties).
func (o *Outputs) Predicted(i int) int {
	p := o.Probs[i*o.Classes : (i+1)*o.Classes]
	best := 0
	for j, v := range p {
		if v > p[best] {
			best = j
		}
	}
	return best
}
