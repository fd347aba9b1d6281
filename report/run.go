package report

// Series is one run's per-round values of one metric; Rounds is strictly
// increasing and as long as Values.
type Series struct {
	Rounds []int
	Values []float64
}

// RunResult is one run: one label (e.g. a strategy), one point of the
// sweep and one seed.
type RunResult struct {
	Label string // legend label, e.g. the strategy name
	// Strategy is the run's strategy.name, when known: the default
	// accuracy curve follows it (Personalized).
	Strategy string
	Params   map[string]string // swept key → value, e.g. "adversary.fraction": "0.3"
	// Fixed is every other config key's value (config.Flatten), among
	// them those the label is made of: a table's rows, columns and
	// filters may name them too (Value).
	Fixed  map[string]string
	Seed   uint64             // the run's experiment seed
	Curves map[string]Series  // metric name → per-round values, e.g. "honest_local_acc"
	Final  map[string]float64 // final metrics, e.g. the mean over the last evaluated rounds
}

// Value is the run's value of config key k: a swept parameter's, or any
// other key's (Fixed, e.g. "consensus.method", which the label names).
func (r RunResult) Value(k string) (string, bool) {
	if v, ok := r.Params[k]; ok {
		return v, true
	}
	v, ok := r.Fixed[k]
	return v, ok
}
