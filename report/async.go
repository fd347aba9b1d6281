package report

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
)

// asyncRows is how many windows an asynchronous run's table shows at most:
// evenly spaced, the last always among them.
const asyncRows = 20

// asyncReport is results.md's section on the asynchronous runs under dir
// (those with steps.jsonl): their rounds are windows of virtual time, so
// each gets a table against virtual time, how stale the inputs its nodes
// combined were, and how many steps its nodes took against the rounds a
// synchronous run on the same clock would have done
// (metrics.SummarizeSteps).
func asyncReport(dir string) (string, error) {
	var md bytes.Buffer
	err := eachRun(dir, rundir.StepsFile, func(p string, c config.Config) error {
		man, err := rundir.ReadManifest(p)
		if err != nil {
			return err
		}
		if man.Async == nil {
			return fmt.Errorf("%s: %s without the virtual clock in %s", p, rundir.StepsFile, rundir.ManifestFile)
		}
		steps, err := rundir.ReadSteps(p)
		if err != nil {
			return err
		}
		rounds, err := rundir.ReadRounds(p)
		if err != nil {
			return err
		}
		if md.Len() == 0 {
			md.WriteString("\n## Asynchronous timing (virtual time)\n\n")
			md.WriteString("An asynchronous run's rounds are windows of virtual time: round r covers [r·w, (r+1)·w) and its\n" +
				"record is each node's latest state at its end. Staleness is in the receiver's steps.\n")
		}
		rel, _ := filepath.Rel(dir, p)
		writeAsyncRun(&md, rel, c, man.Async, steps, rounds)
		return nil
	})
	return md.String(), err
}

func writeAsyncRun(md *bytes.Buffer, name string, c config.Config, clock *rundir.AsyncClock, steps []metrics.Step, rounds []*metrics.Round) {
	s := metrics.SummarizeSteps(steps, c.Nodes, clock.SyncRound)
	fmt.Fprintf(md, "\n### %s (%s)\n\n", name, c.Label())
	fmt.Fprintf(md, "- %d node steps in %.4g virtual s (windows of %.4g s); per node %d to %d, mean %.2f.\n",
		s.Steps, s.EndTime, clock.Window, s.NodeStepsMin, s.NodeStepsMax, s.NodeStepsMean)
	fmt.Fprintf(md, "- Waiting for the slowest node, a synchronous round takes %.4g s (its step and slowest link): %s in the same time.\n",
		clock.SyncRound, counted(s.SyncRounds, "round"))
	fmt.Fprintf(md, "- Gain over synchronous rounds (a node's steps per synchronous round's time): min %.3f, median %.3f, max %.3f.\n",
		s.GainMin, s.GainMedian, s.GainMax)
	which := "what arrived since the node's last combine"
	if c.Timing != nil && c.Timing.Inputs == "latest" {
		which = "every in-neighbour's newest model"
	}
	fmt.Fprintf(md, "- Staleness of the %d inputs combined (each step: %s): mean %.3f; the steps' largest: p50 %d, p90 %d, p99 %d, max %d; %d steps combined no input.\n",
		s.Inputs, which, s.MeanStaleness, s.StaleP50, s.StaleP90, s.StaleP99, s.StaleMax, s.NoInputs)
	writeAsyncPrivacy(md, steps)
	md.WriteString("\n")
	type win struct {
		steps, inputs, worst int
		sum                  float64
	}
	per := make([]win, len(rounds))
	for _, st := range steps {
		if st.Window < 0 || st.Window >= len(per) {
			continue
		}
		w := &per[st.Window]
		w.steps++
		w.inputs += st.Inputs
		w.sum += st.MeanStaleness * float64(st.Inputs)
		w.worst = max(w.worst, st.MaxStaleness)
	}
	md.WriteString("Each row's staleness is over the steps since the row above (at most 20 rows: windows evenly spaced).\n\n")
	md.WriteString("| window | virtual time (end, s) | node steps by then | honest global acc | honest local acc | mean staleness | max staleness |\n")
	md.WriteString("|---:|---:|---:|---:|---:|---:|---:|\n")
	every := max(1, (len(rounds)+asyncRows-1)/asyncRows)
	var span win // the windows since the row above
	done := 0
	for i, r := range rounds {
		w := per[i]
		done += w.steps
		span.inputs += w.inputs
		span.sum += w.sum
		span.worst = max(span.worst, w.worst)
		if i%every != 0 && i != len(rounds)-1 {
			continue
		}
		g, l, mean := "–", "–", "–"
		if r.Evaluated {
			l = fmt.Sprintf("%.4f", r.HonestLocalAcc)
			if c.Evaluation.GlobalTest != 0 {
				g = fmt.Sprintf("%.4f", r.HonestGlobalAcc)
			}
		}
		if span.inputs > 0 {
			mean = fmt.Sprintf("%.2f", span.sum/float64(span.inputs))
		}
		fmt.Fprintf(md, "| %d | %.4g | %d | %s | %s | %s | %d |\n", r.Round, float64(r.Round+1)*clock.Window, done, g, l, mean, span.worst)
		span = win{}
	}
}

// writeAsyncPrivacy is the DP line of an asynchronous run whose honest
// nodes report ε: each step is a release, so a node's ε is that of the
// steps it took, and the fast nodes spend their budget sooner than the
// stragglers.
func writeAsyncPrivacy(md *bytes.Buffer, steps []metrics.Step) {
	type last struct {
		step, steps int
		eps, delta  float64
	}
	final := map[int]*last{}
	for _, st := range steps {
		if st.Byzantine || st.Epsilon == nil || st.Delta == nil {
			continue
		}
		l := final[st.Node]
		if l == nil {
			l = &last{step: -1}
			final[st.Node] = l
		}
		l.steps++
		if st.Step > l.step {
			l.step, l.eps, l.delta = st.Step, *st.Epsilon, *st.Delta
		}
	}
	if len(final) == 0 {
		return
	}
	lo, hi := -1, -1
	for i, l := range final {
		if lo < 0 || l.eps < final[lo].eps || (l.eps == final[lo].eps && i < lo) {
			lo = i
		}
		if hi < 0 || l.eps > final[hi].eps || (l.eps == final[hi].eps && i < hi) {
			hi = i
		}
	}
	fmt.Fprintf(md, "- Differential privacy: every step is a release, so a node's ε is that of the steps it took: the honest nodes end between ε = %.4g (node %d, %s) and ε = %.4g (node %d, %s), at δ = %.3g.\n",
		final[lo].eps, lo, counted(final[lo].steps, "step"), final[hi].eps, hi, counted(final[hi].steps, "step"), final[hi].delta)
}

// counted is k units: "1 step", "3 steps".
func counted(k int, unit string) string {
	if k == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", k, unit)
}
