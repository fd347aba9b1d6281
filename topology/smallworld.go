package topology

import (
	"fmt"
	"math"
)

// SmallWorld returns an undirected Watts–Strogatz small-world graph (Watts
// and Strogatz 1998) drawn from seed: a ring lattice where each node links to
// its k/2 nearest neighbors on each side (k even, 2 <= k < n), then each
// lattice edge is rewired with probability beta in [0, 1].
//
// Rewiring follows the usual procedure (as in networkx): for j = 1..k/2, for
// u = 0..n-1, with probability beta the edge {u, u+j mod n} becomes {u, w}
// with w uniform among nodes that are neither u nor already linked to u
// (redrawn until one is found); the edge stays if u is linked to every node.
// The edge count n·k/2 is preserved; beta = 0 gives the lattice.
func SmallWorld(n, k int, beta float64, seed uint64) (*Graph, error) {
	if err := checkN("SmallWorld", n, 3); err != nil {
		return nil, err
	}
	if k < 2 || k >= n || k%2 != 0 {
		return nil, fmt.Errorf("topology: SmallWorld: k = %d, want an even k with 2 <= k < n = %d", k, n)
	}
	if math.IsNaN(beta) || beta < 0 || beta > 1 {
		return nil, fmt.Errorf("topology: SmallWorld: beta = %v, want 0 <= beta <= 1", beta)
	}
	key := func(a, b int) uint64 {
		if a > b {
			a, b = b, a
		}
		return uint64(a)*uint64(n) + uint64(b)
	}
	half := k / 2
	es := make([]Edge, 0, n*half)
	present := make(map[uint64]struct{}, n*half) // probed only, never iterated
	for j := 1; j <= half; j++ {
		for u := range n {
			es = append(es, Edge{u, (u + j) % n})
			present[key(u, (u+j)%n)] = struct{}{}
		}
	}
	deg := make([]int, n)
	for u := range deg {
		deg[u] = k
	}
	r := stream(seed, purposeSmallWorld, 0)
	for idx := range es { // index (j-1)*n + u: the order described above
		if r.Float64() >= beta {
			continue
		}
		u, v := es[idx].From, es[idx].To
		if deg[u] >= n-1 {
			continue
		}
		w := r.IntN(n)
		for w == u || has(present, key(u, w)) {
			w = r.IntN(n)
		}
		delete(present, key(u, v))
		present[key(u, w)] = struct{}{}
		deg[v]--
		deg[w]++
		es[idx] = Edge{u, w}
	}
	return build(n, false, normalize(es, false)), nil
}

func has(set map[uint64]struct{}, k uint64) bool {
	_, ok := set[k]
	return ok
}
