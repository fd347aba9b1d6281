package strategy

import (
	"fmt"

	"github.com/trellis-fl/trellis/vec"
)

// Weighting says how a node weighs itself and its neighbors in an average.
type Weighting int

const (
	// Uniform gives the node and every neighbor that arrived 1/(1+k).
	Uniform Weighting = iota
	// MetropolisHastings gives neighbor j 1/(1+max(deg_i, deg_j)) and the
	// node the rest, a doubly stochastic matrix on undirected graphs
	// (robust-rules.md, FedAvg / D-PSGD).
	MetropolisHastings
)

// ParseWeighting reads "uniform" or "mh" / "metropolis_hastings".
func ParseWeighting(s string) (Weighting, error) {
	switch s {
	case "", "uniform":
		return Uniform, nil
	case "mh", "metropolis_hastings":
		return MetropolisHastings, nil
	}
	return 0, fmt.Errorf("unknown weighting %q (want uniform or mh)", s)
}

func (w Weighting) String() string {
	if w == MetropolisHastings {
		return "mh"
	}
	return "uniform"
}

// weights returns the self weight and one weight per arrived sender.
func (w Weighting) weights(v *View, from []int, dst []float64) (self float64, ws []float64) {
	ws = dst[:0]
	if w == Uniform {
		share := 1 / float64(1+len(from))
		for range from {
			ws = append(ws, share)
		}
		return share, ws
	}
	self = 1
	for _, j := range from {
		dj := 0
		for k, id := range v.Neighbors {
			if id == j {
				dj = v.NeighborDegree[k]
				break
			}
		}
		wij := 1 / float64(1+max(v.Degree, dj))
		ws = append(ws, wij)
		self -= wij
	}
	return self, ws
}

// mix writes self·own + Σ w_k·xs_k into dst, accumulating each coordinate
// in float64 in input order. It walks the coordinates in blocks small
// enough for the accumulators to stay in L1, so every vector is read once
// and dst written once: with 100 nodes averaging models of a million
// parameters this pass is bound by memory, not arithmetic. The vec kernels
// do the same IEEE operations as a scalar loop, four lanes at a time.
func mix(dst []float32, self float64, own []float32, ws []float64, xs []Incoming) {
	const block = 512
	var acc [block]float64
	for lo := 0; lo < len(dst); lo += block {
		hi := min(lo+block, len(dst))
		a := acc[:hi-lo]
		vec.WidenScale(a, self, own[lo:hi])
		for k, m := range xs {
			vec.WidenAxpy(a, ws[k], m.Vector[lo:hi])
		}
		vec.Narrow(dst[lo:hi], a)
	}
}
