package attack

import "math/rand/v2"

// DataAttack is implemented by attacks that poison the attacker's training
// data rather than its payload. attack does not import data, so the driver
// applies it: when it builds the local training data of a Byzantine node
// whose attack implements DataAttack, it replaces every training label y of
// that node by FlipLabel(y, K), K the dataset's number of classes (test and
// validation labels stay true, so the node's own metrics stay honest), and
// then lets the node train and share as an honest one; the attack's Craft
// sends the honest payload unchanged.
type DataAttack interface {
	Attack
	// FlipLabel returns the label the attacker trains on in place of y, for
	// a dataset of classes classes. It is a pure function.
	FlipLabel(y, classes int) int
}

// LabelFlip is the label-flipping data attack ("label_flip" in docs/methods/toolbox.md): the
// attacker trains on labels y → K − 1 − y and sends its honestly computed
// result. It assumes knowledge of the attacker's own training data only.
type LabelFlip struct{}

// Name implements Attack.
func (LabelFlip) Name() string { return "label_flip" }

// FlipLabel implements DataAttack: K − 1 − y for y in [0, K); a label out
// of that range (which no valid dataset has) is returned unchanged.
func (LabelFlip) FlipLabel(y, classes int) int {
	if y < 0 || y >= classes {
		return y
	}
	return classes - 1 - y
}

// Craft implements Attack: the payload was computed on flipped labels, so
// it is sent as it is.
func (LabelFlip) Craft(dst []float32, _ *View, honest []float32, _, _ int, _ *rand.Rand) error {
	if err := checkLen("label_flip", dst, honest); err != nil {
		return err
	}
	copy(dst, honest)
	return nil
}
