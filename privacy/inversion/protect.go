package inversion

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/privacy"
)

// Protection is what stands between a node's round update and a curious
// neighbour: the attacker's view of the target's update, given the
// updates of the target (first) and of the other members of its secure-
// aggregation group.
type Protection struct {
	// Kind is "none", "dp", "secagg" or "sd" (state decomposition).
	Kind string
	// DP (node level, as node/dplayer): the update clipped to L2 norm Clip
	// and noised with N(0, (z·Clip)²) once, z the smallest multiplier
	// that keeps Rounds such releases (ε, δ)-DP under the RDP accountant
	// (privacy.Calibrate, unamplified: one release a round from all the
	// node's data).
	Epsilon, Delta, Clip float64
	Rounds               int
	// K is the secure-aggregation group: the attacker sees the sum of the
	// target's update and K − 1 others' (survey §3.4.1).
	K int
	// Rho is state decomposition's offset scale: the shared share is
	// α = u + r with r ~ N(0, s²I), s = Rho·‖u‖/√d (the hidden share
	// β = u − r stays with the node; survey §3.4.2, refs [164], [122]).
	Rho float64
}

// Name labels the protection in tables.
func (p Protection) Name() string {
	switch p.Kind {
	case "dp":
		return fmt.Sprintf("DP ε=%g", p.Epsilon)
	case "secagg":
		return fmt.Sprintf("secagg k=%d", p.K)
	case "sd":
		return fmt.Sprintf("state decomp. ρ=%g", p.Rho)
	}
	return "none"
}

// Group is how many updates the view covers: K for secure aggregation,
// 1 otherwise.
func (p Protection) Group() int {
	if p.Kind == "secagg" {
		return p.K
	}
	return 1
}

// Multiplier is the DP noise multiplier z the repository's calibration
// gives for the protection's ε, δ and rounds.
func (p Protection) Multiplier() (float64, error) {
	return privacy.Calibrate(p.Epsilon, p.Delta, p.Rounds, privacy.Unamplified(), nil)
}

// View is what the attacker receives. updates[0] is the target's round
// update; secure aggregation sums updates[:K] (its masks cancel in the
// sum, and the sum is all the protocol reveals, so the view is modelled
// as the plain sum). Noise comes from rng (DP through the repository's
// Gaussian mechanism and a seeded privacy source drawn from rng).
func (p Protection) View(updates [][]float32, rng *rand.Rand) ([]float32, error) {
	u := append([]float32(nil), updates[0]...)
	switch p.Kind {
	case "none":
	case "dp":
		z, err := p.Multiplier()
		if err != nil {
			return nil, err
		}
		g, err := privacy.NewGaussian(p.Clip, z)
		if err != nil {
			return nil, err
		}
		if _, err := g.Release(u, privacy.NewSeededSource(rng.Uint64(), rng.Uint64())); err != nil {
			return nil, err
		}
	case "secagg":
		if p.K < 1 || p.K > len(updates) {
			return nil, fmt.Errorf("inversion: secure aggregation over %d updates, %d given", p.K, len(updates))
		}
		for _, o := range updates[1:p.K] {
			for i, v := range o {
				u[i] += v
			}
		}
	case "sd":
		var ss float64
		for _, v := range u {
			ss += float64(v) * float64(v)
		}
		s := p.Rho * math.Sqrt(ss/float64(len(u)))
		for i := range u {
			u[i] += float32(s * rng.NormFloat64())
		}
	default:
		return nil, fmt.Errorf("inversion: unknown protection %q (want none, dp, secagg or sd)", p.Kind)
	}
	return u, nil
}
