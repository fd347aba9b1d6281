package worstcase

import (
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/topology"
)

// TestPlacementsByHand: the placements on graphs small enough to work out
// by hand.
func TestPlacementsByHand(t *testing.T) {
	star, err := topology.Star(6, 0)
	if err != nil {
		t.Fatal(err)
	}
	path, err := topology.FromEdges(5, []topology.Edge{{From: 0, To: 1}, {From: 1, To: 2}, {From: 2, To: 3}, {From: 3, To: 4}}, false)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		g    *topology.Graph
		kind string
		k    int
		want []int
	}{
		// The hub reaches every leaf.
		{"star", star, "highest_degree", 1, []int{0}},
		// Leaf 1 has the lowest degree (1, the lowest id of five): its
		// neighbour, the hub, then the hub's other neighbours by id.
		{"star", star, "around_lowest_degree", 1, []int{0}},
		{"star", star, "around_lowest_degree", 3, []int{0, 2, 3}},
		// Path 0-1-2-3-4: nodes 1, 2, 3 have degree 2, the first is 1.
		{"path", path, "highest_degree", 2, []int{1, 2}},
		// Node 0 (degree 1) is the target: 1, then 2.
		{"path", path, "around_lowest_degree", 2, []int{1, 2}},
		// k = 1: node 1 breaks node 0 (1 of its 2 inputs) and gives node 2
		// b/(n − 2b) = 1/(3 − 2) = 1: score (1 broken, 1); node 3 scores the
		// same and has the higher id; node 2 scores (0, 2).
		{"path", path, "kappa_max", 1, []int{1}},
		// k = 2: {1, 3} break nodes 0 and 4 and half of node 2's inputs
		// (2 of 3 ≥ 3/2): 3 broken, the most any pair reaches.
		{"path", path, "kappa_max", 2, []int{1, 3}},
	}
	for _, c := range cases {
		got, err := Place(c.kind, c.g, c.k)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s %s k=%d: %v, %v; want %v", c.name, c.kind, c.k, got, err, c.want)
		}
	}
	if _, err := Place("kappa_max", path, 5); err == nil {
		t.Error("5 Byzantine nodes of 5 accepted")
	}
	if _, err := Place("random", path, 1); err == nil {
		t.Error("Place computed the random placement, which is the seed's draw")
	}
}

// TestKappaMaxAgainstExhaustiveSearch: on small random graphs no single
// swap improves the κ-maximizing placement (it is a local maximum), and in
// most cases it scores as high as the best of all C(n, k) sets.
func TestKappaMaxAgainstExhaustiveSearch(t *testing.T) {
	globalBest, runs := 0, 0
	for seed := uint64(1); seed <= 20; seed++ {
		g, err := topology.ErdosRenyi(9, 0.35, seed)
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k <= 3; k++ {
			set, err := Place("kappa_max", g, k)
			if err != nil {
				t.Fatal(err)
			}
			byz := make([]bool, 9)
			for _, b := range set {
				byz[b] = true
			}
			gb, gs := kappaScore(g, byz)
			bestB, bestS := gb, gs
			var walk func(from, left int)
			walk = func(from, left int) {
				if left == 0 {
					b, s := kappaScore(g, byz)
					if better(b, s, bestB, bestS) {
						bestB, bestS = b, s
					}
					return
				}
				for i := from; i < 9; i++ {
					byz[i] = true
					walk(i+1, left-1)
					byz[i] = false
				}
			}
			clear(byz)
			walk(0, k)
			runs++
			if bestB == gb && bestS <= gs*(1+1e-12)+1e-15 {
				globalBest++
			}
			// A local maximum at least: no swap of one member improves.
			for _, b := range set {
				byz[b] = true
			}
			for out := range 9 {
				for in := range 9 {
					if !byz[out] || byz[in] {
						continue
					}
					byz[out], byz[in] = false, true
					if b, s := kappaScore(g, byz); better(b, s, gb, gs) {
						t.Errorf("seed %d k=%d: swapping %d for %d improves %v", seed, k, out, in, set)
					}
					byz[out], byz[in] = true, false
				}
			}
			clear(byz)
		}
	}
	// The greedy search with swaps finds the exhaustive optimum in most
	// cases; a local maximum elsewhere.
	if globalBest < runs*3/4 {
		t.Errorf("the κ-maximizing placement is the exhaustive optimum in %d of %d cases", globalBest, runs)
	}
	t.Logf("exhaustive optimum in %d of %d cases", globalBest, runs)
}
