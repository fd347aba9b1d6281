package worstcase

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/topology"
)

// Place returns k Byzantine nodes of g, sorted, for a placement of
// config.Placements other than "random" (which is adversary.fraction's
// seeded draw and needs no graph). Every placement is a deterministic
// function of the graph; ties go to the lower id.
//
//   - highest_degree: the k nodes of largest out-degree, the ones whose
//     payloads reach the most honest nodes.
//   - around_lowest_degree: the honest node of lowest in-degree is the
//     target; the Byzantine nodes are the nodes nearest to it along
//     in-edges (its in-neighbours first, then theirs, breadth first), so
//     that one honest node has as many Byzantine inputs as k allows.
//   - kappa_max: the set that makes the rules' robustness coefficient
//     largest over the honest neighbourhoods (kappaScore).
func Place(kind string, g *topology.Graph, k int) ([]int, error) {
	n := g.N()
	if k < 1 || k >= n {
		return nil, fmt.Errorf("placement %s: %d Byzantine nodes of %d: want 1 ≤ k < n", kind, k, n)
	}
	var set []int
	switch kind {
	case "highest_degree":
		ids := make([]int, n)
		for i := range ids {
			ids[i] = i
		}
		slices.SortStableFunc(ids, func(a, b int) int { return cmp.Compare(g.OutDegree(b), g.OutDegree(a)) })
		set = ids[:k]
	case "around_lowest_degree":
		set = aroundLowest(g, k)
	case "kappa_max":
		set = kappaMax(g, k)
	default:
		return nil, fmt.Errorf("placement %q: want highest_degree, around_lowest_degree or kappa_max (random is adversary.fraction's draw)", kind)
	}
	set = slices.Clone(set)
	slices.Sort(set)
	return set, nil
}

// aroundLowest is the around_lowest_degree placement.
func aroundLowest(g *topology.Graph, k int) []int {
	target := 0
	for i := range g.N() {
		if g.InDegree(i) < g.InDegree(target) {
			target = i
		}
	}
	seen := make([]bool, g.N())
	seen[target] = true
	var set []int
	level := []int{target}
	for len(level) > 0 && len(set) < k {
		var next []int
		for _, v := range level {
			for _, u := range g.In(v) {
				if !seen[u] {
					seen[u] = true
					next = append(next, u)
				}
			}
		}
		slices.Sort(next)
		for _, u := range next {
			if len(set) < k {
				set = append(set, u)
			}
		}
		level = next
	}
	// A graph where fewer than k nodes reach the target: the rest by id.
	for i := 0; len(set) < k; i++ {
		if !seen[i] {
			seen[i] = true
			set = append(set, i)
		}
	}
	return set
}

// kappaScore rates a Byzantine set by what it does to the honest nodes'
// aggregations. An honest node i aggregates n_i = |In(i)| + 1 inputs, b_i
// of them Byzantine. The robustness coefficient κ of a rule — how far its
// output may be from the honest mean relative to the honest spread, the κ̂
// `trellis bench rules` measures — is at least b/(n − 2b) for every rule,
// a bound that NNM followed by the trimmed mean reaches up to a constant
// (Allouah et al., "Fixing by Mixing", AISTATS 2023), and no rule bounds
// it once b ≥ n/2. The score is the number of honest nodes with
// b_i ≥ n_i/2 (broken), then Σ b_i/(n_i − 2b_i) over the others: larger
// is worse for the defence.
func kappaScore(g *topology.Graph, byz []bool) (broken int, sum float64) {
	for i := range g.N() {
		if byz[i] {
			continue
		}
		n, b := g.InDegree(i)+1, 0
		for _, j := range g.In(i) {
			if byz[j] {
				b++
			}
		}
		if 2*b >= n {
			broken++
			continue
		}
		sum += float64(b) / float64(n-2*b)
	}
	return broken, sum
}

// better reports whether score (b1, s1) beats (b2, s2); the sums compare
// with a relative margin so that a rounding difference never decides.
func better(b1 int, s1 float64, b2 int, s2 float64) bool {
	if b1 != b2 {
		return b1 > b2
	}
	return s1 > s2*(1+1e-12)+1e-15
}

// kappaMax maximizes kappaScore over sets of k nodes: greedily, one node
// at a time, then by swapping a member for a non-member while a swap
// improves the score (a local maximum; exact search is C(n, k) sets).
func kappaMax(g *topology.Graph, k int) []int {
	n := g.N()
	byz := make([]bool, n)
	for range k {
		bestI, bestB, bestS := -1, 0, 0.0
		for i := range n {
			if byz[i] {
				continue
			}
			byz[i] = true
			b, s := kappaScore(g, byz)
			byz[i] = false
			if bestI < 0 || better(b, s, bestB, bestS) {
				bestI, bestB, bestS = i, b, s
			}
		}
		byz[bestI] = true
	}
	curB, curS := kappaScore(g, byz)
	for pass := 0; pass < n*k; pass++ {
		improved := false
		for out := 0; out < n && !improved; out++ {
			if !byz[out] {
				continue
			}
			for in := 0; in < n && !improved; in++ {
				if byz[in] {
					continue
				}
				byz[out], byz[in] = false, true
				b, s := kappaScore(g, byz)
				if better(b, s, curB, curS) {
					curB, curS, improved = b, s, true
				} else {
					byz[out], byz[in] = true, false
				}
			}
		}
		if !improved {
			break
		}
	}
	var set []int
	for i, b := range byz {
		if b {
			set = append(set, i)
		}
	}
	return set
}
