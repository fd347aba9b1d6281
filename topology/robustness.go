package topology

import (
	"fmt"
	"math/bits"
	"slices"
)

// Graph r-robustness (LeBlanc, Zhang, Koutsoukos and Sundaram, IEEE JSAC
// 2013; the survey, §4.3). A set S of nodes is
// r-reachable if some node of S has at least r in-neighbors outside S; g is
// r-robust if, for every pair of nonempty disjoint sets S1 and S2, at least
// one of them is r-reachable. W-MSR-type rules that discard f extreme
// values reach consensus on (2f+1)-robust graphs, so the largest such r
// bounds the number of Byzantine neighbors a topology tolerates.
//
// For a pair, let reach(S) = max_{i∈S} |In(i) \ S|; the pair is violating for
// every r > max(reach(S1), reach(S2)), so the largest r for which g is
// r-robust is the minimum of max(reach(S1), reach(S2)) over all pairs.

// ExactRobustnessMaxN is the largest number of nodes for which
// RRobustness enumerates every pair of subsets (spec: "exact check for
// n <= 20").
const ExactRobustnessMaxN = 20

// DefaultRobustnessSamples is the number of candidate pairs the sampled
// search tries when RobustnessConfig.Samples is 0.
const DefaultRobustnessSamples = 1000

// purposeRobustness is the stream of the sampled search (stream.go).
const purposeRobustness uint64 = 6

// RobustnessConfig configures the search beyond ExactRobustnessMaxN nodes.
type RobustnessConfig struct {
	// Samples is the number of candidate pairs the sampled search tries, in
	// [0, 1e7]; 0 means DefaultRobustnessSamples.
	Samples int
	// Seed seeds the search (stream (Seed, purposeRobustness, 0)).
	Seed uint64
}

// RobustnessMethod says how a verdict was reached.
type RobustnessMethod string

const (
	// RobustnessExact: every pair of disjoint nonempty subsets was checked
	// (n <= ExactRobustnessMaxN).
	RobustnessExact RobustnessMethod = "exact"
	// RobustnessBounds: R is proved by the sufficient condition
	// (min in-degree >= floor(n/2) + r − 1) or by the exact test of
	// 1-robustness (a rooted out-branching), Upper by a violating pair the
	// deterministic candidates or the seeded sampled search found.
	RobustnessBounds RobustnessMethod = "sufficient+sampled"
)

// Robustness is the verdict of RRobustness on a graph of N nodes: g is
// R-robust (proved) and not Upper-robust (a violating pair S1, S2 is
// given); every r <= R holds, every r >= Upper fails, and r strictly between
// is unknown.
type Robustness struct {
	N      int
	Method RobustnessMethod
	// R is the largest r proved: with RobustnessExact the graph's
	// robustness; otherwise max(Sufficient, 1 if g is 1-robust), a lower
	// bound.
	R int
	// Exact reports that R is the largest r: always with RobustnessExact,
	// and with the bounds when Upper == R + 1.
	Exact bool
	// Upper is the smallest r shown to fail: S1 and S2 are disjoint,
	// nonempty, sorted, and neither has a node with Upper in-neighbors
	// outside it. It is R + 1 when Exact; never above ceil(n/2) + 1, since
	// no graph is (ceil(n/2) + 1)-robust.
	Upper  int
	S1, S2 []int
	// Sufficient is the r the sufficient condition proves: the largest r
	// with min in-degree >= floor(n/2) + r − 1, capped at ceil(n/2), or 0.
	// It is computed by both methods.
	Sufficient int
	// Samples is the number of sampled pairs tried (0 with the exact
	// method).
	Samples int
}

// Robust reports whether g is r-robust according to the verdict, and
// whether that is known: r <= R is true, r >= Upper false, otherwise
// unknown (known = false).
func (v Robustness) Robust(r int) (robust, known bool) {
	switch {
	case r <= v.R:
		return true, true
	case r >= v.Upper:
		return false, true
	}
	return false, false
}

