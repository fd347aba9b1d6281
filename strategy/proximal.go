package strategy

import (
	"fmt"
	"math"

	"github.com/trellis-fl/trellis/nn"
)

// LocalTrainer is implemented by strategies that shape the node's own local
// training (a proximal term, a reference model). The node asks before it
// trains, with the View of the round (Start is already set).
type LocalTrainer interface {
	LocalTraining(v *View, base nn.TrainConfig) nn.TrainConfig
}

// Training-side defaults; the spec names FedProx and Ditto without values,
// so these are the middle of the grids their papers search
// (μ ∈ {0.001, 0.01, 0.1, 1}, λ ∈ {0.01, 0.1, 1}).
const (
	FedProxMu   = 0.01
	DittoLambda = 0.1
)

var fedproxRow = Row{
	Name:      "fedprox",
	Summary:   "FedAvg with the proximal term (μ/2)‖w − w_ref‖² in training",
	Weighting: true,
	Options:   []Option{{Name: "mu", Default: FedProxMu, Lo: 0, Hi: math.Inf(1), HiOpen: true}},
	build: func(p Params, o Values) (Strategy, error) {
		return &FedProx{FedAvg: FedAvg{Weighting: p.Weighting}, Mu: o["mu"]}, nil
	},
}

// FedProx (Li et al., MLSys 2020; robust-rules.md, training-side defenses)
// adds (μ/2)·||w − w_start||² to the local loss, keeping local updates close
// to the round's starting model, then averages like FedAvg.
type FedProx struct {
	FedAvg
	Mu float64
}

// Name implements Strategy.
func (f *FedProx) Name() string { return "fedprox" }

// LocalTraining implements LocalTrainer.
func (f *FedProx) LocalTraining(v *View, base nn.TrainConfig) nn.TrainConfig {
	base.ProxMu, base.ProxRef = f.Mu, v.Start
	return base
}

var dittoRow = Row{
	Name:         "ditto",
	Personalized: true,
	Summary:      "a personal model regularized towards the shared FedAvg one",
	Weighting:    true,
	Options:      []Option{{Name: "lambda", Default: DittoLambda, Lo: 0, Hi: math.Inf(1), HiOpen: true}},
	build: func(p Params, o Values) (Strategy, error) {
		return &Ditto{FedAvg: FedAvg{Weighting: p.Weighting}, Lambda: o["lambda"]}, nil
	},
}

// Ditto (Li et al., ICML 2021) keeps two models per node: a global one w,
// trained locally and averaged with the neighbors' like FedAvg, and the
// node's personal model (the node's Model, the one evaluated), trained with
// (λ/2)·||v − w||² toward the global one and never shared. Byzantine
// models can only reach the personal model through w and the proximal
// pull.
//
// Per round: the node trains its personal model toward w (LocalTraining);
// Share trains a copy of w on the same local data (View.TrainCopy) and
// sends it; Combine averages the global copies; the personal model is left
// as trained.
type Ditto struct {
	FedAvg
	Lambda float64
	w      []float32 // the global model
}

// Name implements Strategy.
func (d *Ditto) Name() string { return "ditto" }

// LocalTraining implements LocalTrainer: the personal model is pulled
// toward the global one (round 0: both start from the common initial
// model).
func (d *Ditto) LocalTraining(v *View, base nn.TrainConfig) nn.TrainConfig {
	if d.w == nil {
		d.w = append([]float32(nil), v.Start...)
	}
	base.ProxMu, base.ProxRef = d.Lambda, d.w
	return base
}

// Share trains the global model locally and sends it.
func (d *Ditto) Share(v *View) []Outgoing {
	if d.w == nil || v.TrainCopy == nil {
		return nil // Combine reports the missing hook
	}
	if _, err := v.TrainCopy(d.w); err != nil {
		return nil
	}
	return []Outgoing{{To: Broadcast, Tag: TagModel, Vector: d.w}}
}

// Combine averages the global models; the personal model stays as trained.
func (d *Ditto) Combine(v *View, in []Incoming) (map[int]float64, error) {
	if v.TrainCopy == nil {
		return nil, fmt.Errorf("ditto needs View.TrainCopy (filled by the node)")
	}
	if d.w == nil {
		return nil, fmt.Errorf("ditto: no global model (LocalTraining was not called)")
	}
	xs, err := withTag(in, TagModel, len(d.w))
	if err != nil {
		return nil, err
	}
	return combineAverage(v, d.Weighting, d.w, d.w, xs, &d.ws, &d.from), nil
}
