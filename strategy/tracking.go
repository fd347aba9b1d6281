package strategy

var trackingRow = Row{
	Name:      "gradient_tracking",
	Summary:   "decentralized gradient tracking over the same weights",
	Weighting: true,
	build: func(p Params, _ Values) (Strategy, error) {
		return &GradientTracking{Weighting: p.Weighting}, nil
	},
}

// GradientTracking is decentralized gradient tracking (DIGing / NEXT;
// survey §2.3): each node keeps y, an estimate of the network-average
// update, and sets
//
//	w_i ← Σ_j W_ij w_j^start − y_i
//	y_i ← Σ_j W_ij y_j + d_i^{t+1} − d_i^t
//
// with d the local update (start − trained) standing for η·∇f. In round 0
// y_i = d_i^0. Neighbors exchange (w^start, y).
type GradientTracking struct {
	Weighting Weighting
	y, yMix   []float32 // this round's tracker, and Σ_j W_ij y_j of the last round
	dPrev     []float32
	d         []float32
	started   bool
	ws        []float64
	from      []int
}

func (g *GradientTracking) Name() string { return "gradient_tracking" }

// Share updates the tracker with this round's local update and sends the
// start-of-round model and the tracker.
func (g *GradientTracking) Share(v *View) []Outgoing {
	g.d = localUpdate(g.d, v.Start, v.Model.Params())
	if !g.started {
		g.y = append(g.y[:0], g.d...)
		g.dPrev = append(g.dPrev[:0], g.d...)
		g.yMix = make([]float32, len(g.d))
		g.started = true
	} else {
		for i := range g.y {
			g.y[i] = g.yMix[i] + g.d[i] - g.dPrev[i]
		}
		copy(g.dPrev, g.d)
	}
	return []Outgoing{
		{To: Broadcast, Tag: TagStart, Vector: v.Start},
		{To: Broadcast, Tag: TagTracker, Vector: g.y},
	}
}

// Combine mixes models and trackers. A neighbor counts only if both its
// vectors arrived, so the same weights apply to both.
func (g *GradientTracking) Combine(v *View, in []Incoming) (map[int]float64, error) {
	w := v.Model.Params()
	starts, err := withTag(in, TagStart, len(w))
	if err != nil {
		return nil, err
	}
	ys, err := withTag(in, TagTracker, len(w))
	if err != nil {
		return nil, err
	}
	starts, ys = pairUp(starts, ys)
	weights := combineAverage(v, g.Weighting, w, v.Start, starts, &g.ws, &g.from)
	for i, y := range g.y {
		w[i] -= y
	}
	combineAverage(v, g.Weighting, g.yMix, g.y, ys, &g.ws, &g.from)
	return weights, nil
}

// pairUp keeps the senders present in both lists (both sorted by sender).
func pairUp(a, b []Incoming) ([]Incoming, []Incoming) {
	var pa, pb []Incoming
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i].From < b[j].From:
			i++
		case a[i].From > b[j].From:
			j++
		default:
			pa, pb = append(pa, a[i]), append(pb, b[j])
			i, j = i+1, j+1
		}
	}
	return pa, pb
}
