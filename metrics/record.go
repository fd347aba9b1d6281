package metrics

import "math"

// NodeRound is one node's record of one round.
type NodeRound struct {
	Node      int  `json:"node"`
	Byzantine bool `json:"byzantine"`
	// Evaluated says whether the accuracy and loss fields were measured
	// this round (every EvalEvery rounds and the last).
	Evaluated  bool    `json:"evaluated"`
	LocalAcc   float64 `json:"local_acc"`
	LocalLoss  float64 `json:"local_loss"`
	GlobalAcc  float64 `json:"global_acc"`
	GlobalLoss float64 `json:"global_loss"`
	TrainLoss  float64 `json:"train_loss"`
	Steps      int     `json:"steps"`
	BytesSent  int     `json:"bytes_sent"`
	// ClaimBytes is the part of BytesSent that carried topology claims.
	ClaimBytes int `json:"claim_bytes,omitempty"`
	// ByzWeight is the total weight the node's strategy gave Byzantine
	// senders this round.
	ByzWeight float64 `json:"byz_weight"`
	// Rejected counts the messages the node refused this round: its input
	// checks (a sender outside the round's in-neighbours, a duplicate, a kind
	// or size no phase takes, a full store) and its validator (signature,
	// replay, a stale round, ...), per reason in node.Ready.Rejections.
	Rejected int `json:"rejected"`
	// KeptOwn: the strategy's rule could not run on the inputs that
	// arrived (fewer than its f needs: a neighbour silent or refused, or
	// in asynchronous timing not arrived yet), so the node kept its
	// trained model (node.Ready.KeptOwn); those inputs count in Rejected.
	KeptOwn bool `json:"kept_own,omitempty"`
	// Missing marks a node whose record of the round never reached the
	// driver (the cluster's monitor: a node process that died); its other
	// fields are zero and the aggregates leave it out.
	Missing bool `json:"missing,omitempty"`
	// Diverged says the node's model was diverged at the end of the round
	// (node.Ready.Diverged): its accuracy is measured as it is, its loss
	// is undefined and written 0, and it is left out of the loss means.
	Diverged bool `json:"diverged,omitempty"`
	// Scores are the agreement scores the node's strategy gave each
	// sender this round, when it reports them (LIGHTYEAR), with whether
	// the sender was Byzantine.
	Scores []Score `json:"scores,omitempty"`
	// Epsilon is the node's ε so far at its Delta, when it runs a DP
	// layer (absent otherwise).
	Epsilon *float64 `json:"epsilon,omitempty"`
	Delta   *float64 `json:"delta,omitempty"`
	// Accountant names the accountant of Epsilon when it is not the
	// default RDP one asked for: "pld", or "rdp" with AccountantFallback,
	// why the PLD accountant asked for could not answer (absent with the
	// default, so such records are unchanged).
	Accountant         string `json:"accountant,omitempty"`
	AccountantFallback string `json:"accountant_fallback,omitempty"`
	// Correction is what R-DPFL's neighbourhood direction did this round
	// (absent for other strategies): whether the adaptive clip and the G_d
	// bound changed it, and which prediction was used.
	Correction *Correction `json:"correction,omitempty"`
	// SecAgg is the node's secure-aggregation round, when it runs the
	// layer (absent otherwise).
	SecAgg *SecAggRound `json:"secagg,omitempty"`
}

// Correction is one R-DPFL node-round's neighbourhood direction
// (the R-DPFL paper, Algorithm 2): ClipFactor is the factor the adaptive
// deviation clip scaled Δ by (1: it did not act), GdFactor the one the
// G_d bound scaled d~ by, Prediction "none" (ablation), "self",
// "previous" or "bb", and Empty that no neighbour direction arrived.
type Correction struct {
	ClipFactor float64 `json:"clip_factor"`
	GdFactor   float64 `json:"gd_factor"`
	Prediction string  `json:"prediction"`
	Empty      bool    `json:"empty,omitempty"`
}

// SecAggRound is a node's secure aggregation in one round: the size of its
// group (members besides itself), how many inputs its sum held, and
// whether the sum failed so that the node kept its own model.
type SecAggRound struct {
	Members   int  `json:"members"`
	Survivors int  `json:"survivors"`
	Fallback  bool `json:"fallback,omitempty"`
}

// Score is one agreement score a node gave a sender.
type Score struct {
	From      int     `json:"from"`
	Byzantine bool    `json:"byzantine"`
	Kind      string  `json:"kind"`
	Value     float64 `json:"value"`
}

