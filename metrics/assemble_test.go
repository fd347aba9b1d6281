package metrics

import "testing"

// TestEvaluationsCountsTheScheduledRounds: Evaluations agrees with the
// rounds Evaluated selects, and with counts worked out by hand.
func TestEvaluationsCountsTheScheduledRounds(t *testing.T) {
	for _, c := range [][3]int{{40, 5, 8}, {41, 5, 9}, {3, 1, 3}, {7, 0, 7}, {10, 20, 1}} {
		n := 0
		for round := range c[0] {
			if Evaluated(round, c[0], c[1]) {
				n++
			}
		}
		if got := Evaluations(c[0], c[1]); got != n || got != c[2] {
			t.Errorf("rounds %d, eval_every %d: Evaluations = %d, Evaluated selects %d, want %d", c[0], c[1], got, n, c[2])
		}
	}
}
