package metrics

// PrivacyRound is the round's differential-privacy account over honest
// nodes that run a DP layer: the largest and the mean ε so far (each at
// the node's δ; Delta is the largest of those δ).
type PrivacyRound struct {
	Nodes             int     `json:"nodes"`
	HonestMaxEpsilon  float64 `json:"honest_max_epsilon"`
	HonestMeanEpsilon float64 `json:"honest_mean_epsilon"`
	Delta             float64 `json:"delta"`
	// Accountant is the accountant of those ε when not the default RDP
	// for every node: "pld", "rdp" (PLD asked for, failed everywhere) or
	// "pld+rdp"; RDPFallbacks counts the nodes whose PLD failed, so
	// their ε is RDP's bound. Both absent with the default.
	Accountant   string `json:"accountant,omitempty"`
	RDPFallbacks int    `json:"rdp_fallbacks,omitempty"`
}

// SummarizePrivacy fills r.Privacy from the node records' Epsilon and
// Delta (nil when no honest node reports one, so runs without DP keep
// their records unchanged).
func (r *Round) SummarizePrivacy() {
	var p PrivacyRound
	var sum float64
	pld, rdp := 0, 0
	for _, n := range r.Nodes {
		if n.Byzantine || n.Epsilon == nil {
			continue
		}
		switch {
		case n.Accountant == "pld":
			pld++
		case n.AccountantFallback != "":
			rdp++
			p.RDPFallbacks++
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
	switch {
	case pld > 0 && rdp > 0:
		p.Accountant = "pld+rdp"
	case pld > 0:
		p.Accountant = "pld"
	case rdp > 0:
		p.Accountant = "rdp"
	}
	r.Privacy = &p
}
