package strategy

import (
	"errors"
	"math"
	"slices"
)

// Tags of gradient tracking with state decomposition.
const (
	TagAlpha  = "alpha"   // the tracker's exchanged share α_i
	TagSDEdge = "sd_edge" // round 0: a per-neighbour draw u_ij for the private edge weight
)

// SDSpread is the default half-width R of α_i(0): small against a model's
// weights, since the node's first model step is −α_i(0) (the kick fades as
// the 2n shares mix).
const SDSpread = 0.01

// sdLo is the lower end of the random weights a_ij(0) and a_{i,αβ}(k),
// drawn from [sdLo, 1] as in consensus.StateDecomposition.
const sdLo = 0.1

var trackingSDRow = Row{
	Name:    "gradient_tracking_sd",
	Summary: "gradient tracking with the tracker split into two shares, only α sent, the update entering β only (the survey, §3.4.2, ref. [122]): honest-but-curious neighbours that miss one of a node's neighbours cannot tell f_i from f_i + ⟨δ, x⟩; no Byzantine defence; Metropolis–Hastings weights",
	Options: []Option{{Name: "spread", Default: SDSpread, Lo: 0, Hi: math.Inf(1), HiOpen: true}},
	build: func(_ Params, o Values) (Strategy, error) {
		return &GradientTrackingSD{Spread: o["spread"]}, nil
	},
}

// GradientTrackingSD is decentralized gradient tracking whose tracker is
// state-decomposed (the survey, §3.2.2 and §3.4.2, Table 6: ref. [122],
// two shares, built on the gradient tracking of ref. [123]; the
// decomposition is ref. [164]'s, consensus.StateDecomposition). Node i
// keeps two shares α_i and β_i of its tracker; it sends α_i (and its
// start-of-round model, as gradient tracking does), never β_i; β_i talks
// only to the node's own α_i, and the local update d_i enters β_i only:
//
//	round 0:  α_i = R·U[−1, 1] (independent of d_i),  β_i = 2 d_i^0 − α_i
//	later:    β_i += 2 (d_i^t − d_i^{t−1})
//	w_i ← Σ_j W_ij w_j^start − α_i
//	α_i ← α_i + Σ_j ε_ij a_ij (α_j − α_i) + ε_i c_i (β_i − α_i)
//	β_i ← β_i + ε_i c_i (α_i − β_i)
//
// with W the Metropolis–Hastings matrix, ε_ij = 1/(1 + max(deg_i, deg_j)),
// ε_i = 1/(1 + deg_i), a_ij = 1 but in round 0, where it is drawn per
// coordinate from [0.1, 1] by the edge's two ends together and nobody else
// (a_ij = 0.1 + 0.9·frac(u_ij + u_ji), each end sending its u to the other
// alone), and c_i = a_{i,αβ} drawn per coordinate from [0.1, 1] afresh
// every round, known to i only. The 2n-share iteration is symmetric and
// row-stochastic, hence doubly stochastic: Σ_i (α_i + β_i) = 2 Σ_i d_i^t at
// every round, each share tracks the mean update, and a fixed point has
// mean update 0: the optimum of Σ_i f_i, as plain gradient tracking.
// Coordinates are independent (every weight is drawn per coordinate).
//
// Assumes a static undirected graph and messages that arrive: a share
// whose message is lost breaks the conservation above, as it does for
// GradientTracking's tracker.
type GradientTrackingSD struct {
	// Spread is R, the half-width of α_i(0).
	Spread float64
	// Alpha0, Edge and Coupling, when set, replace the drawn α_i(0), the
	// a_ij(0) of neighbour j and the c_i of a round (per coordinate); the
	// draws are made anyway, so the node's stream stays in step. The
	// privacy test sets them to build a second execution with the same
	// messages, as consensus.StateDecomposition's test does.
	Alpha0   []float64
	Edge     map[int][]float64
	Coupling map[int][]float64

	started     bool
	alpha, beta []float64 // the shares after the last round's mix
	dPrev       []float32
	d           []float32
	send        []float32 // α_i as sent this round
	u           map[int][]float32
	c, next     []float64
	ws          []float64
	from        []int
}

// Name implements Strategy.
func (*GradientTrackingSD) Name() string { return "gradient_tracking_sd" }

