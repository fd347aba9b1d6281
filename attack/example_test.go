package attack_test

import (
	"fmt"

	"github.com/trellis-fl/trellis/attack"
)

// Example crafts what a Byzantine node sends in place of its honest vector
// (0.5, −2, 3): sign_flip sends its negation, scaling (default factor 10)
// ten times it. Neither reads the other nodes' vectors, so the View is nil.
func Example() {
	honest := []float32{0.5, -2, 3}
	dst := make([]float32, len(honest))
	for _, name := range []string{"sign_flip", "scaling"} {
		a, err := attack.New(name, attack.Params{})
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := a.Craft(dst, nil, honest, 0, 1, nil); err != nil { // from node 0 to node 1
			fmt.Println(err)
			return
		}
		fmt.Println(name, dst)
	}
	// Output:
	// sign_flip [-0.5 2 -3]
	// scaling [5 -20 30]
}

// ExampleALIE is "a little is enough" with a fixed z = 1.5: the honest
// vectors of the round are (1, 10) and (3, 14), whose per-coordinate mean
// is (2, 12) and population standard deviation (1, 2), so the attackers
// send μ + zσ = (3.5, 15), or with Minus μ − zσ = (0.5, 9). The attack
// reads the honest vectors from the View the driver builds each round.
func ExampleALIE() {
	v := &attack.View{Round: 0, Honest: [][]float32{{1, 10}, {3, 14}}}
	own := []float32{0, 0} // ALIE ignores the attacker's own vector
	dst := make([]float32, 2)
	for _, minus := range []bool{false, true} {
		a, err := attack.New("alie", attack.Params{Z: 1.5, Minus: minus})
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := a.Craft(dst, v, own, 2, 0, nil); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("minus", minus, dst)
	}
	// Output:
	// minus false [3.5 15]
	// minus true [0.5 9]
}
