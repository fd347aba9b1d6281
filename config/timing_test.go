package config

import (
	"fmt"
	"strings"
	"testing"
)

// [timing] mode = "async" parses with its defaults filled in; a config
// without it has none (and keeps its hash); asynchronous timing refuses,
// each with its reason, strategies not defined for asynchronous inputs,
// the protocol layers that need rounds (trust, secure aggregation; DP is
// taken), idle Byzantine nodes and bad clocks.
func TestTimingAsync(t *testing.T) {
	base := "name = \"a\"\n[strategy]\nname = \"async_mean\"\n"
	c, err := Parse([]byte(base+"[timing]\nmode = \"async\"\nstragglers = 0.2\nslowdown = 5\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	want := TimingDefault()
	want.Stragglers, want.Slowdown = 0.2, 5
	if !c.Async() || *c.Timing != want {
		t.Fatalf("timing %+v, want %+v", c.Timing, want)
	}
	plain, err := Parse([]byte(base), "t")
	if err != nil || plain.Timing != nil || plain.Async() {
		t.Fatalf("no [timing]: %+v, %v", plain.Timing, err)
	}
	for _, c := range []struct{ text, want string }{
		{"name = \"a\"\n[strategy]\nname = \"fedavg\"\n[timing]\nmode = \"async\"\n", `strategy "fedavg" is not defined for asynchronous inputs (those that are: local, robust, balance, lightyear, async_mean)`},
		{base + "[trust]\nenabled = true\n[timing]\nmode = \"async\"\n", "topology trust (DMTT's trust layer) is not supported in asynchronous timing yet"},
		{base + "[adversary]\nfraction = 0.2\nidle = true\n[timing]\nmode = \"async\"\n", "adversary.idle: idle Byzantine nodes have no steps"},
		{base + "[timing]\nmode = \"async\"\nflood = 0.1\n", "timing.flood, timing.stale and timing.inflate are attacks of the Byzantine nodes"},
		{base + "[timing]\nmode = \"async\"\ninflate = 5\n", "timing.flood, timing.stale and timing.inflate are attacks of the Byzantine nodes"},
		{base + "[adversary]\nfraction = 0.2\n[timing]\nmode = \"async\"\ninflate = -1\n", "timing.inflate = -1"},
		{base + "[adversary]\nfraction = 0.2\n[timing]\nmode = \"lockstep\"\nstale = 2\n", `need mode = "async"`},
		{base + "[adversary]\nfraction = 0.2\n[timing]\nmode = \"async\"\nflood = -1\n", "timing.flood = -1"},
		{base + "[timing]\nmode = \"later\"\n", `timing.mode = "later"`},
		{base + "[timing]\nmode = \"async\"\ninputs = \"all\"\n", `timing.inputs = "all"`},
		{base + "[timing]\nmode = \"lockstep\"\ninputs = \"latest\"\n", `what an asynchronous step combines: need mode = "async"`},
		{base + "[timing]\nmode = \"async\"\ncompute = \"uniform\"\ncompute_a = 2\ncompute_b = 1\n", "timing.compute_b = 1"},
		{base + "[timing]\nmode = \"async\"\nlatency = \"gamma\"\n", `timing.latency = "gamma"`},
		{base + "[timing]\nmode = \"async\"\nslowdown = 0.5\n", "timing.slowdown = 0.5"},
		{base + "[timing]\nmode = \"async\"\nmax_stale = 3\n", `unknown key "timing.max_stale" (did you mean "timing.max_staleness"?)`},
	} {
		_, err := Parse([]byte(c.text), "t")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error with %q", c.text, err, c.want)
		}
	}
	if c, err := Parse([]byte(base+"[timing]\nmode = \"async\"\ninputs = \"latest\"\n"), "t"); err != nil || c.Timing.Inputs != "latest" {
		t.Errorf("inputs = \"latest\": %v", err)
	}
	// The audit of an asynchronous run: shadows train each node's steps.
	if _, err := Parse([]byte(base+"[privacy]\nmode = \"node\"\nnoise_multiplier = 1\n[privacy.audit]\nattack = \"threshold\"\n[timing]\nmode = \"async\"\n"), "t"); err != nil {
		t.Errorf("[privacy.audit] in asynchronous timing: %v", err)
	}
	// DP runs in asynchronous timing, each step a release.
	for _, mode := range []string{"mode = \"node\"\nnoise_multiplier = 1", "mode = \"sample\"\nnoise_multiplier = 1", "mode = \"ternary\"\ndelta = 0.01", "mode = \"laplace_decaying\"\ntarget_epsilon = 10"} {
		if _, err := Parse([]byte(base+"[privacy]\n"+mode+"\n[timing]\nmode = \"async\"\n"), "t"); err != nil {
			t.Errorf("privacy %s in asynchronous timing: %v", mode, err)
		}
	}
	// Byzantine nodes run in asynchronous timing, with the attacks of
	// asynchrony.
	byz, err := Parse([]byte(base+"[adversary]\nfraction = 0.2\nattack = \"alie\"\n[timing]\nmode = \"async\"\nflood = 0.05\nstale = 3\n"), "t")
	if err != nil || byz.Timing.Flood != 0.05 || byz.Timing.Stale != 3 {
		t.Fatalf("Byzantine nodes in asynchronous timing: %v", err)
	}
	if d := Defaults(); !strings.Contains(d, "# max_staleness = 8") {
		t.Error("config defaults lack [timing]")
	}
}

// A sweep over [timing] keys gives each run its own timing, the keys the
// config leaves out at their defaults, whether the config has a [timing]
// (whose table the runs must not share) or none: lock-step and
// asynchronous runs side by side.
func TestTimingSweep(t *testing.T) {
	for _, section := range []string{"", "[timing]\nmode = \"lockstep\"\n"} {
		timingSweep(t, section)
	}
}

func timingSweep(t *testing.T, section string) {
	c, err := Parse([]byte("name = \"a\"\n[strategy]\nname = \"async_mean\"\n"+section+"[sweep.grid]\n\"timing.mode\" = [\"lockstep\", \"async\"]\n\"timing.max_staleness\" = [2, 5]\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	runs, _, err := c.Expand()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		tm := r.Config.Timing
		if tm == nil || tm.Compute != "constant" || tm.Slowdown != 1 {
			t.Fatalf("run %s: timing %+v, want the defaults filled in", r.Dir, tm)
		}
		got = append(got, fmt.Sprintf("%s/%d/%v", tm.Mode, tm.MaxStaleness, r.Config.Async()))
	}
	want := "lockstep/2/false lockstep/5/false async/2/true async/5/true"
	if g := strings.Join(got, " "); g != want && g != "lockstep/2/false async/2/true lockstep/5/false async/5/true" {
		t.Fatalf("runs %s, want each its own timing (%s)", g, want)
	}
}
