package strategy

import "math"

var asyncMeanRow = Row{
	Name:    "async_mean",
	Summary: "mean of own and neighbours' models, each weighted by (1+staleness)^-decay (FedAsync's polynomial staleness function)",
	Async:   true,
	Options: []Option{
		// a of s(τ) = (1+τ)^-a; 0 is the plain uniform mean. FedAsync's
		// experiments use a = 0.5.
		{Name: "decay", Default: 0.5, Lo: 0, Hi: 8},
	},
	build: func(_ Params, o Values) (Strategy, error) {
		return &AsyncMean{Decay: o["decay"]}, nil
	},
}

// AsyncMean is a staleness-discounted mean for asynchronous decentralized
// learning: after its local steps the node replaces its model by
//
//	x ← (x + Σ_j s(τ_j)·x_j) / (1 + Σ_j s(τ_j)),  s(τ) = (1+τ)^-Decay,
//
// over the newest model x_j of each neighbour that arrived since its last
// combine, τ_j its staleness in the node's steps (Incoming.Staleness), the
// node's own model counting as fresh (τ = 0, weight 1). It is FedAsync's
// polynomial staleness function (Xie, Koyejo and Gupta, "Asynchronous
// Federated Optimization", 2019, §5: s(t−τ) = (t−τ+1)^-a) applied to a
// decentralized mean in the way of asynchronous gossip SGD (Lian et al.,
// AD-PSGD, 2018), whose averages take whatever model a neighbour last
// sent: the survey's "dampening scheme that scales each gradient based
// on its staleness" (§5.3, refs. [256], [257]), here on models. In a
// synchronous round every τ is 0 and it is the uniform mean of fedavg.
type AsyncMean struct {
	Decay float64
	ws    []float64
}

func (a *AsyncMean) Name() string { return "async_mean" }

// Share sends the trained model to every out-neighbour.
func (a *AsyncMean) Share(v *View) []Outgoing {
	return []Outgoing{{To: Broadcast, Tag: TagModel, Vector: v.Model.Params()}}
}

// Combine writes the staleness-weighted mean into the model and returns
// each sender's normalized weight.
func (a *AsyncMean) Combine(v *View, in []Incoming) (map[int]float64, error) {
	w := v.Model.Params()
	xs, err := withTag(in, TagModel, len(w))
	if err != nil {
		return nil, err
	}
	total := 1.0 // the own model, fresh
	a.ws = a.ws[:0]
	for _, m := range xs {
		s := StalenessWeight(m.Staleness, a.Decay)
		a.ws = append(a.ws, s)
		total += s
	}
	out := make(map[int]float64, len(xs))
	for k, m := range xs {
		a.ws[k] /= total
		out[m.From] = a.ws[k]
	}
	mix(w, 1/total, w, a.ws, xs)
	return out, nil
}

// StalenessWeight is FedAsync's polynomial staleness function
// (1+τ)^-decay: 1 for a fresh input, decaying with its age τ ≥ 0.
func StalenessWeight(staleness int, decay float64) float64 {
	if staleness <= 0 || decay == 0 {
		return 1
	}
	return math.Pow(1+float64(staleness), -decay)
}
