package sim

import (
	"context"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// seenInput is one input an asynchronous strategy combined.
type seenInput struct {
	Node, Step, From, Staleness int
}

// asyncSpy is async_mean recording what each Combine was handed (called
// from the driver's event loop only).
type asyncSpy struct {
	strategy.AsyncMean
	log *[]seenInput
}

func (s *asyncSpy) AsyncInputs() bool { return true }
func (s *asyncSpy) Combine(v *strategy.View, in []strategy.Incoming) (map[int]float64, error) {
	for _, m := range in {
		*s.log = append(*s.log, seenInput{v.ID, v.Round, m.From, m.Staleness})
	}
	return s.AsyncMean.Combine(v, in)
}

// asyncRecords runs n tiny asynchronous nodes on g for steps steps and
// returns the window records and the step records.
func asyncRecords(t *testing.T, g *topology.Graph, steps int, a Async, maxStale, workers int, wrt bool, st func() strategy.Strategy) ([]*metrics.Round, []StepRecord) {
	t.Helper()
	return asyncRecordsAdv(t, g, steps, a, maxStale, workers, wrt, st, adversary.Config{})
}

// asyncRecordsAdv is asyncRecords with Byzantine nodes (adv; its Nodes
// and Seed are the run's).
func asyncRecordsAdv(t *testing.T, g *topology.Graph, steps int, a Async, maxStale, workers int, wrt bool, st func() strategy.Strategy, adv adversary.Config) ([]*metrics.Round, []StepRecord) {
	t.Helper()
	n := g.N()
	ids, dir := wire.SimIdentities(3, n)
	nodes := make([]*node.Node, n)
	for i := range nodes {
		nodes[i] = tinyNode(t, i, ids, dir, 3, steps, func(c *node.Config) {
			c.Strategy, c.Async = st(), &node.Async{MaxStaleness: maxStale}
			rng := rand.New(rand.NewPCG(uint64(i), 9))
			for k := range c.Model.Params() {
				c.Model.Params()[k] = float32(rng.NormFloat64())
			}
		})
	}
	var recs []*metrics.Round
	var srecs []StepRecord
	a.Steps = func(s StepRecord) error { srecs = append(srecs, s); return nil }
	err := Run(context.Background(), Config{Rounds: steps, Graph: topology.Static(g), Identities: ids, Seed: 3,
		Workers: workers, WireRoundTrip: wrt, Async: &a, Adversary: adv}, nodes,
		metrics.SinkFunc(func(r *metrics.Round) error { recs = append(recs, r); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	return recs, srecs
}

// The same config and seed give the same records, byte for byte, with
// GOMAXPROCS 1 and 2, any number of workers, and with every message
// through the wire encoding: the order of events is the virtual clock's
// (drawn from the seed), never the machine's. Also with Byzantine nodes,
// whose attacks read the honest models known at their steps (alie, from
// the view; gaussian, from the attack's stream), and with a flooding one.
func TestAsyncRecordsIndependentOfCoresAndWorkers(t *testing.T) {
	for _, c := range []struct {
		attack string
		flood  float64
	}{{"", 0}, {"alie", 0}, {"gaussian", 0}, {"gaussian", 0.3}} {
		var adv adversary.Config
		if c.attack != "" {
			atk, err := attack.New(c.attack, attack.Params{Sigma: 1})
			if err != nil {
				t.Fatal(err)
			}
			adv = adversary.Config{Byzantine: []int{2, 7, 9}, Attack: atk}
		}
		asyncIndependent(t, adv, c.flood)
	}
}

func asyncIndependent(t *testing.T, adv adversary.Config, flood float64) {
	g, err := topology.KRegular(12, 4, 5)
	if err != nil {
		t.Fatal(err)
	}
	a := Async{Compute: Dist{"lognormal", 1, 0.5}, Latency: Dist{"uniform", 0.1, 0.6}, Stragglers: 0.25, Slowdown: 5, Flood: flood}
	run := func(procs, workers int, wrt bool) []byte {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		recs, steps := asyncRecordsAdv(t, g, 12, a, 6, workers, wrt, func() strategy.Strategy { return &strategy.AsyncMean{Decay: 0.5} }, adv)
		b, err := json.Marshal(struct {
			R []*metrics.Round
			S []StepRecord
		}{recs, steps})
		if err != nil {
			t.Fatal(err)
		}
		if honest := 0; flood == 0 && len(steps) != 12*12 {
			t.Fatalf("%d step records, want 144", len(steps))
		} else if flood > 0 {
			for _, s := range steps {
				if !slices.Contains(adv.Byzantine, s.Node) {
					honest++
				}
			}
			if honest != 9*12 || len(steps) < 9*12+3*40 {
				t.Fatalf("flooding: %d step records, %d honest; want 108 honest and the flooders' many", len(steps), honest)
			}
		}
		return b
	}
	want := run(1, 1, false)
	type setting struct {
		procs, workers int
		wrt            bool
	}
	settings := []setting{{2, 2, false}, {2, 3, false}, {1, 4, false}, {2, 2, true}}
	if len(adv.Byzantine) > 0 { // fewer, for the suite's time
		settings = []setting{{2, 3, false}, {2, 2, true}}
	}
	for _, c := range settings {
		if got := run(c.procs, c.workers, c.wrt); !slices.Equal(got, want) {
			t.Fatalf("attack %v, flood %v: GOMAXPROCS %d, %d workers, wire %v: other records than GOMAXPROCS 1, 1 worker", adv.Attack, flood, c.procs, c.workers, c.wrt)
		}
	}
}

// Two nodes on one link, constant step time 1 and a straggler 3× slower,
// latency 0.5, four steps each: the fast node ends its steps at t = 1,
// 2, 3, 4, the slow one at 3, 6, 9, 12 (ties by node id). Worked by hand:
// the slow node's step 0 (t = 3) combines the fast node's newest, its
// step 1 (sent at 2, arrived 2.5; staleness 0: the sender is ahead); the
// fast node's step 3 (t = 4) the slow node's step 0 (sent at 3, arrived
// 3.5), 3 steps old; the slow node's step 1 (t = 6) the fast node's step
// 3 (arrived 4.5). With max_staleness 2 the fast node drops that stale
// input and counts it.
func TestAsyncWorkedSchedule(t *testing.T) {
	g, err := topology.Complete(2)
	if err != nil {
		t.Fatal(err)
	}
	a := Async{Compute: Dist{"constant", 1, 0}, Latency: Dist{"constant", 0.5, 0}, Stragglers: 0.5, Slowdown: 3, Window: 2}
	sched, err := NewSchedule(a, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	slow := slices.Index(sched.Straggler, true)
	fast := 1 - slow
	for _, maxStale := range []int{4, 2} {
		var log []seenInput
		recs, steps := asyncRecords(t, g, 4, a, maxStale, 2, false, func() strategy.Strategy { return &asyncSpy{log: &log} })
		want := []seenInput{{slow, 0, fast, 0}, {fast, 3, slow, 3}, {slow, 1, fast, 0}}
		if maxStale == 2 {
			want = slices.Delete(want, 1, 2)
		}
		if !slices.Equal(log, want) {
			t.Fatalf("max_staleness %d: inputs %v, want %v", maxStale, log, want)
		}
		type at struct {
			t          float64
			node, step int
		}
		var got []at
		for _, s := range steps {
			got = append(got, at{s.Time, s.Node, s.Step})
		}
		wantAt := []at{{1, fast, 0}, {2, fast, 1}, {3, min(fast, slow), -1}, {3, max(fast, slow), -1}, {4, fast, 3}, {6, slow, 1}, {9, slow, 2}, {12, slow, 3}}
		for k := range wantAt {
			if wantAt[k].step == -1 { // the tie at t = 3: the fast node's step 2, the slow one's 0
				wantAt[k].step = map[bool]int{true: 2, false: 0}[wantAt[k].node == fast]
			}
		}
		if !slices.Equal(got, wantAt) {
			t.Fatalf("steps %v, want %v", got, wantAt)
		}
		stale := steps[4].Rejected
		if (maxStale == 2) != (stale == 1) {
			t.Fatalf("max_staleness %d: the fast node's step 3 refused %d", maxStale, stale)
		}
		if want := map[bool]map[string]int{true: {"stale": 1}}[maxStale == 2]; !maps.Equal(steps[4].Refused, want) {
			t.Fatalf("max_staleness %d: the fast node's step 3 refused %v by reason, want %v", maxStale, steps[4].Refused, want)
		}
		if r := steps[4]; maxStale == 4 && (r.Inputs != 1 || r.MaxStaleness != 3 || r.MeanStaleness != 3) {
			t.Fatalf("the fast node's step 3: %d inputs, staleness max %d mean %v; want its one input 3 steps old", r.Inputs, r.MaxStaleness, r.MeanStaleness)
		}
		// Windows of 2 up to the one holding t = 12: [0, 2) … [12, 14).
		if len(recs) != 7 {
			t.Fatalf("%d windows, want 7", len(recs))
		}
		total := 0
		for k, r := range recs {
			if r.Round != k {
				t.Fatalf("window %d numbered %d", k, r.Round)
			}
			for _, nr := range r.Nodes {
				total += nr.Steps
			}
		}
		if want := 8 * steps[0].Steps; total != want || want == 0 {
			t.Fatalf("the windows count %d training steps, the step records %d", total, want)
		}
	}
	// With a horizon of 6 the slow node begins no step ending at 9.
	a.Horizon = 6
	var log []seenInput
	_, steps := asyncRecords(t, g, 4, a, 4, 1, false, func() strategy.Strategy { return &asyncSpy{log: &log} })
	if len(steps) != 6 || steps[5].Time != 6 || steps[5].Node != slow {
		t.Fatalf("horizon 6: %d steps, the last %+v", len(steps), steps[len(steps)-1])
	}
}

// robust with a rule and a staleness bound runs in asynchronous timing
// (its row has Async), every node taking its steps.
func TestAsyncRobust(t *testing.T) {
	g, err := topology.KRegular(8, 4, 5)
	if err != nil {
		t.Fatal(err)
	}
	a := Async{Compute: Dist{"uniform", 0.5, 1.5}, Latency: Dist{"constant", 0.2, 0}, Stragglers: 0.25, Slowdown: 3}
	_, steps := asyncRecords(t, g, 6, a, 5, 2, false, func() strategy.Strategy {
		s, err := strategy.New("robust", strategy.Params{Rule: "trimmed_mean", Options: map[string]float64{"staleness_bound": 2}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
	if len(steps) != 8*6 {
		t.Fatalf("%d step records, want 48", len(steps))
	}
	for _, s := range steps {
		if s.Diverged {
			t.Fatalf("node %d diverged at step %d", s.Node, s.Step)
		}
	}
}
