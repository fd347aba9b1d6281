package strategy

var fedavgRow = Row{
	Name:      "fedavg",
	Summary:   "mean of own and neighbours' models",
	Weighting: true,
	build: func(p Params, _ Values) (Strategy, error) {
		return &FedAvg{Weighting: p.Weighting}, nil
	},
}

// FedAvg is decentralized federated averaging: after local training, the
// node averages its model with the models its neighbors sent (static or
// dynamic graph: whoever is a neighbor this round).
type FedAvg struct {
	Weighting Weighting
	ws        []float64
	from      []int
}

func (f *FedAvg) Name() string { return "fedavg" }

// Share sends the trained model to every out-neighbor.
func (f *FedAvg) Share(v *View) []Outgoing {
	return []Outgoing{{To: Broadcast, Tag: TagModel, Vector: v.Model.Params()}}
}

// Combine averages own and received models.
func (f *FedAvg) Combine(v *View, in []Incoming) (map[int]float64, error) {
	w := v.Model.Params()
	xs, err := withTag(in, TagModel, len(w))
	if err != nil {
		return nil, err
	}
	return combineAverage(v, f.Weighting, w, w, xs, &f.ws, &f.from), nil
}

// combineAverage writes self·own + Σ w_j x_j into dst with the weighting's
// coefficients and returns the weights per sender.
func combineAverage(v *View, wt Weighting, dst, own []float32, xs []Incoming, ws *[]float64, from *[]int) map[int]float64 {
	*from = (*from)[:0]
	for _, m := range xs {
		*from = append(*from, m.From)
	}
	self, w := wt.weights(v, *from, *ws)
	*ws = w
	mix(dst, self, own, w, xs)
	out := make(map[int]float64, len(xs))
	for k, m := range xs {
		out[m.From] = w[k]
	}
	return out
}
