package experiment

import (
	"context"
	"runtime"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/strategy"
)

// TestLightyearRunIsDeterministicAndRecordsScores runs LIGHTYEAR against
// the dynamic malfunction on rotated clients: the metrics, scores included,
// are bit-identical for any worker count, every honest node scores every
// peer with the three kinds, and the scores know which senders were
// malfunctioning.
func TestLightyearRunIsDeterministicAndRecordsScores(t *testing.T) {
	c := tinyConfig(t, `
[partition]
method = "iid"
shift = "rotate"
shift_degrees = 90
split = [0.6, 0.2, 0.2]
[adversary]
fraction = 0.5
attack = "dynamic"
percent = 120.5
same_for_all = true
[strategy]
name = "lightyear"
[strategy.options]
n_val = 16
`)
	c.Rounds = 2
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var want string
	for _, w := range []int{1, 3} {
		runtime.GOMAXPROCS(w)
		c.Run.Workers = w
		s, err := SetupOf(c, loadMNIST(t))
		if err != nil {
			t.Fatal(err)
		}
		var rs []*metrics.Round
		if err := s.Run(context.Background(), metrics.SinkFunc(func(r *metrics.Round) error { rs = append(rs, r); return nil })); err != nil {
			t.Fatal(err)
		}
		got := metricsJSON(t, rs)
		if want == "" {
			want = got
			for _, n := range rs[0].Nodes {
				byz := 0
				for _, sc := range n.Scores {
					if sc.Byzantine {
						byz++
					}
					if !(sc.Value >= 0 && sc.Value <= 1) {
						t.Errorf("node %d: score %+v outside [0, 1]", n.Node, sc)
					}
				}
				// 4 nodes, 2 malfunctioning: 3 peers × every kind, of
				// which 2 or 1 peers malfunction.
				nk := len(strategy.ScoreKinds)
				if len(n.Scores) != 3*nk || (n.Byzantine && byz != nk) || (!n.Byzantine && byz != 2*nk) {
					t.Errorf("node %d (byzantine %v): %d scores, %d of malfunctioning peers", n.Node, n.Byzantine, len(n.Scores), byz)
				}
			}
			continue
		}
		if got != want {
			t.Fatalf("workers %d: metrics differ", w)
		}
	}
}

// TestSweepOverTables: a grid over whole [strategy] tables sets the keys
// each table holds, keeps the options of one run out of the next, and
// names the run by its keys; a bad value fails at expansion.
func TestSweepOverTables(t *testing.T) {
	c, err := config.Parse([]byte(`
[sweep.grid]
strategy = [{ name = "robust", rule = "krum" }, { name = "ditto", options = { lambda = 0.5 } }, { name = "fedavg" }]
`), "grid.toml")
	if err != nil {
		t.Fatal(err)
	}
	runs, keys, err := c.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 || len(keys) != 1 || keys[0] != "strategy" {
		t.Fatalf("%d runs, keys %v", len(runs), keys)
	}
	want := []string{"krum", "ditto[lambda=0.5]", "fedavg"}
	for i, r := range runs {
		if got := r.Config.Label(); got != want[i] {
			t.Errorf("run %d label %q, want %q", i, got, want[i])
		}
	}
	if runs[1].Params["strategy"] != "name=ditto,options.lambda=0.5" {
		t.Errorf("params %v", runs[1].Params)
	}
	bad, err := config.Parse([]byte("[sweep.grid]\nstrategy = [{ name = \"fedavgg\" }]\n"), "bad.toml")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := bad.Expand(); err == nil {
		t.Error("a table with an unknown strategy expanded")
	}
}
