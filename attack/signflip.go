package attack

import "math/rand/v2"

// SignFlip sends −b ("sign_flip" in docs/methods/toolbox.md). It assumes knowledge of the
// attacker's own honest vector only.
type SignFlip struct{}

// Name implements Attack.
func (SignFlip) Name() string { return "sign_flip" }

// Craft implements Attack.
func (SignFlip) Craft(dst []float32, _ *View, honest []float32, _, _ int, _ *rand.Rand) error {
	if err := checkLen("sign_flip", dst, honest); err != nil {
		return err
	}
	honest = honest[:len(dst)]
	for i := range dst {
		dst[i] = -honest[i]
	}
	return nil
}
