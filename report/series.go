package report

import (
	"fmt"
	"slices"
)

// Band is one metric's per-round mean and spread over several runs.
type Band struct {
	Rounds []int  // every round present in at least one run, increasing
	Stats  []Stat // Stats[i] summarizes the runs that have Rounds[i]
}

// MeanSeries summarizes ss round by round. A round missing from some runs
// (an interrupted seed) is summarized over the runs that have it, so its
// Stat.N is smaller. Values are taken in the order of ss.
func MeanSeries(ss []Series) (Band, error) {
	var rounds []int
	for i, s := range ss {
		if len(s.Rounds) != len(s.Values) {
			return Band{}, fmt.Errorf("report: series %d has %d rounds and %d values", i, len(s.Rounds), len(s.Values))
		}
		for j := 1; j < len(s.Rounds); j++ {
			if s.Rounds[j] <= s.Rounds[j-1] {
				return Band{}, fmt.Errorf("report: series %d: rounds not increasing (%d after %d)", i, s.Rounds[j], s.Rounds[j-1])
			}
		}
		rounds = append(rounds, s.Rounds...)
	}
	slices.Sort(rounds)
	rounds = slices.Compact(rounds)

	b := Band{Rounds: rounds, Stats: make([]Stat, len(rounds))}
	next := make([]int, len(ss)) // per series, index of its first round not yet used
	vals := make([]float64, 0, len(ss))
	for i, r := range rounds {
		vals = vals[:0]
		for k, s := range ss {
			if j := next[k]; j < len(s.Rounds) && s.Rounds[j] == r {
				vals = append(vals, s.Values[j])
				next[k]++
			}
		}
		b.Stats[i] = Summarize(vals)
	}
	return b, nil
}
