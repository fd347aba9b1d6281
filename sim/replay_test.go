package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// replayNodes are n tiny asynchronous async_mean nodes, each started from
// parameters of its own.
func replayNodes(t *testing.T, n, steps int) ([]*node.Node, []*wire.Identity) {
	t.Helper()
	ids, dir := wire.SimIdentities(3, n)
	nodes := make([]*node.Node, n)
	for i := range nodes {
		nodes[i] = tinyNode(t, i, ids, dir, 3, steps, func(c *node.Config) {
			c.Strategy, c.Async = &strategy.AsyncMean{Decay: 0.5}, &node.Async{MaxStaleness: 4}
			rng := rand.New(rand.NewPCG(uint64(i), 9))
			for k := range c.Model.Params() {
				c.Model.Params()[k] = float32(rng.NormFloat64())
			}
		})
	}
	return nodes, ids
}

// The virtual clock's own order of events, logged (Async.Log) and
// replayed on fresh nodes, gives every node's step records and final
// model bit for bit: two drivers, one the event queue, the other the
// logs, agree. With stragglers and spread latencies many inputs are of
// other steps, some stale (dropped and counted), so the order matters.
func TestReplayOfTheVirtualClock(t *testing.T) {
	const n, steps = 8, 10
	g, err := topology.KRegular(n, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	a := Async{Compute: Dist{"lognormal", 1, 0.5}, Latency: Dist{"uniform", 0.1, 1.5}, Stragglers: 0.25, Slowdown: 4}
	logs := make([][]ReplayEvent, n)
	want := make([][]StepRecord, n)
	a.Log = func(i int, e ReplayEvent) { logs[i] = append(logs[i], e) }
	a.Steps = func(s StepRecord) error { want[s.Node] = append(want[s.Node], s); return nil }
	nodes, ids := replayNodes(t, n, steps)
	cfg := Config{Rounds: steps, Graph: topology.Static(g), Identities: ids, Seed: 3, Async: &a}
	if err := Run(context.Background(), cfg, nodes, metrics.SinkFunc(func(*metrics.Round) error { return nil })); err != nil {
		t.Fatal(err)
	}
	stale, other := 0, 0
	for i := range n {
		for _, s := range want[i] {
			stale += s.Rejected
			if s.MaxStaleness > 0 {
				other++
			}
		}
	}
	if stale == 0 || other == 0 {
		t.Fatalf("%d refusals, %d steps with stale inputs: the schedule does not test the order", stale, other)
	}
	fresh, _ := replayNodes(t, n, steps)
	got := make([][]StepRecord, n)
	err = Replay(context.Background(), cfg, fresh, logs, func(s StepRecord) error { got[s.Node] = append(got[s.Node], s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("node %d:\nreplay %+v\nclock  %+v", i, got[i], want[i])
		}
		a, b := nodes[i].Model().Params(), fresh[i].Model().Params()
		for k := range a {
			if math.Float32bits(a[k]) != math.Float32bits(b[k]) {
				t.Fatalf("node %d parameter %d: %v by the clock, %v replayed", i, k, a[k], b[k])
			}
		}
	}
	// The replay follows the log: node 0's takes left out, its model
	// changes.
	var cut []ReplayEvent
	for _, e := range logs[0] {
		if e.Ev != "take" {
			cut = append(cut, e)
		}
	}
	logs[0] = cut
	other3, _ := replayNodes(t, n, steps)
	if err := Replay(context.Background(), cfg, other3, logs, nil); err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(other3[0].Model().Params(), nodes[0].Model().Params()) {
		t.Error("node 0: the same model without the messages it took")
	}
}

// A log that takes a message no node sends is refused, naming it; so is a
// line that is not an event.
func TestReplayRefusesImpossibleLogs(t *testing.T) {
	g, err := topology.Complete(2)
	if err != nil {
		t.Fatal(err)
	}
	nodes, ids := replayNodes(t, 2, 2)
	cfg := Config{Rounds: 2, Graph: topology.Static(g), Identities: ids, Seed: 3, Async: &Async{}}
	logs := [][]ReplayEvent{
		{{Ev: "begin"}, {Ev: "take", From: 1, Step: 1}, {Ev: "end"}},
		{{Ev: "begin"}, {Ev: "take", From: 0, Step: 0}, {Ev: "end"}},
	}
	err = Replay(context.Background(), cfg, nodes, logs, nil)
	if err == nil || !strings.Contains(err.Error(), "stuck: node 0 takes node 1's message of step 1") {
		t.Fatalf("err = %v, want the stuck take named", err)
	}
	for _, bad := range []string{`{"ev":"jump","step":0}`, `{"ev":"begin","step":0,"node":3}`, `{"ev":"begin",`} {
		if _, err := ReadReplayLog(strings.NewReader(bad + "\n")); err == nil {
			t.Errorf("%s: read without an error", bad)
		}
	}
	evs, err := ReadReplayLog(strings.NewReader(`{"ev":"take","from":2,"step":5,"seq":1,"t":0.25}` + "\n"))
	if err != nil || len(evs) != 1 || evs[0] != (ReplayEvent{Ev: "take", From: 2, Step: 5, Seq: 1, T: 0.25}) {
		t.Fatalf("read %+v, %v", evs, err)
	}
}
