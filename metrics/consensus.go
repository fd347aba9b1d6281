package metrics

// ConsensusRound is one iteration of a run of task type consensus
// (package consensus/task): the error of the nodes' estimates of the
// average, over nodes and coordinates, after the iteration. A consensus
// run records rounds only (no node lines: the methods report their error
// over nodes), so the round's other aggregates are zero.
type ConsensusRound struct {
	Method string `json:"method"`
	// MSE is the mean over nodes and coordinates of (x_i[c] − x̄[c])²,
	// MaxAbsErr the largest |x_i[c] − x̄[c]|.
	MSE       float64 `json:"mse"`
	MaxAbsErr float64 `json:"max_abs_err"`
	// Epsilon is a DP method's ε (its guarantee over the whole run, the
	// same in every record; absent for the other methods).
	Epsilon *float64 `json:"epsilon,omitempty"`
	// ReconRMSE is the curious neighbours' reconstruction error of the
	// target's x_i(0), root mean square over coordinates, from the whole
	// run: in the last round's record only, when asked.
	ReconRMSE *float64 `json:"recon_rmse,omitempty"`
}