// Reach returns max_{i∈S} |In(i) \ S|, the largest r for which the set s
// (node ids, no duplicates) is r-reachable; 0 for an empty set. It panics
// on an id outside [0, N()).
func Reach(g *Graph, s []int) int {
	in := make([]bool, g.n)
	for _, i := range s {
		g.check(i)
		in[i] = true
	}
	r := 0
	for _, i := range s {
		c := 0
		for _, j := range g.In(i) {
			if !in[j] {
				c++
			}
		}
		r = max(r, c)
	}
	return r
}

// RRobustness returns the r-robustness verdict of g: exact for
// n <= ExactRobustnessMaxN by enumerating all pairs of disjoint nonempty
// subsets, in O(n 2^n) time and 6·2^n bytes; beyond that, the sufficient
// condition and the exact 1-robustness test as lower bound, and a seeded
// search for violating pairs as upper bound, in O(Samples·(n + m)). Graphs
// of fewer than 2 nodes have no pair and are an error.
func RRobustness(g *Graph, cfg RobustnessConfig) (Robustness, error) {
	n := g.N()
	if n < 2 {
		return Robustness{}, fmt.Errorf("topology: RRobustness: n = %d, want n >= 2 (with fewer nodes there is no pair of disjoint nonempty sets)", n)
	}
	if cfg.Samples < 0 || cfg.Samples > 1e7 {
		return Robustness{}, fmt.Errorf("topology: RRobustness: samples = %d, allowed range [0, 10000000] (0 means %d)", cfg.Samples, DefaultRobustnessSamples)
	}
	v := Robustness{N: n, Sufficient: sufficientR(g)}
	if n <= ExactRobustnessMaxN {
		v.Method, v.Exact = RobustnessExact, true
		var s1, s2 uint32
		v.R, s1, s2 = exactRobustness(g)
		v.Upper, v.S1, v.S2 = v.R+1, maskNodes(s1), maskNodes(s2)
		return v, nil
	}
	v.Method = RobustnessBounds
	v.Samples = cfg.Samples
	if v.Samples == 0 {
		v.Samples = DefaultRobustnessSamples
	}
	v.R = v.Sufficient
	one, a, b := oneRobust(g)
	if one {
		v.R = max(v.R, 1)
	}
	s := newPairSearch(g)
	if !one {
		s.consider(a, b)
	}
	s.search(v.Samples, cfg.Seed)
	v.Upper = s.bestValue + 1
	v.S1, v.S2 = s.bestPair()
	v.Exact = v.Upper == v.R+1
	return v, nil
}

// sufficientR is the largest r with δ_in >= floor(n/2) + r − 1 (LeBlanc et
// al. 2013; the spec's sufficient condition), capped at ceil(n/2), or 0 when there is none.
func sufficientR(g *Graph) int {
	n := g.N()
	minIn := g.InDegree(0)
	for i := 1; i < n; i++ {
		minIn = min(minIn, g.InDegree(i))
	}
	return max(0, min(minIn-n/2+1, (n+1)/2))
}

// exactRobustness returns min over disjoint nonempty S1, S2 of
// max(reach(S1), reach(S2)) and a pair attaining it, as bit masks.
//
// reach is tabulated for all 2^n subsets; sub[T] = min over nonempty
// S ⊆ T of reach(S) (with its argmin) is a subset-minimum transform, one
// pass per bit; then the answer is min over S1 of
// max(reach(S1), sub[V \ S1]).
func exactRobustness(g *Graph) (r int, s1, s2 uint32) {
	n := g.N()
	in := make([]uint32, n)
	for i := range n {
		for _, j := range g.In(i) {
			in[i] |= 1 << j
		}
	}
	size := uint32(1) << n
	full := size - 1
	reach := make([]uint8, size)
	for s := uint32(1); s < size; s++ {
		var m uint8
		for t := s; t != 0; t &= t - 1 {
			i := bits.TrailingZeros32(t)
			m = max(m, uint8(bits.OnesCount32(in[i]&^s)))
		}
		reach[s] = m
	}
	sub := make([]uint8, size)
	arg := make([]uint32, size)
	copy(sub, reach)
	sub[0] = 255
	for s := range arg {
		arg[s] = uint32(s)
	}
	for b := range n {
		bit := uint32(1) << b
		for t := uint32(0); t < size; t++ {
			if t&bit != 0 && sub[t^bit] < sub[t] {
				sub[t], arg[t] = sub[t^bit], arg[t^bit]
			}
		}
	}
	best := 255
	for s := uint32(1); s < full; s++ {
		if m := int(max(reach[s], sub[full^s])); m < best {
			best, s1, s2 = m, s, arg[full^s]
		}
	}
	return best, s1, s2
}

