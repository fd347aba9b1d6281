package node

import "github.com/trellis-fl/trellis/strategy"

// The reports the layers put into Ready.Reports, and the strategies'
// reports under the names a driver reads them by. They are plain data and
// live here, not with the layers that fill them, so that a consumer of
// Ready (metrics, cluster's record frames) depends on node alone.

// TrustReport is the topology-trust layer's state at the end of a round
// (package trustlayer): DMTT's per-round trust diagnostics.
type TrustReport struct {
	// Trust is T_topo of every peer, indexed by id up to the directory's
	// largest (0 for ids outside it and for the node itself: its own
	// value is not a belief).
	Trust []float64
	// Screened lists, in increasing order, the topology-screened
	// neighbours (direct, reachable, trusted).
	Screened []int
	// Edges is the trusted view of the graph, in (U, V) order.
	Edges [][2]int
	// ClaimsAccepted counts the claims taken into the pools this round and
	// ClaimsRejected those refused as evidence against someone, by reason.
	ClaimsAccepted uint64
	ClaimsRejected map[string]uint64
}

// ReportKind implements Report.
func (*TrustReport) ReportKind() string { return "trust" }

// The strategies' reports, named here so that a consumer of Ready needs
// only node: agreement scores (LIGHTYEAR, DMTT, Murmura) and R-DPFL's
// neighbourhood direction.
type (
	ScoresReport    = strategy.Scores
	DirectionReport = strategy.RDPFLRound
)

// PrivacyReport is a DP layer's account at the end of a round (package
// dplayer).
type PrivacyReport struct {
	// Mode is "node" (node-level DP, dplayer.Layer) or "sample" (DP-SGD,
	// dplayer.Sample).
	Mode string
	// Epsilon is the node's ε so far at Delta (privacy.Accountant over
	// every event charged since the first round), by Accountant ("rdp" or
	// "pld"). Fallback, when set, is why the PLD accountant asked for could
	// not answer, so that Epsilon is RDP's bound.
	Epsilon, Delta float64
	Accountant     string
	Fallback       string
	// Multiplier is the noise multiplier z (noise standard deviation z·Clip
	// on the clipped update, or on the clipped per-sample gradient sum).
	Multiplier, Clip float64
	// Releases counts the events charged so far: the node's noisy releases
	// (node level) or DP-SGD steps (sample level).
	Releases int
	// Sampling is how the charged steps were sampled (privacy.Sampling).
	Sampling string
	// Seeded says the noise came from the experiment seed (simulation): a
	// seeded run is not private, whatever ε says.
	Seeded bool
	// Norm is the L2 norm of the round's update before clipping and
	// Clipped whether it was clipped (node level; zero otherwise).
	Norm    float64
	Clipped bool
}

// ReportKind implements Report.
func (*PrivacyReport) ReportKind() string { return "privacy" }

// SecAggReport is a secure-aggregation layer's account of a round
// (package secagg, every mode).
type SecAggReport struct {
	// Members is the size of the node's own group (its roster, without
	// the node), Survivors how many members' inputs are in its sum and
	// Answered how many answered the unmasking.
	Members, Survivors, Answered int
	// Fallback says the group sum failed and the node kept its own model;
	// Reason says why.
	Fallback bool
	Reason   string
	// Joined counts the neighbours' groups whose roster listed the node,
	// Contributed those it sent its masked input to, Unmasked those it
	// answered.
	Joined, Contributed, Unmasked int
	// Weights are the weights of the group mean (1/(Survivors+1) for each
	// survivor), nil with Across or Fallback: the influence each sender had
	// on the node's model.
	Weights map[int]float64
}

// ReportKind implements Report.
func (*SecAggReport) ReportKind() string { return "secagg" }
