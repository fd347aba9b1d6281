package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/metrics"
)

// asyncRun writes a small asynchronous run as a driver does: windows of 1
// virtual second, two nodes, node 0 stepping every 1 s and node 1 every
// 1.5 s, each window's node lines the sums of its steps and each node's
// latest evaluation.
func asyncRun(t *testing.T, dir string) {
	t.Helper()
	s := spec(0)
	s.Edges, s.Steps = false, true
	s.Manifest.Async = &AsyncClock{Window: 1, SyncRound: 1.7}
	w, err := Create(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	steps := []metrics.Step{
		{Window: 1, Time: 1, Step: 0, NodeRound: metrics.NodeRound{Node: 0, Evaluated: true, LocalAcc: 0.5, Steps: 4, BytesSent: 100}},
		{Window: 1, Time: 1.5, Step: 0, NodeRound: metrics.NodeRound{Node: 1, Evaluated: true, LocalAcc: 0.25, Steps: 4, BytesSent: 100, Rejected: 1}, Inputs: 1, MaxStaleness: 1, MeanStaleness: 1, Refused: map[string]int{"stale": 1}},
		{Window: 2, Time: 2, Step: 1, NodeRound: metrics.NodeRound{Node: 0, Steps: 4, BytesSent: 100}, Inputs: 1, MaxStaleness: 1, MeanStaleness: 1},
		{Window: 3, Time: 3, Step: 2, NodeRound: metrics.NodeRound{Node: 0, Evaluated: true, LocalAcc: 0.75, Steps: 4, BytesSent: 100}, Inputs: 2, MaxStaleness: 2, MeanStaleness: 1.5},
		{Window: 3, Time: 3, Step: 1, NodeRound: metrics.NodeRound{Node: 1, Evaluated: true, LocalAcc: 0.5, Steps: 4, BytesSent: 100}, Inputs: 1},
	}
	latest := []metrics.NodeRound{{Node: 0}, {Node: 1}}
	k := 0
	for win := range 4 {
		r := &metrics.Round{Round: win, Nodes: []metrics.NodeRound{{Node: 0}, {Node: 1}}}
		for ; k < len(steps) && steps[k].Window == win; k++ {
			st := steps[k]
			if err := w.Step(st); err != nil {
				t.Fatal(err)
			}
			n := &r.Nodes[st.Node]
			n.Steps += st.Steps
			n.BytesSent += st.BytesSent
			n.Rejected += st.Rejected
			if st.Evaluated {
				latest[st.Node] = st.NodeRound
			}
		}
		r.Evaluated = latest[0].Evaluated && latest[1].Evaluated
		for i := range r.Nodes {
			r.Nodes[i].Evaluated, r.Nodes[i].LocalAcc = latest[i].Evaluated, latest[i].LocalAcc
		}
		r.Summarize()
		if err := w.Round(r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
}

// Verify takes an asynchronous run's steps.jsonl as written and finds it
// changed: a step outside its window, steps out of order, a node's step
// numbers with a hole, staleness fields that cannot be, node lines that
// are not the sums of their window's steps, an evaluation not the latest,
// the file missing.
func TestVerifySteps(t *testing.T) {
	dir := t.TempDir()
	asyncRun(t, dir)
	if err := Verify(dir, 2, 2); err != nil {
		t.Fatal(err)
	}
	steps, err := ReadSteps(dir)
	if err != nil || len(steps) != 5 || steps[3].MeanStaleness != 1.5 {
		t.Fatalf("read back %+v, %v", steps, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, StepsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	for _, c := range []struct {
		name, want string
		edit       func(l []string) []string
	}{
		{"outside its window", "outside its window", func(l []string) []string {
			l[2] = strings.Replace(l[2], `"time":2,`, `"time":2.5,`, 1)
			l[2] = strings.Replace(l[2], `"window":2,`, `"window":1,`, 1)
			return l
		}},
		{"out of order", "before the step above", func(l []string) []string { l[0], l[1] = l[1], l[0]; return l }},
		{"a hole", "want 1", func(l []string) []string { l[2] = strings.Replace(l[2], `"step":1,`, `"step":2,`, 1); return l }},
		{"staleness", "mean ≤ max", func(l []string) []string {
			l[3] = strings.Replace(l[3], `"max_staleness":2`, `"max_staleness":4`, 1)
			return l
		}},
		{"traffic", "add up to", func(l []string) []string {
			l[2] = strings.Replace(l[2], `"bytes_sent":100`, `"bytes_sent":101`, 1)
			return l
		}},
		{"evaluation", "latest evaluated step", func(l []string) []string {
			l[3] = strings.Replace(l[3], `"local_acc":0.75`, `"local_acc":0.5`, 1)
			return l
		}},
		{"refusals by reason", "they must agree", func(l []string) []string {
			l[1] = strings.Replace(l[1], `"refused":{"stale":1}`, `"refused":{"stale":2}`, 1)
			return l
		}},
		{"missing", "is missing", func([]string) []string { return nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			asyncRun(t, d)
			l := c.edit(append([]string(nil), lines...))
			if l == nil {
				os.Remove(filepath.Join(d, StepsFile))
			} else {
				os.WriteFile(filepath.Join(d, StepsFile), []byte(strings.Join(l, "")), 0o644)
			}
			err := Verify(d, 2, 2)
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want ErrDamaged with %q", err, c.want)
			}
		})
	}
}
