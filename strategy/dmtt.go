package strategy

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/trellis-fl/trellis/agreement"
	"github.com/trellis-fl/trellis/vec"
)

// DMTT's defaults (the DMTT paper, §IV-E).
const (
	DMTTNEval      = 128 // validation samples per evaluation
	DMTTL1         = 0.4 // λ1: model compatibility s_model
	DMTTL2         = 0.3 // λ2: topology trust T_topo
	DMTTL3         = 0.2 // λ3: link reliability p_ij
	DMTTL4         = 0.1 // λ4: communication cost c_comm
	DMTTGamma      = 0.6 // model-compatibility gate: s_ij ≥ γ s_ii
	DMTTTauTrust   = 0.25
	DMTTKappa      = 5.0 // norm-sanity gate: ||θ_j|| ≤ κ ||θ_i||
	DMTTBudget     = 5   // B: collaborators kept
	DMTTSelfWeight = 0.5 // ω
)

// DMTTScore is the collaboration score q = λ1 s + λ2 T + λ3 p − λ4 c
// (the DMTT paper, §IV-E).
func DMTTScore(s, t, p, c float64, l [4]float64) float64 {
	return l[0]*s + l[1]*t + l[2]*p - l[3]*c
}

// The candidate gates of the learning step (the DMTT paper, §IV-E), as bits of DMTTGateFailures' result.
const (
	GateModel = 1 << iota // model compatibility s < γ s_ii
	GateTrust             // topology trust T < τ_trust
	GateNorm              // norm sanity ||θ_j|| > κ ||θ_i||
)

// DMTTGateFailures returns the learning step's gates a candidate fails, as a
// mask of GateModel, GateTrust and GateNorm (0: it passes all three).
func DMTTGateFailures(s, sii, t, norm, ownNorm, gamma, tauTrust, kappa float64) int {
	m := 0
	if !(s >= gamma*sii) {
		m |= GateModel
	}
	if !(t >= tauTrust) {
		m |= GateTrust
	}
	if !(norm <= kappa*ownNorm) {
		m |= GateNorm
	}
	return m
}

// DMTTGates reports whether a candidate passes the three gates of the learning step:
// model compatibility s ≥ γ s_ii, topology trust T ≥ τ_trust and norm
// sanity ||θ_j|| ≤ κ ||θ_i||.
func DMTTGates(s, sii, t, norm, ownNorm, gamma, tauTrust, kappa float64) bool {
	return DMTTGateFailures(s, sii, t, norm, ownNorm, gamma, tauTrust, kappa) == 0
}

var dmttRow = Row{
	Name:         "dmtt",
	Personalized: true,
	Summary:      "DMTT: MURMURA's model trust with topology trust from signed claims and a collaborator budget",
	Options: []Option{
		{Name: "n_eval", Default: DMTTNEval, Lo: 1, Hi: 1 << 20, Whole: true},
		{Name: "w_a", Default: MurmuraWA, Lo: 0, Hi: 1},
		{Name: "tau_u", Default: MurmuraTauU, Lo: 0, Hi: 1},
		{Name: "l1", Default: DMTTL1, Lo: 0, Hi: math.Inf(1), HiOpen: true},
		{Name: "l2", Default: DMTTL2, Lo: 0, Hi: math.Inf(1), HiOpen: true},
		{Name: "l3", Default: DMTTL3, Lo: 0, Hi: math.Inf(1), HiOpen: true},
		{Name: "l4", Default: DMTTL4, Lo: 0, Hi: math.Inf(1), HiOpen: true},
		{Name: "gamma", Default: DMTTGamma, Lo: 0, Hi: math.Inf(1), HiOpen: true},
		{Name: "tau_trust", Default: DMTTTauTrust, Lo: 0, Hi: 1},
		{Name: "kappa", Default: DMTTKappa, Lo: 0, Hi: math.Inf(1), LoOpen: true, HiOpen: true},
		{Name: "b", Default: DMTTBudget, Lo: 1, Hi: 1 << 20, Whole: true},
		{Name: "omega", Default: DMTTSelfWeight, Lo: 0, Hi: 1},
		{Name: "norm_gate", Default: 1, Lo: 0, Hi: 1, Whole: true}, // 0: the norm-gate ablation
	},
	build: func(_ Params, o Values) (Strategy, error) {
		d := NewDMTT()
		d.NEval, d.WA, d.TauU = int(o["n_eval"]), o["w_a"], o["tau_u"]
		d.L = [4]float64{o["l1"], o["l2"], o["l3"], o["l4"]}
		d.Gamma, d.TauTrust, d.Kappa, d.Budget, d.SelfWeight = o["gamma"], o["tau_trust"], o["kappa"], int(o["b"]), o["omega"]
		d.NormGate = o["norm_gate"] == 1
		return d, nil
	},
}

// DMTT is the learning step of DMTT (the DMTT paper,
// §IV-E): after local training (the node's E epochs) the node sends its
// model to its previous collaborators and to its reachable topology-screened
// neighbors (View.Trust.Screened); it scores every received model on the
// first NEval samples of its validation split by MURMURA's ModelScore, and
// its own the same way (s_ii); q = λ1 s + λ2 T_topo + λ3 p − λ4 c_comm with
// c_comm = 0 (all links cost the same); a candidate passes the gates
// s ≥ Gamma·s_ii, T_topo ≥ TauTrust and ||θ_j|| ≤ Kappa·||θ_i||; the Budget
// best by q (ties by id) form the collaborator set C, and
//
//	θ ← ω θ + (1 − ω) Σ_{j∈C} (q_j / Σ_C q) θ_j,   ω = SelfWeight.
//
// An empty C keeps θ (local-only fallback). Every other sender gets weight
// 0. It needs the node's trust layer (View.Trust) and an evidential head.
type DMTT struct {
	NEval      int
	WA, TauU   float64
	L          [4]float64
	Gamma      float64
	TauTrust   float64
	Kappa      float64
	Budget     int
	SelfWeight float64
	// NormGate applies the norm-sanity gate ||θ_j|| <= Kappa ||θ_i|| (on
	// in the paper; off is the ablation that shows which other gate or score
	// stops a poisoned model, docs/results/dmtt.md).
	NormGate bool

	collab []int // C of the previous round
	p      peerInputs
	out    agreement.Outputs
	scores []PeerScore
	cand   []dmttCand
}

