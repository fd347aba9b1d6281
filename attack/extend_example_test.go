package attack_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/trellis-fl/trellis/attack"
)

// reversedMean is an attack written outside the package
// (docs/guides/extending.md, "Adding an attack"): every Byzantine node sends
// the round's honest mean, reversed and scaled by s. It is omniscient: it
// reads the honest payloads from the View the driver builds each round.
type reversedMean struct{ s float32 }

func (reversedMean) Name() string { return "reversed_mean" }

// Craft writes what node from sends node to in place of its honest vector.
// It returns an error, never panics, on a View it cannot use.
func (a reversedMean) Craft(dst []float32, v *attack.View, honest []float32, from, to int, rng *rand.Rand) error {
	if v == nil || len(v.Honest) == 0 {
		copy(dst, honest) // no honest payload this round: behave honestly
		return nil
	}
	for j := range dst {
		var sum float64
		for _, x := range v.Honest {
			if len(x) != len(dst) {
				return fmt.Errorf("reversed_mean: %w", attack.ErrLength)
			}
			sum += float64(x[j])
		}
		dst[j] = -a.s * float32(sum/float64(len(v.Honest)))
	}
	return nil
}

// Example_newAttack is the guide's attack: the honest payloads of the round
// are (1, 10) and (3, 14), whose mean is (2, 12); scaled by −2 the attackers
// send (−4, −24). Without a View (a driver that shows it nothing) the node
// sends its own vector unchanged. Any attack.Attack runs in the simulator as
// experiment.Setup's Attack; a config names it once it is registered.
func Example_newAttack() {
	var a attack.Attack = reversedMean{s: 2}
	v := &attack.View{Round: 3, Honest: [][]float32{{1, 10}, {3, 14}}}
	dst := make([]float32, 2)
	own := []float32{0.5, 0.5}
	for _, view := range []*attack.View{v, nil} {
		if err := a.Craft(dst, view, own, 4, 0, nil); err != nil { // from node 4 to node 0
			fmt.Println(err)
			return
		}
		fmt.Println(a.Name(), dst)
	}
	// Output:
	// reversed_mean [-4 -24]
	// reversed_mean [0.5 0.5]
}
