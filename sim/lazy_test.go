package sim

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// runRecords runs r to the end and returns its records.
func runRecords(t *testing.T, r *runner) []*metrics.Round {
	t.Helper()
	var recs []*metrics.Round
	if err := r.run(context.Background(), metrics.SinkFunc(func(rec *metrics.Round) error { recs = append(recs, rec); return nil })); err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestLazyCraftsMatchEager: the records of runs whose last phase's crafted
// vectors are made per receiver (the default) are those of runs that make
// them all up front (Rewrite, as before), for a local, an omniscient, a
// history-using receiver-dependent attack and one vector for all
// (SameForAll), with link drops, with and without the wire round trip,
// with 1, 2 and 4 workers (the last two under -race check that workers
// crafting at once share views safely).
func TestLazyCraftsMatchEager(t *testing.T) {
	const n, rounds = 12, 4
	ids, dir := wire.SimIdentities(13, n)
	g, err := topology.KRegular(n, 4, 13)
	if err != nil {
		t.Fatal(err)
	}
	drops, err := topology.NewDrops(0.2, 13)
	if err != nil {
		t.Fatal(err)
	}
	spec := nn.Spec{Kind: "logreg", Input: []int{2}, Classes: 2}
	cases := []struct {
		attack string
		same   bool
	}{{"gaussian", false}, {"alie", false}, {"adaptive_receiver", false}, {"dynamic", true}}
	for _, c := range cases {
		for _, wrt := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/same_for_all=%v/wire=%v", c.attack, c.same, wrt), func(t *testing.T) {
				run := func(workers int, eager bool) []*metrics.Round {
					atk, err := attack.New(c.attack, attack.Params{Sigma: 0.5, Model: &spec})
					if err != nil {
						t.Fatal(err)
					}
					nodes := make([]*node.Node, n)
					for i := range nodes {
						nodes[i] = tinyNode(t, i, ids, dir, 13, rounds, func(c *node.Config) { c.Strategy = &strategy.FedAvg{} })
					}
					r, err := newRunner(Config{Rounds: rounds, Graph: topology.Static(g), Drops: drops, Identities: ids, Seed: 13,
						WireRoundTrip: wrt, Workers: workers,
						Adversary: adversary.Config{Byzantine: []int{2, 5, 9}, Attack: atk, SameForAll: c.same}}, nodes)
					if err != nil {
						t.Fatal(err)
					}
					r.eagerCrafts = eager
					return runRecords(t, r)
				}
				want := run(1, true)
				for _, workers := range []int{1, 2, 4} {
					if got := run(workers, false); !reflect.DeepEqual(got, want) {
						t.Fatalf("%d workers making the crafted vectors lazily: other records than making them up front", workers)
					}
				}
			})
		}
	}
}

// wideData is an in-memory nn.Batches of four samples of d features (one
// per node: it has a position; x may be shared).
type wideData struct {
	d   int
	x   []float32
	y   []int
	pos int
}

func newWideData(d int) *wideData {
	w := &wideData{d: d, x: make([]float32, 4*d), y: []int{0, 1, 1, 0}}
	for k := range w.x {
		w.x[k] = float32(k%5) - 2
	}
	return w
}

func (w *wideData) Len() int { return len(w.y) }
func (w *wideData) Reset()   { w.pos = 0 }
func (w *wideData) Next(x []float32, y []int) int {
	n := min(len(y), len(w.y)-w.pos)
	copy(x, w.x[w.pos*w.d:(w.pos+n)*w.d])
	copy(y, w.y[w.pos:w.pos+n])
	w.pos += n
	return n
}

// probed is FedAvg that calls probe from its Combine.
type probed struct {
	*strategy.FedAvg
	probe func()
}

func (p *probed) Combine(v *strategy.View, in []strategy.Incoming) (map[int]float64, error) {
	if p.probe != nil {
		p.probe()
	}
	return p.FedAvg.Combine(v, in)
}

