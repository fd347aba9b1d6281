package strategy

var dpsgdRow = Row{
	Name:      "dpsgd",
	Summary:   "decentralized parallel SGD: mix the start-of-round models, then take the own update",
	Weighting: true,
	build: func(p Params, _ Values) (Strategy, error) {
		return &DPSGD{Weighting: p.Weighting}, nil
	},
}

// DPSGD is decentralized parallel SGD (Lian et al. 2017; survey §2.3):
// w_i ← Σ_j W_ij w_j^start − d_i, where d_i = w_i^start − w_i^trained is
// the node's local update of the round. Neighbors exchange their
// start-of-round models.
type DPSGD struct {
	Weighting Weighting
	ws        []float64
	from      []int
	delta     []float32
}

func (d *DPSGD) Name() string { return "dpsgd" }

// Share sends the start-of-round model.
func (d *DPSGD) Share(v *View) []Outgoing {
	return []Outgoing{{To: Broadcast, Tag: TagStart, Vector: v.Start}}
}

// Combine mixes start-of-round models and applies the local update.
func (d *DPSGD) Combine(v *View, in []Incoming) (map[int]float64, error) {
	w := v.Model.Params()
	xs, err := withTag(in, TagStart, len(w))
	if err != nil {
		return nil, err
	}
	d.delta = localUpdate(d.delta, v.Start, w)
	weights := combineAverage(v, d.Weighting, w, v.Start, xs, &d.ws, &d.from)
	for i, u := range d.delta {
		w[i] -= u
	}
	return weights, nil
}

// localUpdate returns start − trained in buf.
func localUpdate(buf, start, trained []float32) []float32 {
	if cap(buf) < len(start) {
		buf = make([]float32, len(start))
	}
	buf = buf[:len(start)]
	for i := range buf {
		buf[i] = start[i] - trained[i]
	}
	return buf
}
