package attack

import "math/rand/v2"

// None sends the honest vector b unchanged ("none" in docs/methods/toolbox.md): the node is
// counted as Byzantine but behaves honestly, the control of every attack
// experiment. It assumes no knowledge.
type None struct{}

// Name implements Attack.
func (None) Name() string { return "none" }

// Craft implements Attack.
func (None) Craft(dst []float32, _ *View, honest []float32, _, _ int, _ *rand.Rand) error {
	if err := checkLen("none", dst, honest); err != nil {
		return err
	}
	copy(dst, honest)
	return nil
}
