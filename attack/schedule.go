package attack

import (
	"fmt"
	"math/rand/v2"
)

// Scheduled is an attack that waits: before round From (0-based) the
// Byzantine node sends its honest payload, from round From on what Attack
// crafts. It is R-DPFL's attack schedule (to
// show where each method's mechanism acts): a history-based defense
// whose threshold tracks past deviations is tested by attackers who build
// up an honest history first, so the threshold is low when they strike.
// An attack present from round 0 raises the threshold with it.
//
// The schedule covers what the node sends only; a data attack (label
// flipping) poisons training and cannot be scheduled here (NewScheduled
// refuses it). History-using attacks keep reading View.Previous in the
// honest rounds, as the driver still settles the views then.
type Scheduled struct {
	Attack
	From int
}

// NewScheduled wraps a to start at round from; from = 0 returns a itself.
func NewScheduled(a Attack, from int) (Attack, error) {
	if from < 0 {
		return nil, fmt.Errorf("attack start round = %d, want ≥ 0", from)
	}
	if from == 0 || a == nil {
		return a, nil
	}
	if _, ok := a.(DataAttack); ok {
		return nil, fmt.Errorf("attack %s poisons the training data and cannot start at a later round (start_round = %d): use start_round = 0", a.Name(), from)
	}
	return Scheduled{Attack: a, From: from}, nil
}

// Craft sends the honest payload before From, the attack's after.
func (s Scheduled) Craft(dst []float32, v *View, honest []float32, from, to int, rng *rand.Rand) error {
	if v == nil {
		return fmt.Errorf("attack %s with start round %d: needs the round (View), got nil", s.Name(), s.From)
	}
	if v.Round < s.From {
		if err := checkLen(s.Name(), dst, honest); err != nil {
			return err
		}
		copy(dst, honest)
		return nil
	}
	return s.Attack.Craft(dst, v, honest, from, to, rng)
}

// usesPrevious is the wrapped attack's.
func (s Scheduled) usesPrevious() bool { return UsesPrevious(s.Attack) }
