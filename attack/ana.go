package attack

import (
	"fmt"
	"math/rand/v2"
)

// AnaProportional sends b + ε ⊙ b · s/100 with ε ~ N(0, I) (spec:
// "ana_proportional"): noise on each coordinate proportional to its
// magnitude, s percent of it in standard deviation. It assumes knowledge of
// the attacker's own honest vector only.
//
// Craft draws one rng.NormFloat64 per coordinate, in coordinate order.
type AnaProportional struct {
	// Percent is s, in (0, MaxScale].
	Percent float64
}

// Name implements Attack.
func (AnaProportional) Name() string { return "ana_proportional" }

func (a AnaProportional) check() error {
	if !(a.Percent > 0 && a.Percent <= MaxScale) {
		return fmt.Errorf("attack ana_proportional: percent = %v, allowed range (0, %g]", a.Percent, float64(MaxScale))
	}
	return nil
}

// Craft implements Attack.
func (a AnaProportional) Craft(dst []float32, _ *View, honest []float32, _, _ int, rng *rand.Rand) error {
	if err := a.check(); err != nil {
		return err
	}
	if err := checkLen("ana_proportional", dst, honest); err != nil {
		return err
	}
	if rng == nil {
		return fmt.Errorf("attack ana_proportional: needs a random stream, got nil")
	}
	s := a.Percent / 100
	honest = honest[:len(dst)]
	for i := range dst {
		b := float64(honest[i])
		dst[i] = float32(b + rng.NormFloat64()*b*s)
	}
	return nil
}
