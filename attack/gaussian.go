package attack

import (
	"fmt"
	"math/rand/v2"
)

// Gaussian sends b + N(0, σ_n² I), or with Replace N(0, σ_n² I) alone
// ("gaussian" in docs/methods/toolbox.md and its variant "replace"). It assumes knowledge of the
// attacker's own honest vector only (Replace: none at all).
//
// Craft draws one rng.NormFloat64 per coordinate, in coordinate order.
type Gaussian struct {
	// Sigma is σ_n, in (0, MaxSigma].
	Sigma float64
	// Replace sends the noise without the honest vector.
	Replace bool
}

// Name implements Attack.
func (Gaussian) Name() string { return "gaussian" }

func (g Gaussian) check() error {
	if !(g.Sigma > 0 && g.Sigma <= MaxSigma) {
		return fmt.Errorf("attack gaussian: sigma = %v, allowed range (0, %g]", g.Sigma, float64(MaxSigma))
	}
	return nil
}

// Craft implements Attack.
func (g Gaussian) Craft(dst []float32, _ *View, honest []float32, _, _ int, rng *rand.Rand) error {
	if err := g.check(); err != nil {
		return err
	}
	if err := checkLen("gaussian", dst, honest); err != nil {
		return err
	}
	if rng == nil {
		return fmt.Errorf("attack gaussian: needs a random stream, got nil")
	}
	s := g.Sigma
	if g.Replace {
		for i := range dst {
			dst[i] = float32(s * rng.NormFloat64())
		}
		return nil
	}
	honest = honest[:len(dst)]
	for i := range dst {
		dst[i] = float32(float64(honest[i]) + s*rng.NormFloat64())
	}
	return nil
}
