package strategy

import (
	"fmt"
	"math"

	"github.com/trellis-fl/trellis/agreement"
)

// MURMURA's defaults: the evidential score of the DMTT paper (§IV-E)
// and, where the paper is silent, the authors' public code
// (trust EMA with momentum 0.7, a BALANCE-style tightening threshold from
// 0.3·(1 − 0.5) to 0.3, self-weight 0.5).
const (
	MurmuraWA         = 0.7 // accuracy weight w_a
	MurmuraTauU       = 0.5 // vacuity above which the score is penalized
	MurmuraNEval      = 128 // validation samples per evaluation
	MurmuraThreshold  = 0.3 // base trust threshold τ_min
	MurmuraMomentum   = 0.7 // EMA: trust ← m·new + (1 − m)·old
	MurmuraGamma      = 0.5 // tightening: τ(t) = τ_min·(1 − γ·exp(−κ t/T))
	MurmuraKappa      = 1.0
	MurmuraSelfWeight = 0.5
)

// ModelScore is the evidential score of a model from its accuracy a and
// mean vacuity ū on validation data (the DMTT paper, §IV-E):
//
//	s_base = (1 − ū)·(w_a·a + (1 − w_a)),
//	s = s_base·exp(−(ū − τ_u)) when penalize and ū > τ_u, else s_base.
func ModelScore(acc, vacuity, wa, tauU float64, penalize bool) float64 {
	s := (1 - vacuity) * (wa*acc + (1 - wa))
	if penalize && vacuity > tauU {
		s *= math.Exp(-(vacuity - tauU))
	}
	return max(0, min(1, s))
}

// Evidence is the accuracy and mean vacuity of outputs on labelled
// samples; ok is false when there are none or an output is not finite.
func Evidence(o *agreement.Outputs) (acc, vacuity float64, ok bool) {
	if o.N == 0 || o.Vacuity == nil {
		return 0, 1, false
	}
	correct := 0
	var vs float64
	for i := range o.N {
		if o.Predicted(i) == o.Labels[i] {
			correct++
		}
		vs += float64(o.Vacuity[i])
	}
	vacuity = vs / float64(o.N)
	if math.IsNaN(vacuity) || math.IsInf(vacuity, 0) {
		return 0, 1, false
	}
	return float64(correct) / float64(o.N), vacuity, true
}

// The DMTT paper's defaults (the evidential model, §IV-E), and the authors'
// code where the paper is silent.
var murmuraRow = Row{
	Name:         "murmura",
	Personalized: true,
	Summary:      "MURMURA: trust-weighted aggregation from peers' model scores on the own validation data",
	Options: []Option{
		{Name: "w_a", Default: MurmuraWA, Lo: 0, Hi: 1},
		{Name: "tau_u", Default: MurmuraTauU, Lo: 0, Hi: 1},
		{Name: "penalize", Default: 1, Lo: 0, Hi: 1, Whole: true},
		{Name: "n_eval", Default: MurmuraNEval, Lo: 1, Hi: 1 << 20, Whole: true},
		{Name: "threshold", Default: MurmuraThreshold, Lo: 0, Hi: 1},
		{Name: "momentum", Default: MurmuraMomentum, Lo: 0, Hi: 1},
		{Name: "gamma", Default: MurmuraGamma, Lo: 0, Hi: 1},
		{Name: "kappa", Default: MurmuraKappa, Lo: 0, Hi: math.Inf(1), LoOpen: true, HiOpen: true},
		{Name: "omega", Default: MurmuraSelfWeight, Lo: 0, Hi: 1},
	},
	build: func(_ Params, o Values) (Strategy, error) {
		m := NewMurmura()
		m.WA, m.TauU, m.Penalize, m.NEval = o["w_a"], o["tau_u"], o["penalize"] == 1, int(o["n_eval"])
		m.Threshold, m.Momentum, m.Gamma, m.Kappa, m.SelfWeight = o["threshold"], o["momentum"], o["gamma"], o["kappa"], o["omega"]
		return m, nil
	},
}

