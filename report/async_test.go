package report

import (
	"strings"
	"testing"
)

// The report of an asynchronous run: the virtual-time section, with the
// step count (nodes × rounds: no horizon), the staleness and gain lines
// and one table row per window. Steps of 1 s, the straggler 3×, links of
// 0.1 s: a synchronous round is 3.1 s, the straggler gains 3.1/3, the
// others 3.1.
func TestResultsOfAnAsyncRun(t *testing.T) {
	out := sweepInto(t, `
[strategy]
name = "async_mean"
[timing]
mode = "async"
stragglers = 0.25
slowdown = 3
window = 1
`, nil)
	md, err := ResultsCurve(out, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Asynchronous timing (virtual time)", "- 12 node steps in 9 virtual s (windows of 1 s); per node 3 to 3",
		"a synchronous round takes 3.1 s (its step and slowest link): 2 rounds in the same time",
		"Gain over synchronous rounds (a node's steps per synchronous round's time): min 1.033, median 3.100, max 3.100", "Staleness of the", "| 9 | 10 | 12 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
}
