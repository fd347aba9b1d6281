package attack

import (
	"fmt"
	"math/rand/v2"
)

// Scaling sends s·b ("scaling" in docs/methods/toolbox.md, s = 10 by default), computed in
// float64 and rounded once. It assumes knowledge of the attacker's own
// honest vector only.
type Scaling struct {
	// S is the factor s, in [−MaxScale, MaxScale]; 0 means DefaultScale.
	S float64
}

// Name implements Attack.
func (Scaling) Name() string { return "scaling" }

// factor returns s with the default applied.
func (a Scaling) factor() float64 {
	if a.S == 0 {
		return DefaultScale
	}
	return a.S
}

func (a Scaling) check() error {
	if !(a.S >= -MaxScale && a.S <= MaxScale) {
		return fmt.Errorf("attack scaling: scale = %v, allowed range [%g, %g] (0 means %d)", a.S, -MaxScale, float64(MaxScale), DefaultScale)
	}
	return nil
}

// Craft implements Attack.
func (a Scaling) Craft(dst []float32, _ *View, honest []float32, _, _ int, _ *rand.Rand) error {
	if err := a.check(); err != nil {
		return err
	}
	if err := checkLen("scaling", dst, honest); err != nil {
		return err
	}
	s := a.factor()
	honest = honest[:len(dst)]
	for i := range dst {
		dst[i] = float32(s * float64(honest[i]))
	}
	return nil
}
