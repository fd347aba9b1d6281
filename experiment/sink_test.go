package experiment

import (
	"testing"
	"time"

	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/strategy"
)

// A viewer sink that blocks forever cannot stall a run: the run finishes,
// and the run-directory-like sink behind the same fan-out receives every
// round in order.
func TestABlockedViewerNeverStallsARun(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var got []int
	out := metrics.NewFanout()
	out.Add(metrics.SinkFunc(func(r *metrics.Round) error { got = append(got, r.Round); return nil }), metrics.Every, 0)
	out.Add(metrics.SinkFunc(func(*metrics.Round) error { <-release; return nil }), metrics.Latest, 1)
	s := setup{nodes: 4, pool: 400, rounds: 6, strategy: func() strategy.Strategy { return &strategy.FedAvg{} }}
	done := make(chan error, 1)
	go func() { done <- s.runCtx(t, t.Context(), out) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Minute): // a deadlock check, not a timing claim
		t.Fatal("the run is stalled behind a blocked viewer")
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 || got[5] != 5 {
		t.Fatalf("the Every sink got rounds %v, want 0..5", got)
	}
	if st := out.Stats(); st[1].Skipped == 0 {
		t.Fatalf("the blocked viewer skipped nothing: %+v", st)
	}
}
