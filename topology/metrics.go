package topology

import (
	"math"
	"slices"
)

// Components returns the weakly connected components of g (its connected
// components when undirected): each sorted, ordered by smallest member.
func Components(g *Graph) [][]int {
	comp := make([]int, g.n)
	for i := range comp {
		comp[i] = -1
	}
	var out [][]int
	var queue []int
	for s := range g.n {
		if comp[s] >= 0 {
			continue
		}
		c := len(out)
		comp[s] = c
		queue = append(queue[:0], s)
		members := []int{}
		for len(queue) > 0 {
			v := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			members = append(members, v)
			for _, adj := range [2][]int{g.Out(v), g.In(v)} {
				for _, w := range adj {
					if comp[w] < 0 {
						comp[w] = c
						queue = append(queue, w)
					}
				}
			}
		}
		slices.Sort(members)
		out = append(out, members)
	}
	return out
}

// NumComponents is len(Components(g)).
func NumComponents(g *Graph) int { return len(Components(g)) }

// IsConnected reports whether g is weakly connected (connected, for an
// undirected graph): one component.
func IsConnected(g *Graph) bool { return reachesAll(g, false, true) }

// IsStronglyConnected reports whether every node reaches every other along
// directed edges. For an undirected graph it equals IsConnected.
func IsStronglyConnected(g *Graph) bool {
	return reachesAll(g, true, false) && reachesAll(g, false, false)
}

// reachesAll reports whether a search from node 0 along Out edges, In edges
// or (both) all edges reaches every node.
func reachesAll(g *Graph, out, both bool) bool {
	seen := make([]bool, g.n)
	seen[0] = true
	stack := []int{0}
	count := 1
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var lists [2][]int
		switch {
		case both:
			lists = [2][]int{g.Out(v), g.In(v)}
		case out:
			lists[0] = g.Out(v)
		default:
			lists[0] = g.In(v)
		}
		for _, adj := range lists {
			for _, w := range adj {
				if !seen[w] {
					seen[w] = true
					count++
					stack = append(stack, w)
				}
			}
		}
	}
	return count == g.n
}

// StrongComponents returns the strongly connected components of g (Kosaraju,
// iterative): each sorted, ordered by smallest member. For an undirected
// graph they are its connected components.
func StrongComponents(g *Graph) [][]int {
	n := g.n
	// Pass 1: post-order of a DFS along Out edges.
	order := make([]int, 0, n)
	seen := make([]bool, n)
	type frame struct{ v, next int }
	var stack []frame
	for s := range n {
		if seen[s] {
			continue
		}
		seen[s] = true
		stack = append(stack, frame{s, 0})
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			adj := g.Out(f.v)
			if f.next < len(adj) {
				w := adj[f.next]
				f.next++
				if !seen[w] {
					seen[w] = true
					stack = append(stack, frame{w, 0})
				}
				continue
			}
			order = append(order, f.v)
			stack = stack[:len(stack)-1]
		}
	}
	// Pass 2: in reverse post-order, each search along In edges collects one
	// strongly connected component.
	comp := make([]bool, n)
	var out [][]int
	var queue []int
	for k := n - 1; k >= 0; k-- {
		s := order[k]
		if comp[s] {
			continue
		}
		comp[s] = true
		queue = append(queue[:0], s)
		members := []int{}
		for len(queue) > 0 {
			v := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			members = append(members, v)
			for _, w := range g.In(v) {
				if !comp[w] {
					comp[w] = true
					queue = append(queue, w)
				}
			}
		}
		slices.Sort(members)
		out = append(out, members)
	}
	slices.SortFunc(out, func(a, b []int) int { return a[0] - b[0] })
	return out
}

// Isolated returns, in increasing order, the nodes with no edge in either
// direction.
func Isolated(g *Graph) []int {
	var out []int
	for i := range g.n {
		if g.InDegree(i) == 0 && g.OutDegree(i) == 0 {
			out = append(out, i)
		}
	}
	return out
}

// DegreeStats summarizes a degree sequence. Std is the population standard
// deviation (divided by N).
type DegreeStats struct {
	Min, Max  int
	Mean, Std float64
}

// OutDegreeStats summarizes the out-degrees of g (the degrees, when
// undirected).
func OutDegreeStats(g *Graph) DegreeStats { return degreeStats(g, g.OutDegree) }

// InDegreeStats summarizes the in-degrees of g (the degrees, when undirected).
func InDegreeStats(g *Graph) DegreeStats { return degreeStats(g, g.InDegree) }

func degreeStats(g *Graph, deg func(int) int) DegreeStats {
	s := DegreeStats{Min: math.MaxInt}
	var sum float64
	for i := range g.n {
		d := deg(i)
		s.Min, s.Max = min(s.Min, d), max(s.Max, d)
		sum += float64(d)
	}
	s.Mean = sum / float64(g.n)
	var ss float64
	for i := range g.n {
		d := float64(deg(i)) - s.Mean
		ss += d * d
	}
	s.Std = math.Sqrt(ss / float64(g.n))
	return s
}
