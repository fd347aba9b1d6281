package nn

import "fmt"

// Head turns the final layer's outputs (logits) into a loss, its gradient
// and class probabilities. The model's last layer is always a linear layer
// producing one logit per class.
type Head interface {
	// Name is the head's config name ("softmax", "evidential").
	Name() string
	// Loss returns the loss summed over the n samples of the batch and writes
	// d(mean loss)/d(logits) into grad when grad is not nil.
	Loss(logits []float32, labels []int, n, classes int, grad []float32) (float64, error)
	// Probs writes per-sample class probabilities (n×classes) into probs.
	Probs(logits, probs []float32, n, classes int)
}

// UncertaintyHead is a head that also knows how unsure it is of each sample.
type UncertaintyHead interface {
	Head
	// Vacuity writes u = K/S for each of the n samples into u.
	Vacuity(logits, u []float32, n, classes int)
}

func checkLabel(label, classes, i int) error {
	if label < 0 || label >= classes {
		return fmt.Errorf("label %d of batch sample %d outside [0, %d)", label, i, classes)
	}
	return nil
}
