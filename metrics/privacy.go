package metrics

// PrivacyRound is the round's differential-privacy account over honest
// nodes that run a DP layer: the largest and the mean ε so far (each at
// the node's δ; Delta is the largest of those δ).
type PrivacyRound struct {
	Nodes             int     `json:"nodes"`
	HonestMaxEpsilon  float64 `json:"honest_max_epsilon"`
	HonestMeanEpsilon float64 `json:"honest_mean_epsilon"`
	Delta             float64 `json:"delta"`
}

// SummarizePrivacy fills r.Privacy from the node records' Epsilon and
// Delta (nil when no honest node reports one, so runs without DP keep
// their records unchanged).
func (r *Round) SummarizePrivacy() {
	var p PrivacyRound
	var sum float64
	for _, n := range r.Nodes {
		if n.Byzantine || n.Epsilon == nil {
			continue
		}
		p.Nodes++
		sum += *n.Epsilon
		p.HonestMaxEpsilon = max(p.HonestMaxEpsilon, *n.Epsilon)
		if n.Delta != nil {
			p.Delta = max(p.Delta, *n.Delta)
		}
	}
	if p.Nodes == 0 {
		r.Privacy = nil
		return
	}
	p.HonestMeanEpsilon = sum / float64(p.Nodes)
	r.Privacy = &p
}
