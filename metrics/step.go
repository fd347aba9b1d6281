package metrics

// Step is one node step of an asynchronous run, as the run directory's
// steps.jsonl keeps it: the window (Round.Round of the summary record that
// counts it), the virtual time the step ended, the node's step counter,
// the node's record of the step (its evaluation when the step evaluated,
// its traffic, its refusals), and how many inputs its strategy combined
// and how stale they were, in the receiver's steps.
//
// The simulator's sim.StepRecord carries the same fields but the window;
// metrics holds the record type so that rundir, which imports no driver,
// can read and check it.
type Step struct {
	Window int     `json:"window"`
	Time   float64 `json:"time"`
	Step   int     `json:"step"`
	NodeRound
	Inputs int `json:"inputs"`
	// MaxStaleness and MeanStaleness are over the inputs combined (0
	// without any).
	MaxStaleness  int     `json:"max_staleness"`
	MeanStaleness float64 `json:"mean_staleness"`
}
