package topology

import "fmt"

// switchesPerEdge is the number of attempted switches per edge in KRegular.
// The switch chain mixes rapidly on regular graphs (Cooper, Dyer, Greenhill
// 2007); 20 m attempts leave no trace of the starting circulant in practice.
const switchesPerEdge = 20

// KRegular returns a random undirected k-regular graph on n nodes, drawn from
// seed: 1 <= n, 0 <= k < n, n*k even.
//
// Method (recorded choice): start from the circulant graph — i linked to
// i±1, ..., i±k/2 (mod n), and to i+n/2 when k is odd — which is k-regular and
// simple for every valid (n, k), then run 20·m steps of the switch (double
// edge swap) Markov chain: pick edges {a,b}, {c,d} and a random pairing,
// replace them by {a,c}, {b,d} unless that creates a self-loop or a multiple
// edge. The chain preserves degrees, is irreducible on simple k-regular graphs
// (Taylor 1981) and its stationary law is uniform. Unlike the configuration
// model with rejection, whose success probability exp(-(k²-1)/4) vanishes for
// k beyond about 6, it always terminates, in O(m) time with m = n·k/2.
func KRegular(n, k int, seed uint64) (*Graph, error) {
	if err := checkN("KRegular", n, 1); err != nil {
		return nil, err
	}
	if k < 0 || k >= n {
		return nil, fmt.Errorf("topology: KRegular: k = %d, want 0 <= k < n = %d", k, n)
	}
	if n*k%2 != 0 {
		return nil, fmt.Errorf("topology: KRegular: n*k = %d*%d is odd, want even (a k-regular graph has n*k/2 edges)", n, k)
	}
	es := make([]Edge, 0, n*k/2)
	for d := 1; d <= k/2; d++ {
		for i := range n {
			es = append(es, Edge{i, (i + d) % n})
		}
	}
	if k%2 == 1 { // n is even here
		for i := range n / 2 {
			es = append(es, Edge{i, i + n/2})
		}
	}
	m := len(es)
	key := func(a, b int) uint64 {
		if a > b {
			a, b = b, a
		}
		return uint64(a)*uint64(n) + uint64(b)
	}
	// The set is only probed, never iterated, so its order cannot leak.
	present := make(map[uint64]struct{}, m)
	for _, e := range es {
		present[key(e.From, e.To)] = struct{}{}
	}
	r := stream(seed, purposeKRegular, 0)
	if m >= 2 {
		for range switchesPerEdge * m {
			x, y := r.IntN(m), r.IntN(m)
			flip := r.Uint64()&1 == 1
			if x == y {
				continue
			}
			a, b := es[x].From, es[x].To
			c, d := es[y].From, es[y].To
			if flip {
				c, d = d, c
			}
			if a == c || b == d {
				continue
			}
			if has(present, key(a, c)) || has(present, key(b, d)) {
				continue
			}
			delete(present, key(a, b))
			delete(present, key(c, d))
			present[key(a, c)] = struct{}{}
			present[key(b, d)] = struct{}{}
			es[x], es[y] = Edge{a, c}, Edge{b, d}
		}
	}
	return build(n, false, normalize(es, false)), nil
}