// Murmura is MURMURA's evidential trust-aware aggregation (the DMTT paper,
// "Models: evidential head — MURMURA"; the authors' EvidentialTrustAggregator):
// each received model is scored on the first NEval samples of the node's
// validation split by ModelScore, smoothed per peer by an EMA (Momentum 1
// turns it off), kept if the smoothed trust reaches the round's threshold
// (tightening from Threshold·(1 − Gamma) towards Threshold; Gamma 0 keeps
// it fixed), and the kept models are averaged with weights proportional
// to trust; the node keeps SelfWeight of its own model:
//
//	θ ← ω·θ + (1 − ω)·Σ_{j kept} (T_j / Σ T)·θ_j.
//
// Nothing kept leaves θ as trained. It needs an evidential head.
type Murmura struct {
	WA, TauU   float64
	Penalize   bool
	NEval      int
	Threshold  float64
	Momentum   float64
	Gamma      float64
	Kappa      float64
	SelfWeight float64

	p        peerInputs
	out      agreement.Outputs
	smoothed map[int]float64
	scores   []PeerScore
}

// NewMurmura returns MURMURA with its defaults.
func NewMurmura() *Murmura {
	return &Murmura{WA: MurmuraWA, TauU: MurmuraTauU, Penalize: true, NEval: MurmuraNEval,
		Threshold: MurmuraThreshold, Momentum: MurmuraMomentum, Gamma: MurmuraGamma,
		Kappa: MurmuraKappa, SelfWeight: MurmuraSelfWeight}
}

func (*Murmura) Name() string { return "murmura" }

// Share sends the trained model to every out-neighbor.
func (*Murmura) Share(v *View) []Outgoing { return shareModel(v) }

// Scores reports each sender's smoothed trust of the last Combine.
func (m *Murmura) Scores() []PeerScore { return m.scores }

// threshold is τ(t) of the authors' code, for round t of T.
func (m *Murmura) threshold(t, rounds int) float64 {
	if m.Gamma == 0 {
		return m.Threshold
	}
	decay := math.Exp(-m.Kappa * float64(t) / float64(max(1, rounds)))
	return max(0.05, min(m.Threshold, m.Threshold*(1-m.Gamma*decay)))
}

// Combine scores, filters and aggregates.
func (m *Murmura) Combine(v *View, in []Incoming) (map[int]float64, error) {
	if v.Validate == nil {
		return nil, fmt.Errorf("murmura: the node offers no validation data")
	}
	w := v.Model.Params()
	if err := m.p.gather(in, len(w)); err != nil {
		return nil, err
	}
	if m.smoothed == nil {
		m.smoothed = map[int]float64{}
	}
	m.scores = m.scores[:0]
	tau := m.threshold(v.Round, v.Rounds)
	var total float64
	for k, x := range m.p.xs {
		if err := v.Validate(x.Vector, m.NEval, &m.out); err != nil {
			return nil, fmt.Errorf("murmura: scoring %d: %w", x.From, err)
		}
		if m.out.Vacuity == nil {
			return nil, fmt.Errorf("murmura needs an evidential head (model.head = \"evidential\")")
		}
		s := 0.0
		if acc, u, ok := Evidence(&m.out); ok {
			s = ModelScore(acc, u, m.WA, m.TauU, m.Penalize)
		}
		if old, ok := m.smoothed[x.From]; ok {
			s = m.Momentum*s + (1-m.Momentum)*old
		}
		m.smoothed[x.From] = s
		m.scores = append(m.scores, PeerScore{From: x.From, Kind: "trust", Value: s})
		if s >= tau && s > 0 {
			m.p.coef[k] = s
			total += s
		}
	}
	for k := range m.p.coef {
		if total > 0 {
			m.p.coef[k] *= (1 - m.SelfWeight) / total
		}
	}
	return m.p.apply(w), nil
}
