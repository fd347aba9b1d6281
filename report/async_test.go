package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/privacy"
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

// An asynchronous run with node-level DP: each step is a release, so at a
// horizon of 3.2 virtual s the three fast nodes (steps of 1 s) have taken
// 3 steps and the straggler (3 s) 1, and the report's DP line gives the
// ε of 1 and of 3 unamplified Gaussian releases.
func TestResultsOfAnAsyncDPRun(t *testing.T) {
	out := sweepInto(t, `
[strategy]
name = "async_mean"
[privacy]
mode = "node"
noise_multiplier = 2
delta = 1e-3
[timing]
mode = "async"
stragglers = 0.25
slowdown = 3
window = 1
horizon = 3.2
`, nil)
	md, err := ResultsCurve(out, "")
	if err != nil {
		t.Fatal(err)
	}
	eps := func(k int) string {
		e, _, err := privacy.EpsilonAfter(privacy.GaussianEvent{Multiplier: 2, Sampling: privacy.Unamplified()}, k, 1e-3, nil)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%.4g", e)
	}
	for _, want := range []string{"- 10 node steps in 3 virtual s", "the honest nodes end between ε = " + eps(1) + " (node ", ", 1 step) and ε = " + eps(3) + " (node 0, 3 steps), at δ = 0.001."} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
}
