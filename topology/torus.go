package topology

import (
	"fmt"
	"math"
	"slices"
)

// Point is a position on the torus [0, side)².
type Point struct{ X, Y float64 }

// TorusDistance is the Euclidean distance between a and b on the torus of the
// given side (the DMTT paper, §V-C): per axis the shorter way round,
// min(|a-b|, side-|a-b|), then sqrt(dx² + dy²). Coordinates are in [0, side).
// The explicit float64 conversions forbid fusing into FMA, so the value is
// the same on every platform.
func TorusDistance(a, b Point, side float64) float64 {
	return math.Sqrt(torusDist2(a.X, a.Y, b.X, b.Y, side))
}

// torusDist2 is the squared torus distance, rounded as TorusDistance rounds it.
func torusDist2(ax, ay, bx, by, side float64) float64 {
	dx := math.Abs(ax - bx)
	dx = min(dx, side-dx)
	dy := math.Abs(ay - by)
	dy = min(dy, side-dy)
	return float64(dx*dx) + float64(dy*dy)
}

// belowThreshold returns the T with sqrt(d2) < rc ⇔ d2 < T for every float64
// d2 >= 0: the smallest float64 whose correctly rounded square root is >= rc.
// Since sqrt is monotone, comparing squared distances with T decides the
// DMTT paper's rule "distance < r_c" exactly as TorusDistance(a, b) < rc would,
// without a square root per pair. rc must be finite and >= 0.
func belowThreshold(rc float64) float64 {
	t := rc * rc
	for math.Sqrt(t) < rc {
		t = math.Nextafter(t, math.Inf(1))
	}
	for t > 0 {
		prev := math.Nextafter(t, 0)
		if math.Sqrt(prev) < rc {
			break
		}
		t = prev
	}
	return t
}

// wrap returns x + d reduced into [0, side) (the DMTT paper: r <- (r + δ) mod A).
func wrap(x, d, side float64) float64 {
	y := math.Mod(x+d, side)
	if y < 0 {
		y += side
		if y >= side { // a tiny negative y rounds up to side
			y = 0
		}
	}
	return y
}

// TorusGraph returns the undirected contact graph of points on the torus of
// the given side (the DMTT paper, §V-C): {i, j} is an edge iff
// TorusDistance(p_i, p_j) < rc, strictly, so a pair exactly rc apart is not
// linked. With connect, each node that is isolated when its turn comes, in id
// order, is linked to its nearest peer (ties to the lower id); a node linked
// by an earlier one is no longer isolated. This removes isolated nodes but
// does not make the graph connected. Cost O(n²) distance evaluations.
func TorusGraph(points []Point, side, rc float64, connect bool) (*Graph, error) {
	n := len(points)
	if err := checkN("TorusGraph", n, 1); err != nil {
		return nil, err
	}
	if !(side > 0) || math.IsInf(side, 0) {
		return nil, fmt.Errorf("topology: TorusGraph: side = %v, want a finite side > 0", side)
	}
	if !(rc >= 0) || math.IsInf(rc, 0) {
		return nil, fmt.Errorf("topology: TorusGraph: rc = %v, want a finite rc >= 0", rc)
	}
	for i, p := range points {
		if !(p.X >= 0 && p.X < side && p.Y >= 0 && p.Y < side) {
			return nil, fmt.Errorf("topology: TorusGraph: point %d = (%v, %v), want coordinates in [0, %v)", i, p.X, p.Y, side)
		}
	}
	g, _ := torusGraph(points, side, rc, connect, nil)
	return g, nil
}

// torusGraph is TorusGraph on valid input. es is scratch space; the possibly
// grown scratch is returned for reuse (build does not retain it).
func torusGraph(points []Point, side, rc float64, connect bool, es []Edge) (*Graph, []Edge) {
	n := len(points)
	es = es[:0]
	t := belowThreshold(rc)
	for i := range n {
		x, y := points[i].X, points[i].Y
		// Write every candidate and advance only past edges: no
		// unpredictable branch per pair (about half the pairs are edges).
		k := len(es)
		es = slices.Grow(es, n-i)[:k+n-i]
		for j := i + 1; j < n; j++ {
			es[k] = Edge{i, j} // generated in sorted order
			in := 0
			if torusDist2(x, y, points[j].X, points[j].Y, side) < t {
				in = 1
			}
			k += in
		}
		es = es[:k]
	}
	if connect && n > 1 {
		deg := make([]int, n)
		for _, e := range es {
			deg[e.From]++
			deg[e.To]++
		}
		added := false
		for i := range n {
			if deg[i] > 0 {
				continue
			}
			best, bestD := -1, math.Inf(1)
			for j := range n {
				if j == i {
					continue
				}
				if d := TorusDistance(points[i], points[j], side); d < bestD {
					best, bestD = j, d
				}
			}
			es = append(es, Edge{min(i, best), max(i, best)})
			deg[i]++
			deg[best]++
			added = true
		}
		if added {
			slices.SortFunc(es, compareEdges)
		}
	}
	return build(n, false, es), es[:0]
}