// TestLazyCraftsHoldWorkersTimesLinks: 200 nodes on a 10-regular graph,
// 30 % of them Byzantine with the Gaussian attack: while the last node
// combines (the phase's last delivery, one worker), the live heap is
// larger than with no Byzantine node by about the one worker's 10 crafted
// vectors and a few hundred bytes per link (adversary.HeldPerWorker,
// HeldPerLink), not by the 60 × 10 vectors made up front before the
// simulator made them per receiver (measured both ways: the up-front run must show
// them, or the measure would show nothing). The workers' buffers never
// number more than workers × k, with 1, 2 and 4 workers.
func TestLazyCraftsHoldWorkersTimesLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 200 nodes with 10,000-parameter models several times; skipped with -short")
	}
	const n, k, features, rounds = 200, 10, 5000, 2
	params := 2*features + 2
	vecBytes := int64(4 * params)
	ids, dir := wire.SimIdentities(17, n)
	g, err := topology.KRegular(n, k, 17)
	if err != nil {
		t.Fatal(err)
	}
	byz, err := adversary.Choose(n, nil, 0.3, 17)
	if err != nil {
		t.Fatal(err)
	}
	gauss, err := attack.New("gaussian", attack.Params{Sigma: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	data := newWideData(features)
	// run returns the live heap while node n−1 combines in the last round,
	// and the runner's crafted-vector buffers (not the runner: its nodes
	// would be live in the next run's measure).
	run := func(byz []int, workers int, eager bool) (uint64, []craftBufs) {
		var live uint64
		nodes := make([]*node.Node, n)
		for i := range nodes {
			m, err := nn.Build(nn.Spec{Kind: "logreg", Input: []int{features}, Classes: 2}, 1, nn.Options{Batch: 4})
			if err != nil {
				t.Fatal(err)
			}
			opt, _ := nn.NewOptimizer(nn.OptimizerSpec{LR: 0.1}, m.NumParams())
			s := &probed{FedAvg: &strategy.FedAvg{}}
			if i == n-1 {
				calls := 0
				s.probe = func() {
					if calls++; calls == rounds {
						runtime.GC()
						var ms runtime.MemStats
						runtime.ReadMemStats(&ms)
						live = ms.HeapAlloc
					}
				}
			}
			mine := *data
			nodes[i], err = node.New(node.Config{ID: i, Model: m, Optimizer: opt, Train: nn.TrainConfig{Epochs: 1},
				TrainData: &mine, Test: &mine, Strategy: s, Identity: ids[i], Directory: dir, Seed: 17, Rounds: rounds})
			if err != nil {
				t.Fatal(err)
			}
		}
		r, err := newRunner(Config{Rounds: rounds, EvalEvery: rounds, Graph: topology.Static(g), Identities: ids, Seed: 17,
			Workers: workers, Adversary: adversary.Config{Byzantine: byz, Attack: gauss}}, nodes)
		if err != nil {
			t.Fatal(err)
		}
		r.eagerCrafts = eager
		runRecords(t, r)
		if live == 0 {
			t.Fatal("node n−1 never combined in the last round")
		}
		return live, r.crafts
	}
	none, _ := run(nil, 1, false)
	liars, crafts := run(byz, 1, false)
	upFront, _ := run(byz, 1, true)
	diff := func(a, b uint64) int64 { return int64(a) - int64(b) }
	t.Logf("live heap while the last node combines: %d B with no liar, %+d B with %d Gaussian liars, %+d B with their vectors made up front (a vector is %d B)",
		none, diff(liars, none), len(byz), diff(upFront, none), vecBytes)
	links := int64(len(byz) * k)
	if d := diff(upFront, none); d < links*vecBytes/2 {
		t.Fatalf("made up front, the %d crafted vectors add %d B to the live heap, want at least half their %d B: the measure does not see them", links, d, links*vecBytes)
	}
	// What the adversary says it holds, with room for the allocator's
	// size classes and the measure's noise.
	held := adversary.HeldPerWorker(k, vecBytes) + links*adversary.HeldPerLink
	if d := diff(liars, none); d > 2*held {
		t.Errorf("made per receiver, the crafted vectors add %d B to the live heap, want at most twice HeldPerWorker + links × HeldPerLink = %d B (%d made up front would be %d B)",
			d, 2*held, links, links*vecBytes)
	}
	if bufs := len(crafts[0].bufs); bufs == 0 || bufs > k {
		t.Errorf("one worker holds %d crafted-vector buffers, want 1 to k = %d", bufs, k)
	}
	for _, workers := range []int{2, 4} {
		_, crafts := run(byz, workers, false)
		total := 0
		for _, c := range crafts {
			total += len(c.bufs)
			for _, b := range c.bufs {
				if int64(4*cap(b)) != vecBytes {
					t.Fatalf("a buffer of %d values, want %d", cap(b), params)
				}
			}
		}
		if total == 0 || total > workers*k {
			t.Errorf("%d workers hold %d crafted-vector buffers, want at most workers × k = %d", workers, total, workers*k)
		}
	}
}
