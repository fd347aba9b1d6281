package consensus

import (
	"fmt"

	"github.com/trellis-fl/trellis/topology"
)

// Weights is a symmetric, doubly stochastic mixing matrix on a graph:
// W[i][j] for j in g.Out(i) is Nbr[i][position of j], W[i][i] is Self[i].
type Weights struct {
	G    *topology.Graph
	Self []float64
	Nbr  [][]float64 // aligned with G.Out(i)
}

// Metropolis returns the Metropolis–Hastings weights
// w_ij = 1/(1 + max(d_i, d_j)), w_ii = 1 − Σ_j w_ij: symmetric, hence doubly
// stochastic, on any undirected graph, with every w_ii ≥ 1/(1+d_max) > 0,
// so the iteration converges on a connected graph whatever its degrees.
func Metropolis(g *topology.Graph) (*Weights, error) {
	if !g.Undirected() {
		return nil, fmt.Errorf("consensus: Metropolis weights need an undirected graph")
	}
	n := g.N()
	w := &Weights{G: g, Self: make([]float64, n), Nbr: make([][]float64, n)}
	for i := range n {
		out := g.Out(i)
		w.Nbr[i] = make([]float64, len(out))
		s := 0.0
		for p, j := range out {
			w.Nbr[i][p] = 1 / float64(1+max(g.Degree(i), g.Degree(j)))
			s += w.Nbr[i][p]
		}
		w.Self[i] = 1 - s
	}
	return w, nil
}

// At returns w_ij (0 when j is neither i nor a neighbour).
func (w *Weights) At(i, j int) float64 {
	if i == j {
		return w.Self[i]
	}
	for p, k := range w.G.Out(i) {
		if k == j {
			return w.Nbr[i][p]
		}
	}
	return 0
}

// Mix returns W x.
func (w *Weights) Mix(x []float64) []float64 {
	y := make([]float64, len(x))
	for i := range x {
		s := w.Self[i] * x[i]
		for p, j := range w.G.Out(i) {
			s += w.Nbr[i][p] * x[j]
		}
		y[i] = s
	}
	return y
}

// maxDegree is the largest degree of g.
func maxDegree(g *topology.Graph) int {
	d := 0
	for i := range g.N() {
		d = max(d, g.Degree(i))
	}
	return d
}

// edgeKey names the undirected edge {i, j} independently of its direction,
// so both ends derive the same shared random weight from it.
func edgeKey(i, j int) uint64 {
	if i > j {
		i, j = j, i
	}
	return uint64(i)<<32 | uint64(j)
}