// maskNodes lists the bits of m.
func maskNodes(m uint32) []int {
	var out []int
	for ; m != 0; m &= m - 1 {
		out = append(out, bits.TrailingZeros32(m))
	}
	return out
}

// oneRobust reports whether g is 1-robust: exactly when its condensation has
// a single source component (g has a rooted out-branching; for undirected
// graphs, is connected; LeBlanc et al. 2013). Otherwise two source
// components are a violating pair: no edge enters either.
func oneRobust(g *Graph) (ok bool, s1, s2 []int) {
	comps := StrongComponents(g)
	id := make([]int, g.N())
	for c, members := range comps {
		for _, i := range members {
			id[i] = c
		}
	}
	var sources [][]int
	for c, members := range comps {
		src := true
		for _, i := range members {
			for _, j := range g.In(i) {
				if id[j] != c {
					src = false
				}
			}
		}
		if src {
			sources = append(sources, members)
		}
	}
	if len(sources) == 1 {
		return true, nil, nil
	}
	return false, sources[0], sources[1]
}

// pairSearch looks for a pair of disjoint nonempty sets with small
// max(reach(S1), reach(S2)).
type pairSearch struct {
	g         *Graph
	side      []uint8 // 0 outside both, 1 in S1, 2 in S2
	count     []int   // scratch: outside in-neighbors per node
	bestValue int
	bestSide  []uint8
	order     []int // scratch for BFS
}

func newPairSearch(g *Graph) *pairSearch {
	n := g.N()
	s := &pairSearch{g: g, side: make([]uint8, n), count: make([]int, n), bestValue: n + 1, bestSide: make([]uint8, n)}
	// Deterministic candidates: the two lowest in-degree singletons, the
	// lowest one against the rest, and a balanced split (which shows that
	// no graph is (ceil(n/2) + 1)-robust).
	lo := make([]int, n)
	for i := range lo {
		lo[i] = i
	}
	slices.SortStableFunc(lo, func(a, b int) int { return g.InDegree(a) - g.InDegree(b) })
	s.consider([]int{lo[0]}, []int{lo[1]})
	s.consider([]int{lo[0]}, lo[1:])
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	s.consider(all[:n/2], all[n/2:])
	return s
}

// value returns max(reach(S1), reach(S2)) for the sets in s.side, or −1 if
// one is empty.
func (s *pairSearch) value() int {
	var r [3]int
	var size [3]int
	for i, c := range s.side {
		size[c]++
		if c == 0 {
			continue
		}
		k := 0
		for _, j := range s.g.In(i) {
			if s.side[j] != c {
				k++
			}
		}
		s.count[i] = k
		r[c] = max(r[c], k)
	}
	if size[1] == 0 || size[2] == 0 {
		return -1
	}
	return max(r[1], r[2])
}

// keep records the current sides if they beat the best pair.
func (s *pairSearch) keep() int {
	v := s.value()
	if v >= 0 && v < s.bestValue {
		s.bestValue = v
		copy(s.bestSide, s.side)
	}
	return v
}

func (s *pairSearch) consider(a, b []int) {
	clear(s.side)
	for _, i := range a {
		s.side[i] = 1
	}
	for _, i := range b {
		s.side[i] = 2
	}
	s.keep()
}

