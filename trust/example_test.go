package trust

import (
	"fmt"
	"testing"
)

// Example_topologyLiar drives 10 nodes on the paper's mobility graph
// (A = 100, r_c = 40, v_max = 8, seed 42) for 20 rounds with one topology
// liar, node 3, in two variants: omission (it claims only the coalition,
// here nobody, so the self-inclusion check fires wherever it delivers) and
// inflation (it claims its true neighbors plus links to every other node).
// Printed every 5 rounds: the mean trust honest nodes hold in the honest
// peers and in the liar among their current neighbors (the pairs the gate
// τ_trust = 0.25 judges), and over all pairs.
//
// The omission liar falls to about 0.1 among the neighbors it lies to
// (x = 1 every round it delivers, and its contradicted claims earn no
// positive evidence); over all pairs it falls more slowly, since a node
// that never received anything from the liar has only its forwarded,
// consistent-looking claims to judge. The inflation liar is not screened:
// its claims list every honest neighbor (d = 1 wherever it delivers), and
// the paper's only evidence against a fabricated link, z, needs χ < 0.4,
// i.e. the link's other endpoint outweighing the liar 1.5 to 1 — with
// equal trust and hops χ = 0.5, so z fires only when the liar's claim came
// over more hops than the contradicting one. A claim listing a node that
// heard nothing from its source is, by the paper, no evidence either way.
func Example_topologyLiar() {
	for _, v := range []struct {
		name string
		b    behavior
	}{{"omission", omission}, {"inflation", inflation}} {
		behave := make([]behavior, 10)
		behave[3] = v.b
		nw := newNetwork(exampleTB{}, mobility(exampleTB{}, 10, 42), 42, behave)
		fmt.Println(v.name)
		for r := 1; r <= 20; r++ {
			nw.step(exampleTB{})
			if r%5 == 0 {
				nh, nl := nw.neighborTrust()
				ah, al := nw.meanTrust()
				fmt.Printf("  round %2d  neighbors: honest %.3f liar %.3f   all pairs: honest %.3f liar %.3f\n", r, nh, nl, ah, al)
			}
		}
	}
	// Output:
	// omission
	//   round  5  neighbors: honest 0.924 liar 0.192   all pairs: honest 0.814 liar 0.374
	//   round 10  neighbors: honest 0.949 liar 0.250   all pairs: honest 0.875 liar 0.238
	//   round 15  neighbors: honest 0.979 liar 0.087   all pairs: honest 0.916 liar 0.238
	//   round 20  neighbors: honest 0.972 liar 0.129   all pairs: honest 0.938 liar 0.147
	// inflation
	//   round  5  neighbors: honest 0.924 liar 0.702   all pairs: honest 0.820 liar 0.461
	//   round 10  neighbors: honest 0.949 liar 0.321   all pairs: honest 0.885 liar 0.465
	//   round 15  neighbors: honest 0.979 liar 0.406   all pairs: honest 0.925 liar 0.427
	//   round 20  neighbors: honest 0.973 liar 0.604   all pairs: honest 0.943 liar 0.576
}

// exampleTB lets the test network run in an example: any driver error
// panics, failing the example.
type exampleTB struct{ testing.TB }

func (exampleTB) Helper()           {}
func (exampleTB) Fatal(args ...any) { panic(fmt.Sprint(args...)) }
