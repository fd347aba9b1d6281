package cluster

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

// A node reads its windows on its clock: with a clock an hour and a half
// ahead, an epoch an hour away is half an hour past (Δ = 10 min: round 3
// is open, 9 min 50 s of it left), so the node joins round 3, whose start
// is past, where on the system clock it waits for round 0.
func TestWindowsAreOnTheNodesClock(t *testing.T) {
	epoch := time.Now().Add(time.Hour)
	d := func(c Clock) *driver {
		tm, err := Timing{Mode: Wallclock, Epoch: epoch, Delta: 10 * time.Minute, Clock: c}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		return &driver{cfg: NodeConfig{Timing: tm}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	}
	ahead := d(SkewedClock{Offset: 90*time.Minute + 10*time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a wait that is not over at once is stopped, and says so
	// Round 3's window ends in 9 min 50 s, more than Grace + Δ/4 (3.5
	// min), so the node takes part in it.
	if r, _ := ahead.waitRound(ctx, 0); r != 3 {
		t.Errorf("a node 1 h 30 min ahead joins round %d, want 3", r)
	}
	if r, ok := d(nil).waitRound(ctx, 0); r != 0 || ok {
		t.Errorf("on the system clock: round %d, ok %v; want round 0 and the wait stopped", r, ok)
	}
	start, _ := ahead.window(3)
	if u := ahead.until(start); u > -10*time.Second+time.Second || u < -10*time.Second-time.Minute {
		t.Errorf("round 3 started %v ago on the node's clock, want about 10 s", -u)
	}
}