func (s *pairSearch) bestPair() (a, b []int) {
	for i, c := range s.bestSide {
		switch c {
		case 1:
			a = append(a, i)
		case 2:
			b = append(b, i)
		}
	}
	return a, b
}

// bfs fills s.order with the nodes reachable from root along edges of
// either direction, in breadth-first order with neighbors visited in a
// random order, skipping nodes with skip(i).
func (s *pairSearch) bfs(root int, r interface{ IntN(int) int }, skip func(int) bool) []int {
	n := s.g.N()
	seen := make([]bool, n)
	s.order = append(s.order[:0], root)
	seen[root] = true
	var nb []int
	for k := 0; k < len(s.order); k++ {
		v := s.order[k]
		nb = append(append(nb[:0], s.g.Out(v)...), s.g.In(v)...)
		for i := len(nb) - 1; i > 0; i-- {
			j := r.IntN(i + 1)
			nb[i], nb[j] = nb[j], nb[i]
		}
		for _, w := range nb {
			if !seen[w] && !skip(w) {
				seen[w] = true
				s.order = append(s.order, w)
			}
		}
	}
	return s.order
}

// search tries samples random candidate pairs, each improved by a short
// descent, cycling through three families: (0) a random assignment of
// every node to S1, S2 or neither; (1) a breadth-first prefix from a random
// root against the rest of the graph (a cut); (2) two breadth-first balls
// grown from two random roots (clusters). Violating pairs of sparse graphs
// are cuts and clusters; those of dense graphs are balanced splits.
func (s *pairSearch) search(samples int, seed uint64) {
	n := s.g.N()
	r := stream(seed, purposeRobustness, 0)
	none := func(int) bool { return false }
	for k := range samples {
		clear(s.side)
		switch k % 3 {
		case 0:
			p1 := r.Float64()
			p2 := (1 - p1) * r.Float64()
			for i := range s.side {
				switch u := r.Float64(); {
				case u < p1:
					s.side[i] = 1
				case u < p1+p2:
					s.side[i] = 2
				}
			}
		case 1:
			order := s.bfs(r.IntN(n), r, none)
			cut := 1 + r.IntN(max(1, len(order)-1))
			for i := range s.side {
				s.side[i] = 2
			}
			for _, i := range order[:min(cut, len(order))] {
				s.side[i] = 1
			}
		case 2:
			order := s.bfs(r.IntN(n), r, none)
			for _, i := range order[:1+r.IntN(len(order))] {
				s.side[i] = 1
			}
			root := r.IntN(n)
			if s.side[root] == 1 {
				continue
			}
			order = s.bfs(root, r, func(i int) bool { return s.side[i] == 1 })
			for _, i := range order[:1+r.IntN(len(order))] {
				s.side[i] = 2
			}
		}
		s.descend()
	}
}

// descend improves the current pair greedily: while some node attains the
// pair's value, it tries taking that node out of its set, then moving it to
// the other set, and keeps the first move that lowers (value, number of
// nodes attaining it); at most 2·ceil(log2 n) + 8 moves.
func (s *pairSearch) descend() {
	v := s.keep()
	if v < 0 {
		return
	}
	score := func(v int) (int, int) {
		c := 0
		for i, side := range s.side {
			if side != 0 && s.count[i] == v {
				c++
			}
		}
		return v, c
	}
	bv, bc := score(v)
	for range 2*bits.Len(uint(s.g.N())) + 8 {
		at := -1
		for i, side := range s.side {
			if side != 0 && s.count[i] == bv {
				at = i
				break
			}
		}
		if at < 0 {
			return
		}
		from := s.side[at]
		improved := false
		for _, to := range [2]uint8{0, 3 - from} {
			s.side[at] = to
			if nv := s.keep(); nv >= 0 {
				if nv2, nc := score(nv); nv2 < bv || (nv2 == bv && nc < bc) {
					bv, bc, improved = nv2, nc, true
					break
				}
			}
			s.side[at] = from
		}
		if !improved {
			return
		}
	}
}