type dmttCand struct {
	k int // index in p.xs
	q float64
}

// NewDMTT returns DMTT with the DMTT paper's defaults (§IV-E).
func NewDMTT() *DMTT {
	return &DMTT{NEval: DMTTNEval, WA: MurmuraWA, TauU: MurmuraTauU, L: [4]float64{DMTTL1, DMTTL2, DMTTL3, DMTTL4},
		Gamma: DMTTGamma, TauTrust: DMTTTauTrust, Kappa: DMTTKappa, Budget: DMTTBudget, SelfWeight: DMTTSelfWeight,
		NormGate: true}
}

func (*DMTT) Name() string { return "dmtt" }

// Scores reports, per scored sender in id order, its model score s_model,
// its topology trust, its q, the gates it failed ("gate": a mask of
// GateModel, GateTrust, GateNorm; with NormGate off GateNorm is reported
// but not applied) and,
// for the selected collaborators, the weight it got ("weight").
func (d *DMTT) Scores() []PeerScore { return d.scores }

// Share sends the trained model to each previous collaborator and each
// screened neighbor, one message per peer (Outgoing.To).
func (d *DMTT) Share(v *View) []Outgoing {
	if v.Trust == nil {
		return nil // Combine reports the missing trust layer
	}
	to := append(slices.Clone(d.collab), v.Trust.Screened()...)
	slices.Sort(to)
	to = slices.Compact(to)
	out := make([]Outgoing, 0, len(to))
	for _, j := range to {
		if j != v.ID {
			out = append(out, Outgoing{To: j, Tag: TagModel, Vector: v.Model.Params()})
		}
	}
	return out
}

// Combine scores, gates, selects and aggregates.
func (d *DMTT) Combine(v *View, in []Incoming) (map[int]float64, error) {
	if v.Trust == nil {
		return nil, fmt.Errorf("dmtt needs the node's topology-trust layer")
	}
	if v.Validate == nil {
		return nil, fmt.Errorf("dmtt needs the node's validation data (View.Validate)")
	}
	w := v.Model.Params()
	if err := d.p.gather(in, len(w)); err != nil {
		return nil, err
	}
	d.scores = d.scores[:0]
	d.collab = d.collab[:0]
	if len(d.p.xs) == 0 {
		return d.p.weights(), nil
	}
	sii, err := d.modelScore(v, w)
	if err != nil {
		return nil, fmt.Errorf("own model: %w", err)
	}
	ownNorm := vec.Norm(w)
	d.cand = d.cand[:0]
	for k, x := range d.p.xs {
		s, err := d.modelScore(v, x.Vector)
		if err != nil {
			return nil, fmt.Errorf("model of %d: %w", x.From, err)
		}
		t, rel := v.Trust.Trust(x.From), v.Trust.Reliability(x.From)
		q := DMTTScore(s, t, rel, 0, d.L)
		d.scores = append(d.scores,
			PeerScore{From: x.From, Kind: "s_model", Value: s},
			PeerScore{From: x.From, Kind: "trust", Value: t},
			PeerScore{From: x.From, Kind: "q", Value: q})
		norm := vec.Norm(x.Vector)
		failed := DMTTGateFailures(s, sii, t, norm, ownNorm, d.Gamma, d.TauTrust, d.Kappa)
		d.scores = append(d.scores, PeerScore{From: x.From, Kind: "gate", Value: float64(failed)})
		if !d.NormGate {
			failed &^= GateNorm // recorded, not applied: what the gate would have done
		}
		if failed == 0 && q > 0 {
			d.cand = append(d.cand, dmttCand{k: k, q: q})
		}
	}
	// Top-B by q, ties by sender id (xs is in sender order).
	slices.SortStableFunc(d.cand, func(a, b dmttCand) int { return cmp.Compare(b.q, a.q) })
	d.cand = d.cand[:min(len(d.cand), d.Budget)]
	var total float64
	for _, c := range d.cand {
		total += c.q
	}
	for _, c := range d.cand {
		d.p.coef[c.k] = (1 - d.SelfWeight) * c.q / total
		d.collab = append(d.collab, d.p.xs[c.k].From)
		d.scores = append(d.scores, PeerScore{From: d.p.xs[c.k].From, Kind: "weight", Value: d.p.coef[c.k]})
	}
	slices.Sort(d.collab)
	if len(d.cand) == 0 {
		return d.p.weights(), nil
	}
	return d.p.apply(w), nil
}

// modelScore is s_model of params on the node's validation samples; 0
// for outputs that are not finite.
func (d *DMTT) modelScore(v *View, params []float32) (float64, error) {
	if err := v.Validate(params, d.NEval, &d.out); err != nil {
		return 0, err
	}
	if d.out.Vacuity == nil {
		return 0, fmt.Errorf("dmtt needs an evidential head (model.head = \"evidential\")")
	}
	acc, u, ok := Evidence(&d.out)
	if !ok {
		return 0, nil
	}
	return ModelScore(acc, u, d.WA, d.TauU, true), nil
}