// Share adds the round's update to β (in round 0 it splits it into the two
// shares) and sends the start-of-round model and α; in round 0 it also
// sends each neighbour its half u_ij of the private edge weight.
func (g *GradientTrackingSD) Share(v *View) []Outgoing {
	g.d = localUpdate(g.d, v.Start, v.Model.Params())
	n := len(g.d)
	var out []Outgoing
	if !g.started {
		g.alpha, g.beta = make([]float64, n), make([]float64, n)
		for k := range g.alpha {
			a := g.Spread * (2*v.RNG.Float64() - 1)
			if g.Alpha0 != nil {
				a = g.Alpha0[k]
			}
			g.alpha[k] = a
			g.beta[k] = 2*float64(g.d[k]) - a
		}
		g.dPrev = slices.Clone(g.d)
		g.u = make(map[int][]float32, len(v.Neighbors))
		for _, j := range v.Neighbors {
			u := make([]float32, n)
			for k := range u {
				u[k] = float32(v.RNG.Float64())
			}
			g.u[j] = u
			out = append(out, Outgoing{To: j, Tag: TagSDEdge, Vector: u})
		}
		g.started = true
	} else {
		for k := range g.beta {
			g.beta[k] += 2 * (float64(g.d[k]) - float64(g.dPrev[k]))
		}
		copy(g.dPrev, g.d)
	}
	// α is sent in float32; the node uses the value sent, as its
	// neighbours do, and moves the rounding into β, so Σ_i (α_i + β_i)
	// stays what it was.
	g.send = resize(g.send, n)
	for k, a := range g.alpha {
		s := float32(a)
		g.send[k] = s
		g.alpha[k] = float64(s)
		g.beta[k] += a - float64(s)
	}
	return append(out,
		Outgoing{To: Broadcast, Tag: TagStart, Vector: v.Start},
		Outgoing{To: Broadcast, Tag: TagAlpha, Vector: g.send})
}

// Combine mixes the models, steps by −α_i, and runs one iteration of the
// 2n-share consensus. A neighbour counts only if both its vectors arrived.
func (g *GradientTrackingSD) Combine(v *View, in []Incoming) (map[int]float64, error) {
	w := v.Model.Params()
	if !g.started {
		return nil, errors.New("gradient_tracking_sd: Combine before Share")
	}
	starts, err := withTag(in, TagStart, len(w))
	if err != nil {
		return nil, err
	}
	alphas, err := withTag(in, TagAlpha, len(w))
	if err != nil {
		return nil, err
	}
	edges, err := withTag(in, TagSDEdge, len(w))
	if err != nil {
		return nil, err
	}
	starts, alphas = pairUp(starts, alphas)
	weights := combineAverage(v, MetropolisHastings, w, v.Start, starts, &g.ws, &g.from)
	for k, a := range g.send {
		w[k] -= a
	}

	// The coupling weights are drawn whatever replaces them (the stream
	// stays in step).
	g.c = resize(g.c, len(w))
	for k := range g.c {
		g.c[k] = sdLo + (1-sdLo)*v.RNG.Float64()
	}
	if c := g.Coupling[v.Round]; c != nil {
		copy(g.c, c)
	}
	epsSelf := 1 / float64(1+v.Degree)
	// α's flows from the neighbours first, from the shares of the start of
	// the iteration; then the α–β exchange, also from those.
	next := append(g.next[:0], g.alpha...)
	for _, m := range alphas {
		dj := 0
		if k := slices.Index(v.Neighbors, m.From); k >= 0 {
			dj = v.NeighborDegree[k]
		}
		eps := 1 / float64(1+max(v.Degree, dj))
		a := g.edgeWeights(m.From, edges)
		for k, aj := range m.Vector {
			wk := 1.0
			if a != nil {
				wk = a[k]
			}
			next[k] += eps * wk * (float64(aj) - g.alpha[k])
		}
	}
	for k := range next {
		f := epsSelf * g.c[k] * (g.beta[k] - g.alpha[k])
		next[k] += f
		g.beta[k] -= f
	}
	g.alpha, g.next = next, g.alpha
	g.u = nil // a_ij is drawn for the first iteration only
	return weights, nil
}

// edgeWeights returns a_ij(0) for neighbour j, per coordinate, when this
// is the first iteration and both halves are known (or a replacement is
// set); nil means a_ij = 1.
func (g *GradientTrackingSD) edgeWeights(j int, edges []Incoming) []float64 {
	if e := g.Edge[j]; e != nil && g.u != nil {
		return e
	}
	mine := g.u[j]
	if mine == nil {
		return nil
	}
	for _, m := range edges {
		if m.From != j {
			continue
		}
		a := make([]float64, len(mine))
		for k := range a {
			s := float64(mine[k]) + float64(m.Vector[k]) // the same sum at both ends
			a[k] = sdLo + (1-sdLo)*(s-math.Floor(s))
		}
		return a
	}
	return nil
}

// SaveState implements Stateful: the two shares after the last mix and
// the previous local update.
func (g *GradientTrackingSD) SaveState() ([]byte, error) {
	w := newStateWriter(g.Name())
	w.bool(g.started)
	writeF64s(w, g.alpha)
	writeF64s(w, g.beta)
	w.floats(g.dPrev)
	return w.b, nil
}

// LoadState implements Stateful.
func (g *GradientTrackingSD) LoadState(b []byte) error {
	r, err := newStateReader(b, g.Name())
	if err != nil {
		return err
	}
	g.started = r.bool()
	g.alpha, g.beta = readF64s(r), readF64s(r)
	g.dPrev = r.floats()
	if r.err == nil && (len(g.beta) != len(g.alpha) || len(g.dPrev) != len(g.alpha)) {
		r.err = errors.New("share vectors of different lengths")
	}
	return r.done()
}
