package attack

import (
	"fmt"
	"math/rand/v2"
)

// IPM is the inner-product manipulation attack (Xie et al. 2020; spec:
// "ipm"): every attacker sends −ε μ, μ the mean of the round's honest
// payloads, so the aggregate's inner product with the true mean turns
// negative. A small ε defeats Krum, a large one median-type rules. It
// assumes full knowledge of the honest payloads of the round (View.Honest)
// and ignores the attacker's own.
type IPM struct {
	// Epsilon is ε, in (0, MaxScale]; 0 means DefaultEpsilon.
	Epsilon float64
}

// Name implements Attack.
func (IPM) Name() string { return "ipm" }

func (a IPM) eps() float64 {
	if a.Epsilon == 0 {
		return DefaultEpsilon
	}
	return a.Epsilon
}

func (a IPM) check() error {
	if !(a.Epsilon >= 0 && a.Epsilon <= MaxScale) {
		return fmt.Errorf("attack ipm: epsilon = %v, allowed range (0, %g] (0 means %g)", a.Epsilon, float64(MaxScale), DefaultEpsilon)
	}
	return nil
}

// Craft implements Attack.
func (a IPM) Craft(dst []float32, v *View, honest []float32, _, _ int, _ *rand.Rand) error {
	if err := a.check(); err != nil {
		return err
	}
	if err := checkLen("ipm", dst, honest); err != nil {
		return err
	}
	g, err := honestOf("ipm", v, len(dst))
	if err != nil {
		return err
	}
	return memoVector(v, fmt.Sprintf("%#v", a), dst, func(out []float32) error {
		m, e := momentsOf(v, g), a.eps()
		for j := range out {
			out[j] = float32(-e * m.mean[j])
		}
		return nil
	})
}