// Round is the record of one round: every node's, and the aggregates
// over honest nodes.
type Round struct {
	Round     int         `json:"round"`
	Evaluated bool        `json:"evaluated"`
	Nodes     []NodeRound `json:"nodes"`

	HonestLocalAcc    float64 `json:"honest_local_acc"`
	HonestLocalAccStd float64 `json:"honest_local_acc_std"`
	HonestGlobalAcc   float64 `json:"honest_global_acc"`
	AllAcc            float64 `json:"all_acc"`
	HonestLoss        float64 `json:"honest_loss"`
	AllLoss           float64 `json:"all_loss"`
	DeltaMax          float64 `json:"delta_max"`
	MeanByzWeight     float64 `json:"mean_byz_weight"`
	BytesSent         int     `json:"bytes_sent"`
	// Diverged counts the honest nodes whose model was diverged at the end
	// of the round (NodeRound.Diverged).
	Diverged int `json:"diverged,omitempty"`
	// Trust is the topology-trust diagnostics of the round, when the
	// nodes run a trust layer (DMTT).
	Trust *TrustRound `json:"trust,omitempty"`
	// Privacy is the round's ε over honest nodes, when they run a DP layer.
	Privacy *PrivacyRound `json:"privacy,omitempty"`
	// Consensus is the round's record in a run of task type consensus
	// (absent otherwise).
	Consensus *ConsensusRound `json:"consensus,omitempty"`
	// Live is the round's graph and weights for a live viewer, filled in
	// by the simulator's Record; never written (json:"-").
	Live *Live `json:"-"`
}

// Timing is the wall-clock record of a round, kept apart from Round because
// it is never reproducible.
type Timing struct {
	Round        int     `json:"round"`
	Seconds      float64 `json:"round_seconds"`
	TrainSeconds float64 `json:"train_seconds"`
	// CombineNodeSeconds is the time spent closing the nodes' rounds
	// (node.End: the layers' end, the strategy's aggregation and, in
	// evaluated rounds, the evaluation), summed over nodes: compare it with
	// TrainNodeSeconds, the same sum for local training, rather than with
	// the wall-clock phases, which run nodes in parallel.
	CombineNodeSeconds float64 `json:"combine_node_seconds"`
	TrainNodeSeconds   float64 `json:"train_node_seconds"`
}

// Summarize fills the round's aggregates from its node records (Trust
// excepted: see SummarizeTrust).
func (r *Round) Summarize() {
	var hn, an, hLossN, aLossN int
	var hAcc, hAcc2, hGlob, aAcc, hLoss, aLoss, byzSum float64
	for _, n := range r.Nodes {
		r.BytesSent += n.BytesSent
		if n.Missing {
			continue
		}
		if n.Diverged && !n.Byzantine {
			r.Diverged++
		}
		if !n.Byzantine {
			r.DeltaMax = max(r.DeltaMax, n.ByzWeight)
			byzSum += n.ByzWeight
		}
		if !r.Evaluated {
			continue
		}
		an++
		aAcc += n.LocalAcc
		if !n.Diverged {
			aLossN++
			aLoss += n.LocalLoss
		}
		if !n.Byzantine {
			hn++
			hAcc += n.LocalAcc
			hAcc2 += n.LocalAcc * n.LocalAcc
			hGlob += n.GlobalAcc
			if !n.Diverged {
				hLossN++
				hLoss += n.LocalLoss
			}
		}
	}
	honest := 0
	for _, n := range r.Nodes {
		if !n.Byzantine && !n.Missing {
			honest++
		}
	}
	if honest > 0 {
		r.MeanByzWeight = byzSum / float64(honest)
	}
	if hn > 0 {
		f := float64(hn)
		r.HonestLocalAcc = hAcc / f
		r.HonestLocalAccStd = sqrtNonNeg(hAcc2/f - r.HonestLocalAcc*r.HonestLocalAcc)
		r.HonestGlobalAcc = hGlob / f
	}
	if hLossN > 0 {
		r.HonestLoss = hLoss / float64(hLossN)
	}
	if an > 0 {
		r.AllAcc = aAcc / float64(an)
	}
	if aLossN > 0 {
		r.AllLoss = aLoss / float64(aLossN)
	}
	r.SummarizePrivacy()
}

// sqrtNonNeg is the square root of a variance computed as E[x²] − E[x]²,
// which rounding can push slightly below zero.
func sqrtNonNeg(v float64) float64 { return math.Sqrt(max(v, 0)) }
