package attack

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// ALIE is "a little is enough" (Baruch et al. 2019; spec: "alie"): every
// attacker sends μ + zσ (with Minus, μ − zσ), μ and σ the per-coordinate
// mean and population standard deviation of the round's honest payloads.
// z is fixed, or z_max = Φ^{-1}((n − m − s)/(n − m)) with
// s = floor(n/2 + 1) − m, the largest shift that keeps the attackers inside
// the spread a majority of honest values could have (see ZMax). It assumes
// full knowledge of the honest payloads of the round (View.Honest) and, for
// z_max, of n and m (View.Senders, View.Attackers); it ignores the
// attacker's own payload.
type ALIE struct {
	// Z is the fixed z, in [−MaxScale, MaxScale]; 0 means z_max.
	Z float64
	// Minus sends μ − zσ.
	Minus bool
}

// Name implements Attack.
func (ALIE) Name() string { return "alie" }

func (a ALIE) check() error {
	if !(a.Z >= -MaxScale && a.Z <= MaxScale) {
		return fmt.Errorf("attack alie: z = %v, allowed range [%g, %g] (0 means z_max)", a.Z, -MaxScale, float64(MaxScale))
	}
	return nil
}

// ZMax returns ALIE's z_max = Φ^{-1}((n − m − s)/(n − m)), s = floor(n/2 + 1) − m
// (Baruch et al. 2019, Algorithm 3), for n senders of which m are
// attackers. Since n − m − s = n − floor(n/2 + 1) does not depend on m, the
// quantile lies strictly inside (0, 1), and z_max is finite, exactly when
// n ≥ 3 and 1 ≤ m ≤ floor(n/2); otherwise ZMax returns an error naming n, m
// and the allowed range. With few attackers (m ≤ 2 for even n, m = 1 for
// odd n) z_max ≤ 0: the formula then gives no push at all, or one in the
// other direction, as written in the paper.
func ZMax(n, m int) (float64, error) {
	if n < 3 || m < 1 || m > n/2 {
		return 0, fmt.Errorf("attack alie: z_max is finite only for n >= 3 senders and m attackers in [1, floor(n/2)], got n = %d, m = %d (set a fixed z instead)", n, m)
	}
	s := n/2 + 1 - m
	q := float64(n-m-s) / float64(n-m)
	// Φ^{-1}(q) = √2 erf^{-1}(2q − 1).
	return math.Sqrt2 * math.Erfinv(2*q-1), nil
}

// z returns the z of the View: the fixed one, or z_max from its senders
// and attackers.
func (a ALIE) z(v *View) (float64, error) {
	if a.Z != 0 {
		return a.Z, nil
	}
	n := v.Senders
	if n == 0 {
		n = len(v.Honest) + v.Attackers
	}
	z, err := ZMax(n, v.Attackers)
	if err != nil && v.Attackers == 0 {
		return 0, fmt.Errorf("%w (the driver fills View.Senders and View.Attackers)", err)
	}
	return z, err
}

// Craft implements Attack.
func (a ALIE) Craft(dst []float32, v *View, honest []float32, _, _ int, _ *rand.Rand) error {
	if err := a.check(); err != nil {
		return err
	}
	if err := checkLen("alie", dst, honest); err != nil {
		return err
	}
	g, err := honestOf("alie", v, len(dst))
	if err != nil {
		return err
	}
	z, err := a.z(v)
	if err != nil {
		return err
	}
	if a.Minus {
		z = -z
	}
	return memoVector(v, fmt.Sprintf("%#v", a), dst, func(out []float32) error {
		m := momentsOf(v, g)
		for j := range out {
			out[j] = float32(m.mean[j] + z*m.std(j, false))
		}
		return nil
	})
}
