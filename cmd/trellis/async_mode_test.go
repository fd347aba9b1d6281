package main

import (
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/cluster"
	"github.com/trellis-fl/trellis/config"
)

// The config's [timing] mode decides asynchronous timing; --mode picks
// between the round modes otherwise, and a contradiction is refused, as
// is the simulator's flood pace (Byzantine nodes run).
func TestTimingModeFromConfig(t *testing.T) {
	async := config.TimingDefault()
	asyncCfg := config.Config{Timing: &async}
	byzantine := asyncCfg
	byzantine.Adversary.Fraction = 0.2
	flood := *asyncCfg.Timing
	flood.Flood = 0.05
	flooding := byzantine
	flooding.Timing = &flood
	for _, c := range []struct {
		cfg     config.Config
		flag    string
		changed bool
		want    cluster.Mode
		err     string
	}{
		{asyncCfg, "lockstep", false, cluster.Async, ""},
		{asyncCfg, "async", true, cluster.Async, ""},
		{asyncCfg, "wallclock", true, "", "does not apply"},
		{config.Config{}, "wallclock", true, cluster.Wallclock, ""},
		{config.Config{}, "lockstep", false, cluster.Lockstep, ""},
		{config.Config{}, "async", true, "", `needs [timing] mode = "async"`},
		{byzantine, "lockstep", false, cluster.Async, ""},
		{flooding, "lockstep", false, "", "timing.flood is the Byzantine nodes' pace on the simulator's virtual clock"},
	} {
		got, err := timingMode(c.cfg, c.flag, c.changed)
		if got != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("async %v, --mode %s (set %v): %q, %v; want %q, error with %q", c.cfg.Async(), c.flag, c.changed, got, err, c.want, c.err)
		}
	}
}
