package attack

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/vec"
)

// GaussianNorm is Gaussian noise that keeps the honest norm:
// b + N(0, σ_n² I), rescaled to the mean Euclidean norm of the round's
// honest payloads (View.Honest), so a norm-sanity gate ||θ_j|| <= κ||θ_i||
// cannot tell it from an honest model. With σ_n large against the honest
// coordinates it is a random direction at the honest norm. It assumes
// knowledge of the honest payloads' norms (omniscient, like alie and ipm).
//
// Craft draws one rng.NormFloat64 per coordinate, in coordinate order, as
// Gaussian does, then rescales in float64.
type GaussianNorm struct {
	// Sigma is σ_n, in (0, MaxSigma].
	Sigma float64
}

// Name implements Attack.
func (GaussianNorm) Name() string { return "gaussian_norm" }

func (g GaussianNorm) check() error {
	if !(g.Sigma > 0 && g.Sigma <= MaxSigma) {
		return fmt.Errorf("attack gaussian_norm: sigma = %v, allowed range (0, %g]", g.Sigma, float64(MaxSigma))
	}
	return nil
}

// Craft implements Attack.
func (g GaussianNorm) Craft(dst []float32, v *View, honest []float32, _, _ int, rng *rand.Rand) error {
	if err := g.check(); err != nil {
		return err
	}
	if err := checkLen("gaussian_norm", dst, honest); err != nil {
		return err
	}
	if rng == nil {
		return fmt.Errorf("attack gaussian_norm: needs a random stream, got nil")
	}
	hs, err := honestOf("gaussian_norm", v, len(dst))
	if err != nil {
		return err
	}
	x, _ := v.memo("mean_norm", func() (any, error) {
		var s float64
		for _, h := range hs {
			s += vec.Norm(h)
		}
		return s / float64(len(hs)), nil
	})
	target := x.(float64)
	honest = honest[:len(dst)]
	var ss float64
	tmp := make([]float64, len(dst))
	for i := range dst {
		tmp[i] = float64(honest[i]) + g.Sigma*rng.NormFloat64()
		ss += tmp[i] * tmp[i]
	}
	scale := 0.0
	if ss > 0 && !math.IsInf(ss, 0) {
		scale = target / math.Sqrt(ss)
	}
	for i := range dst {
		dst[i] = float32(tmp[i] * scale)
	}
	return nil
}
