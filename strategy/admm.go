package strategy

import (
	"math"
	"slices"

	"github.com/trellis-fl/trellis/nn"
)

// TagADMM tags ADMM's per-neighbor message ρ·x_i + w_ij.
const TagADMM = "admm"

// ADMMRho is ADMM's default penalty ρ; the survey leaves it free.
const ADMMRho = 1.0

var admmRow = Row{
	Name:    "admm",
	Summary: "decentralized consensus ADMM with penalty rho",
	Options: []Option{{Name: "rho", Default: ADMMRho, Lo: 0, Hi: math.Inf(1), LoOpen: true, HiOpen: true}},
	build: func(_ Params, o Values) (Strategy, error) {
		return &ADMM{Rho: o["rho"]}, nil
	},
}

// ADMM is distributed ADMM on the edge-consensus form of the problem
// (survey §2.3, Eqs. 12–14, Algorithm 3): min Σ_i f_i(x_i) subject to x_i =
// y_ij = y_ji for every edge, with multipliers w_ij and penalty ρ. Written
// out from Eqs. 13–14 (the survey's Algorithm 3 is garbled in extraction),
// node i in a round:
//
//  1. x-update (local training): x_i = argmin_x f_i(x) + ⟨x, Σ_j (w_ij −
//     ρ·y_ij)⟩ + (ρ|N_i|/2)·||x||², the same minimizer as f_i(x) +
//     (ρ|N_i|/2)·||x − r_i||² with r_i = mean_j (y_ij − w_ij/ρ): a proximal
//     term, which LocalTraining hands to local training (ProxMu, ProxRef)
//     so the argmin is taken inexactly by the round's SGD epochs, as the
//     survey notes agents with limited resources do;
//  2. sends m_ij = ρ·x_i + w_ij to each neighbor j;
//  3. y-update for each edge heard: y_ij = (m_ij + m_ji)/(2ρ), the
//     minimizer of the augmented Lagrangian over the shared y_ij = y_ji;
//  4. w-update: w_ij ← w_ij + ρ·(x_i − y_ij).
//
// With w_ij + w_ji = 0 at the start (w = 0), it stays 0, so y_ij = (x_i +
// x_j)/2. A neighbor met for the first time starts from y_ij = the node's
// model at the start of the round and w_ij = 0; a neighbor not heard in a
// round keeps its state. The model after Combine is x_i. Weights give each
// neighbor heard 1/(2|N_i|): the share of its message in the next proximal
// reference r_i (y_ij holds half of it). ADMM assumes honest neighbors.
type ADMM struct {
	// Rho is the penalty ρ > 0.
	Rho   float64
	edges map[int]*admmEdge
	ref   []float32
	msg   [][]float32
}

// admmEdge is one edge's state, in float32 (2d values per neighbor) and
// updated in float64.
type admmEdge struct {
	y, w []float32
}

// Name implements Strategy.
func (*ADMM) Name() string { return "admm" }

// edge returns the state of the edge to j, created from start.
func (a *ADMM) edge(j int, start []float32) *admmEdge {
	if a.edges == nil {
		a.edges = map[int]*admmEdge{}
	}
	e := a.edges[j]
	if e == nil || len(e.y) != len(start) {
		e = &admmEdge{y: slices.Clone(start), w: make([]float32, len(start))}
		a.edges[j] = e
	}
	return e
}

// LocalTraining implements LocalTrainer: the x-update's proximal term
// (ρ|N_i|/2)·||x − r_i||², r_i = mean_j (y_ij − w_ij/ρ) over the round's
// neighbors. Without neighbors it is plain local training.
func (a *ADMM) LocalTraining(v *View, base nn.TrainConfig) nn.TrainConfig {
	if len(v.Neighbors) == 0 {
		return base
	}
	d := len(v.Start)
	a.ref = resize(a.ref, d)
	r := make([]float64, d)
	for _, j := range v.Neighbors {
		e := a.edge(j, v.Start)
		for k := range r {
			r[k] += float64(e.y[k]) - float64(e.w[k])/a.Rho
		}
	}
	for k := range r {
		a.ref[k] = float32(r[k] / float64(len(v.Neighbors)))
	}
	base.ProxMu = a.Rho * float64(len(v.Neighbors))
	base.ProxRef = a.ref
	return base
}

// Share sends m_ij = ρ·x_i + w_ij to each neighbor.
func (a *ADMM) Share(v *View) []Outgoing {
	x := v.Model.Params()
	out := make([]Outgoing, 0, len(v.Neighbors))
	for len(a.msg) < len(v.Neighbors) {
		a.msg = append(a.msg, nil)
	}
	for n, j := range v.Neighbors {
		e := a.edge(j, v.Start)
		m := resize(a.msg[n], len(x))
		for k, xv := range x {
			m[k] = float32(a.Rho*float64(xv) + float64(e.w[k]))
		}
		a.msg[n] = m
		out = append(out, Outgoing{To: j, Tag: TagADMM, Vector: m})
	}
	return out
}

// Combine runs the y- and w-updates for every neighbor heard; the model
// stays x_i.
func (a *ADMM) Combine(v *View, in []Incoming) (map[int]float64, error) {
	x := v.Model.Params()
	got, err := withTag(in, TagADMM, len(x))
	if err != nil {
		return nil, err
	}
	weights := make(map[int]float64, len(got))
	for _, m := range got {
		if !slices.Contains(v.Neighbors, m.From) {
			continue // not an edge of this round
		}
		e := a.edge(m.From, v.Start)
		for k, xv := range x {
			// The message sent, as sent (float32), so that both ends of
			// the edge compute the same y.
			mine := float64(float32(a.Rho*float64(xv) + float64(e.w[k])))
			y := (mine + float64(m.Vector[k])) / (2 * a.Rho)
			e.y[k] = float32(y)
			e.w[k] = float32(float64(e.w[k]) + a.Rho*(float64(xv)-y))
		}
		weights[m.From] = 1 / float64(2*len(v.Neighbors))
	}
	return weights, nil
}
