package strategy

import (
	"cmp"
	"slices"
)

var asmrRow = Row{
	Name:    "asmr",
	Summary: "cosine-distance reachability density, cut at the largest gap of outlier factors",
	build:   func(Params, Values) (Strategy, error) { return &ASMR{}, nil },
}

// ASMR (docs/methods/toolbox.md, "Peer-side defences", ASMR):
// over the node's own model and the arrived ones, with pairwise cosine
// distances dist_ab = 1 − cos(x_a − r, x_b − r) (r = View.Start when
// present, so cosines compare updates; a zero vector has cosine 0):
//
//	rd_a = 1 / mean_{b≠a} dist_ab   (reachability density)
//	OF_a = rd_a / mean(rd)          (outlier factor)
//
// sort by OF (ties by sender id), cut at the largest gap between
// consecutive values (the lowest such gap on ties), drop the low side and
// set x_0 to the plain mean of the rest. When all OF are equal nothing is
// dropped. A mean distance of 0 is floored at 1e-12. As the spec says, the
// node's own model may be on the low side and then is not averaged in.
// No parameters. Kept senders get weight 1/|kept|, dropped ones 0.
type ASMR struct {
	c   cosineSet
	rd  []float64
	idx []int
}

func (a *ASMR) Name() string { return "asmr" }

// Share sends the trained model to every out-neighbor.
func (a *ASMR) Share(v *View) []Outgoing { return shareModel(v) }

// Combine drops the low-density side of the largest outlier-factor gap.
func (a *ASMR) Combine(v *View, in []Incoming) (map[int]float64, error) {
	self, n, err := a.c.load(v, in)
	if err != nil {
		return nil, err
	}
	for k := range a.c.keep {
		a.c.keep[k] = true
	}
	if n > 2 {
		a.cut(n)
	}
	return a.c.averageKept(v, self), nil
}

func (a *ASMR) cut(n int) {
	a.rd = resize(a.rd, n)
	var mean float64
	for i := range n {
		var s float64
		for j := range n {
			if j != i {
				s += a.c.dist[i*n+j]
			}
		}
		a.rd[i] = 1 / max(s/float64(n-1), 1e-12)
		mean += a.rd[i]
	}
	mean /= float64(n)
	for i := range a.rd {
		a.rd[i] /= mean // OF
	}
	a.idx = a.idx[:0]
	for i := range n {
		a.idx = append(a.idx, i)
	}
	slices.SortStableFunc(a.idx, func(x, y int) int { return cmp.Compare(a.rd[x], a.rd[y]) })
	best, at := 0.0, -1
	for k := 0; k+1 < n; k++ {
		if g := a.rd[a.idx[k+1]] - a.rd[a.idx[k]]; g > best {
			best, at = g, k
		}
	}
	for k := 0; k <= at; k++ {
		a.c.keep[a.idx[k]] = false
	}
}
