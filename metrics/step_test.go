package metrics

import (
	"math"
	"testing"
)

// Three nodes stepping every 1, 2 and 4 virtual seconds, four steps each,
// a synchronous round of 4.5 s: each node gains 4.5 / its step time (the
// rate closed form), and the synchronous rounds by the end (t = 16) are
// ⌊16 / 4.5⌋ = 3. The staleness figures are counted by hand.
func TestSummarizeSteps(t *testing.T) {
	var steps []Step
	j := 0
	for i, s := range []float64{1, 2, 4} {
		for k := range 4 {
			in := j % 3
			st := Step{Time: float64(k+1) * s, Step: k, NodeRound: NodeRound{Node: i}, Inputs: in}
			if in > 0 {
				st.MaxStaleness, st.MeanStaleness = j, float64(j)/2
			}
			steps = append(steps, st)
			j++
		}
	}
	s := SummarizeSteps(steps, 3, 4.5)
	// Inputs 1, 2 on steps j = 1, 2, 4, 5, 7, 8, 10, 11: Σ inputs = 12,
	// Σ inputs·mean = (1 + 4 + 4 + 10 + 7 + 16 + 10 + 22) / 2 = 37.
	if s.Steps != 12 || s.Inputs != 12 || s.NoInputs != 4 || math.Abs(s.MeanStaleness-37.0/12) > 1e-15 {
		t.Errorf("counts %+v", s)
	}
	// Largest staleness sorted: 1 2 4 5 7 8 10 11; nearest rank of 8.
	if s.StaleP50 != 5 || s.StaleP90 != 11 || s.StaleP99 != 11 || s.StaleMax != 11 {
		t.Errorf("quantiles %d %d %d %d", s.StaleP50, s.StaleP90, s.StaleP99, s.StaleMax)
	}
	if s.EndTime != 16 || s.SyncRounds != 3 || s.NodeStepsMin != 4 || s.NodeStepsMax != 4 || s.NodeStepsMean != 4 {
		t.Errorf("time %+v", s)
	}
	if s.GainMin != 4.5/4 || s.GainMedian != 4.5/2 || s.GainMax != 4.5 {
		t.Errorf("gains %v %v %v, want 1.125 2.25 4.5", s.GainMin, s.GainMedian, s.GainMax)
	}
	// No synchronous round known: no gains.
	if s := SummarizeSteps(steps, 3, 0); s.GainMax != 0 || s.SyncRounds != 0 {
		t.Errorf("without a round: %+v", s)
	}
}
