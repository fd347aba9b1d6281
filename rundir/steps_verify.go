package rundir

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/trellis-fl/trellis/metrics"
)

// verifySteps checks an asynchronous run's steps.jsonl (Verify): every
// line whole and decoding (but an unfinished run's torn last one), virtual
// times and windows in order, each step inside its window of clock's
// length (nil clock: not checked), each node's steps numbered 0, 1, …,
// the staleness fields consistent (0 ≤ mean ≤ max ≤ mean·inputs), and
// each window's node lines in metrics.jsonl the sum of its steps (traffic,
// refusals, training steps) and the latest evaluation of each node by
// then. A finished asynchronous run (clock set) must have the file.
func verifySteps(dir string, clock *AsyncClock, rounds []*metrics.Round, finished bool) error {
	if !Has(dir, StepsFile) {
		if finished && clock != nil {
			return damaged(dir, StepsFile, 0, "is missing: %s says the run was asynchronous", ManifestFile)
		}
		return nil
	}
	type sums struct{ bytes, rejected, steps int }
	type key struct{ window, node int }
	perWindow := map[key]*sums{}
	// evals[node] are the node's evaluated steps, in order.
	evals := map[int][]metrics.Step{}
	next := map[int]int{} // each node's next step number
	lastT, lastW := 0.0, 0
	err := eachLine(dir, StepsFile, func(n int, line []byte, whole bool) error {
		var s metrics.Step
		if err := json.Unmarshal(line, &s); err != nil || !whole {
			if !whole && !finished {
				return nil
			}
			return damaged(dir, StepsFile, n, "is not a whole step record (%s)", why(err, whole))
		}
		bad := func(format string, a ...any) error { return damaged(dir, StepsFile, n, format, a...) }
		switch {
		case !(s.Time >= lastT) || math.IsInf(s.Time, 0):
			return bad("ends at virtual time %s, before the step above (%s): steps are in time order", fmtF(s.Time), fmtF(lastT))
		case s.Window < lastW:
			return bad("is in window %d after window %d", s.Window, lastW)
		case clock != nil && clock.Window > 0 && !(float64(s.Window)*clock.Window <= s.Time && s.Time < float64(s.Window+1)*clock.Window):
			return bad("ends at virtual time %s, outside its window %d of %s s", fmtF(s.Time), s.Window, fmtF(clock.Window))
		case s.Step != next[s.Node]:
			return bad("is node %d's step %d, want %d (each node's steps in order from 0)", s.Node, s.Step, next[s.Node])
		case s.Inputs < 0 || s.MaxStaleness < 0 || !(s.MeanStaleness >= 0) || s.MeanStaleness > float64(s.MaxStaleness) ||
			float64(s.MaxStaleness) > s.MeanStaleness*float64(s.Inputs)*(1+1e-12)+1e-9 || s.Inputs == 0 && s.MaxStaleness != 0:
			return bad("has inputs = %d, max_staleness = %d, mean_staleness = %s: need 0 ≤ mean ≤ max ≤ mean·inputs", s.Inputs, s.MaxStaleness, fmtF(s.MeanStaleness))
		}
		refused := 0
		for _, c := range s.Refused {
			refused += c
		}
		if refused != s.Rejected {
			return bad("refuses %d messages by reason (refused) and %d in all (rejected): they must agree", refused, s.Rejected)
		}
		lastT, lastW = s.Time, s.Window
		next[s.Node]++
		if finished && s.Window >= len(rounds) {
			return bad("is in window %d, but %s has %d", s.Window, RoundsFile, len(rounds))
		}
		k := key{s.Window, s.Node}
		if perWindow[k] == nil {
			perWindow[k] = &sums{}
		}
		perWindow[k].bytes += s.BytesSent
		perWindow[k].rejected += s.Rejected
		perWindow[k].steps += s.Steps
		if s.Evaluated {
			evals[s.Node] = append(evals[s.Node], s)
		}
		return nil
	})
	if err != nil {
		return err
	}
	nodes, err := ReadNodes(dir)
	if err != nil {
		return err
	}
	for n, nl := range nodes {
		if nl.Round >= len(rounds) {
			break // an unfinished run's round without its aggregate line
		}
		got := perWindow[key{nl.Round, nl.Node}]
		if got == nil {
			got = &sums{}
		}
		if got.bytes != nl.BytesSent || got.rejected != nl.Rejected || got.steps != nl.Steps {
			return damaged(dir, MetricsFile, n+1, "is node %d of window %d: bytes_sent %d, rejected %d, steps %d, but its steps in %s add up to %d, %d, %d",
				nl.Node, nl.Round, nl.BytesSent, nl.Rejected, nl.Steps, StepsFile, got.bytes, got.rejected, got.steps)
		}
		// The node's latest evaluation by the window's end.
		var last *metrics.Step
		for i := range evals[nl.Node] {
			if evals[nl.Node][i].Window > nl.Round {
				break
			}
			last = &evals[nl.Node][i]
		}
		if (last != nil) != nl.Evaluated || last != nil && (last.LocalAcc != nl.LocalAcc || last.GlobalAcc != nl.GlobalAcc) {
			return damaged(dir, MetricsFile, n+1, "is node %d of window %d, whose evaluation is not that of the node's latest evaluated step in %s", nl.Node, nl.Round, StepsFile)
		}
	}
	return nil
}

func fmtF(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
