package experiment

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/configs"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/sim"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// FedAvg on a complete graph gives every node the same model, which the
// simulator's memo of global evaluations would evaluate once. With a
// rotating sample the nodes evaluate it on different samples: the records
// are those of a run without memos, bit for bit, each node's global
// accuracy is its model's on its own window of (seed, node, last round),
// and the nodes' accuracies differ.
func TestRotatingGlobalSampleIsPerNodeAndRound(t *testing.T) {
	s := setup{nodes: 6, pool: 600, rounds: 2, strategy: func() strategy.Strategy { return &strategy.FedAvg{} }}.experiment(t)
	s.Model.Hidden = []int{8}
	s.GlobalTest, s.GlobalSample = 40, "rotating"
	s = s.Defaults() // the seed the nodes draw from
	run := func(noMemos bool) ([]*metrics.Round, *Built) {
		t.Helper()
		b, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		if !b.Config.GlobalPerNode {
			t.Fatal("a rotating sample leaves the memo of global evaluations on")
		}
		b.Config.NoMemos = noMemos
		var rs []*metrics.Round
		if err := sim.Run(t.Context(), b.Config, b.Nodes, metrics.SinkFunc(func(r *metrics.Round) error { rs = append(rs, r); return nil })); err != nil {
			t.Fatal(err)
		}
		return rs, b
	}
	withMemos, b := run(false)
	without, _ := run(true)
	if a, c := metricsJSON(t, withMemos), metricsJSON(t, without); a != c {
		t.Fatal("records with the simulator's memos differ from those without")
	}
	lastRound := last(withMemos)
	var accs []float64
	order := data.EvalOrder(s.Data.Test.Len(), s.Seed)
	for i, nd := range b.Nodes {
		r, err := data.NewRotating(s.Data.Test, order, 40, s.Seed, i)
		if err != nil {
			t.Fatal(err)
		}
		r.Round(lastRound.Round)
		want, err := nd.Model().Evaluate(data.NewBatcher(s.Data.Test, r.Samples(), nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		got := lastRound.Nodes[i].GlobalAcc
		if got != want.Accuracy || want.N != 40 {
			t.Errorf("node %d: global accuracy %v, its model on its window of round %d %v (%d samples)", i, got, lastRound.Round, want.Accuracy, want.N)
		}
		accs = append(accs, got)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(accs)))) == 1 {
		t.Errorf("every node has global accuracy %v: the windows look alike", accs[0])
	}
	// Nodes holding one model are measured apart: the memo, keyed by
	// the model, would have given them one result.
	twins := 0
	for i := range b.Nodes {
		for j := range i {
			if slices.Equal(b.Nodes[i].Model().Params(), b.Nodes[j].Model().Params()) && accs[i] != accs[j] {
				twins++
			}
		}
	}
	if twins == 0 {
		t.Error("no two nodes with the same model and different global accuracies: the test does not reach the memo's case")
	}
}

