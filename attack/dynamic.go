package attack

import (
	"fmt"
	"math/rand/v2"
)

// Dynamic is LIGHTYEAR's dynamic malfunction (the LIGHTYEAR paper,
// §4.2): every Craft picks one of ana, sfa and random with equal
// probability (the first draw from rng, rng.IntN(3)) and crafts with it,
// passing rng on. ana is the proportional variant when Params.Percent is
// set and the additive one (gaussian, σ = Params.Sigma) otherwise. With a
// driver that seeds rng from (seed, sender, round) only (sim's SameForAll)
// a node sends one malfunction to every neighbor per round; otherwise the
// choice is per recipient. It assumes what its three parts assume.
type Dynamic struct {
	Ana, SFA, Random Attack
}

// Name implements Attack.
func (Dynamic) Name() string { return "dynamic" }

// Craft implements Attack.
func (d Dynamic) Craft(dst []float32, v *View, honest []float32, from, to int, rng *rand.Rand) error {
	if rng == nil {
		return fmt.Errorf("attack dynamic: needs a random stream, got nil")
	}
	if d.Ana == nil || d.SFA == nil || d.Random == nil {
		return fmt.Errorf("attack dynamic: not built (use New)")
	}
	a := [3]Attack{d.Ana, d.SFA, d.Random}[rng.IntN(3)]
	return a.Craft(dst, v, honest, from, to, rng)
}

func newDynamic(p Params) (Attack, error) {
	var ana Attack = Gaussian{Sigma: p.Sigma}
	if p.Percent > 0 {
		ana = AnaProportional{Percent: p.Percent}
	}
	if c, ok := ana.(interface{ check() error }); ok {
		if err := c.check(); err != nil {
			return nil, fmt.Errorf("attack dynamic: %w", err)
		}
	}
	if p.Model == nil {
		return nil, fmt.Errorf("attack dynamic: Model (the architecture random draws) is required")
	}
	r, err := NewRandom(*p.Model)
	if err != nil {
		return nil, fmt.Errorf("attack dynamic: %w", err)
	}
	return Dynamic{Ana: ana, SFA: SignFlip{}, Random: r}, nil
}
