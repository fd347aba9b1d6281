package metrics

import (
	"math"
	"slices"
	"sort"
)

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
	// Refused counts the step's refusals by reason (stale, superseded,
	// duplicate, ...), summed over senders (absent without any).
	Refused map[string]int `json:"refused,omitempty"`
}

// AsyncSummary is what an asynchronous run's steps say of its timing:
// how stale the combined inputs were and how much the nodes gained over
// synchronous rounds on the same clock (SummarizeSteps).
type AsyncSummary struct {
	Steps, Inputs int
	// MeanStaleness is the mean staleness of every input combined (each
	// step's mean weighted by its inputs); the quantiles are those of the
	// steps' largest input staleness, over the steps that combined any
	// (nearest rank: the smallest value with at least that fraction of
	// the steps at or below it).
	MeanStaleness                float64
	StaleP50, StaleP90, StaleP99 int
	StaleMax                     int
	NoInputs                     int // steps that combined no input
	EndTime                      float64
	SyncRound                    float64 // virtual time of one synchronous round (0: unknown)
	SyncRounds                   int     // synchronous rounds done by EndTime: ⌊EndTime / SyncRound⌋
	NodeStepsMin, NodeStepsMax   int
	NodeStepsMean                float64
	GainMin, GainMedian, GainMax float64 // per node: its steps per SyncRound of its time (Gain)
}

// SummarizeSteps summarizes an asynchronous run's steps of n nodes, a
// synchronous round lasting syncRound on the same clock (0: no gains).
//
// A node's gain is its rate of steps over the synchronous rounds' rate:
// k steps in the time t its last step ended, times syncRound / t. Every
// node of a synchronous run gains 1; a node whose steps take s each gains
// syncRound / s (the fast nodes no longer wait for the slowest).
func SummarizeSteps(steps []Step, n int, syncRound float64) AsyncSummary {
	s := AsyncSummary{Steps: len(steps), SyncRound: syncRound}
	count := make([]int, n)
	end := make([]float64, n)
	var sum float64
	var worst []int
	for _, st := range steps {
		if st.Node >= 0 && st.Node < n {
			count[st.Node]++
			end[st.Node] = max(end[st.Node], st.Time)
		}
		s.EndTime = max(s.EndTime, st.Time)
		if st.Inputs == 0 {
			s.NoInputs++
			continue
		}
		s.Inputs += st.Inputs
		sum += st.MeanStaleness * float64(st.Inputs)
		worst = append(worst, st.MaxStaleness)
	}
	if s.Inputs > 0 {
		s.MeanStaleness = sum / float64(s.Inputs)
	}
	if len(worst) > 0 {
		sort.Ints(worst)
		rank := func(p float64) int { return worst[max(0, int(math.Ceil(p*float64(len(worst))))-1)] }
		s.StaleP50, s.StaleP90, s.StaleP99, s.StaleMax = rank(0.5), rank(0.9), rank(0.99), worst[len(worst)-1]
	}
	if n == 0 {
		return s
	}
	s.NodeStepsMin, s.NodeStepsMax = slices.Min(count), slices.Max(count)
	total := 0
	for _, k := range count {
		total += k
	}
	s.NodeStepsMean = float64(total) / float64(n)
	if syncRound > 0 {
		s.SyncRounds = int(math.Floor(s.EndTime / syncRound))
		var gains []float64
		for i, k := range count {
			if k > 0 && end[i] > 0 {
				gains = append(gains, float64(k)*syncRound/end[i])
			}
		}
		if len(gains) > 0 {
			sort.Float64s(gains)
			s.GainMin, s.GainMax = gains[0], gains[len(gains)-1]
			m := len(gains) / 2
			s.GainMedian = gains[m]
			if len(gains)%2 == 0 {
				s.GainMedian = (gains[m-1] + gains[m]) / 2
			}
		}
	}
	return s
}