// A node restored from a checkpoint evaluates the window of the round it
// resumes at, as the original does.
func TestRotatingSampleAfterRestore(t *testing.T) {
	c := config.Default()
	c.Nodes, c.Rounds, c.Data.Samples = 4, 3, 400
	c.Model.Hidden = []int{8}
	c.Evaluation.GlobalTest, c.Evaluation.GlobalSample = 30, "rotating"
	keys := wire.NewSeedKeys(c.Seed, c.Nodes)
	build := func() *node.Node {
		n, err := BuildNode(c, 2, keys, nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	hood := node.Neighborhood{In: []int{0, 1, 3}, InDegree: []int{3, 3, 3}, Degree: 3}
	round := func(n *node.Node, r int) nn.EvalResult {
		t.Helper()
		if err := n.Begin(r, hood); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Train(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := n.Outbox(); err != nil {
			t.Fatal(err)
		}
		rd, err := n.End(node.EndOptions{Evaluate: true, Global: true})
		if err != nil {
			t.Fatal(err)
		}
		return rd.Eval.Global
	}
	a := build()
	g0 := round(a, 0)
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	b := build()
	if err := b.Restore(snap); err != nil {
		t.Fatal(err)
	}
	ga, gb := round(a, 1), round(b, 1)
	if ga != gb || ga.N != 30 {
		t.Errorf("round 1: the original measures %+v, the restored node %+v", ga, gb)
	}
	if g0.N != 30 {
		t.Errorf("round 0 evaluated %d global samples, want 30", g0.N)
	}
}

// More nodes than training samples with a sampled partition: every node
// draws per_node samples and splits them; the manifest says what the
// evaluated rounds measured.
func TestSampledPartitionRunsMoreNodesThanSamples(t *testing.T) {
	c := config.Default()
	c.Nodes, c.Rounds, c.Data.Samples, c.FinalRounds = 30, 2, 20, 1
	c.Model.Hidden = []int{4}
	c.Partition.Method, c.Partition.PerNode = "sampled", 10
	c.Evaluation.GlobalTest, c.Evaluation.GlobalSample = 25, "rotating"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := SetupOf(c, loadMNIST(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	for i, sp := range b.Splits {
		if len(sp.Train) != 7 || len(sp.Val) != 1 || len(sp.Test) != 2 {
			t.Fatalf("node %d splits %d / %d / %d, want 7 / 1 / 2", i, len(sp.Train), len(sp.Val), len(sp.Test))
		}
		for _, j := range slices.Concat(sp.Train, sp.Val, sp.Test) {
			if j >= 20 {
				t.Fatalf("node %d holds sample %d beyond data.samples = 20", i, j)
			}
		}
	}
	dir := t.TempDir()
	if _, err := RunToDir(t.Context(), c, dir, nil); err != nil {
		t.Fatal(err)
	}
	m, err := rundir.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ev EvalRecord
	if err := json.Unmarshal(m.Evaluation, &ev); err != nil {
		t.Fatalf("manifest evaluation %s: %v", m.Evaluation, err)
	}
	if ev.GlobalSample != "rotating" || ev.GlobalTest != 25 || !strings.Contains(ev.Text, "25 global test samples per evaluated round") {
		t.Errorf("manifest evaluation %+v", ev)
	}
}

// The estimate states the evaluation's share of an evaluated round:
// quickstart at 10,000 nodes evaluates 10,000 × (10,000 global + 1 local)
// samples against 10,000 × 4 training samples; a rotating sample of 100
// cuts that to 10,000 × 101, with one shared order and no index list per
// node.
func TestEstimateStatesTheEvaluationShare(t *testing.T) {
	text, _ := configs.Read("quickstart")
	c, err := config.Parse(text, "quickstart")
	if err != nil {
		t.Fatal(err)
	}
	c.Nodes, c.Topology.K, c.Rounds, c.Data.Samples = 10000, 10, 3, 60000
	d, _ := KnownShape(c)
	e, err := EstimateWith(c, d)
	if err != nil {
		t.Fatal(err)
	}
	if e.TrainSamples != 40000 || e.EvalSamples != 100_010_000 {
		t.Fatalf("work %d training, %d evaluated samples", e.TrainSamples, e.EvalSamples)
	}
	if want := 100_010_000.0 / 100_050_000; math.Abs(e.Eval.Share-want) > 1e-12 || e.Eval.GlobalSample != "all" {
		t.Errorf("evaluation %+v, want share %v of all", e.Eval, want)
	}
	if !strings.Contains(e.Text(), "evaluation: 99.96 % of an evaluated round's samples") {
		t.Errorf("the estimate does not state the share:\n%s", e.Text())
	}
	for _, p := range e.Parts {
		if strings.Contains(p.Name, "global test") {
			t.Errorf("part %q: the first global test samples need no index list", p.Name)
		}
	}
	c.Evaluation.GlobalTest, c.Evaluation.GlobalSample = 100, "rotating"
	if e, err = EstimateWith(c, d); err != nil {
		t.Fatal(err)
	}
	if e.EvalSamples != 1_010_000 || e.Eval.GlobalSample != "rotating" {
		t.Errorf("rotating 100: %d evaluated samples (%+v)", e.EvalSamples, e.Eval)
	}
	for _, p := range e.Parts {
		if strings.Contains(p.Name, "global test") && p.PerNode && p.Each > 1024 {
			t.Errorf("per-node part %q: %d bytes", p.Name, p.Each)
		}
	}
}
