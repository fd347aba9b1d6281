package dashboard

import (
	"encoding/json"
	"maps"
	"math"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
)

// tinyAsyncMean is a tiny config of async_mean, in rounds until a [timing]
// is added.
const tinyAsyncMean = `
name = "tiny"
nodes = 4
rounds = 3
[data]
samples = 600
[model]
kind = "logreg"
[evaluation]
global_test = 200
[strategy]
name = "async_mean"
`

// asyncServer runs a tiny config into a directory and serves it as
// trellis serve does.
func asyncServer(t *testing.T, extra string) *Server {
	t.Helper()
	c, err := config.Parse([]byte(tinyAsyncMean+extra), "tiny.toml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := experiment.RunToDir(t.Context(), c, dir, nil); err != nil {
		t.Fatal(err)
	}
	srv := New("serve")
	if n, err := srv.LoadDirs(dir); err != nil || n != 1 {
		t.Fatalf("LoadDirs: %d %v", n, err)
	}
	srv.End("read from disk")
	return srv
}

// asyncEvents is what trellis serve's data endpoint gives for a tiny
// config's run directory.
func asyncEvents(t *testing.T, extra string) []map[string]any {
	t.Helper()
	ts := httptest.NewServer(asyncServer(t, extra).Handler())
	defer ts.Close()
	resp := get(t, ts.URL+"/api/events.json", nil)
	defer resp.Body.Close()
	var evs []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&evs); err != nil {
		t.Fatal(err)
	}
	return evs
}

// An asynchronous run on trellis serve's data endpoint: the run carries
// its clock (windows of 1 s; a synchronous round of the 3× straggler's
// step and its 0.1 s link, 3.1 s), every window its end in virtual time,
// the mean steps per node by then (the three fast nodes step at 1, 2, 3
// s, the straggler at 3, 6, 9: 3 of 4 nodes' first steps by the end of
// window 1, all 12 steps by the end of window 9) and its staleness; a run
// in rounds has none of these.
func TestServeAsyncRunDir(t *testing.T) {
	evs := asyncEvents(t, asyncTiming)
	wantSteps := map[int]float64{0: 0, 1: 0.75, 2: 1.5, 3: 2.5, 8: 2.75, 9: 3}
	frames, steps := 0, 0.0
	for _, e := range evs {
		switch e["type"] {
		case "run":
			a, ok := e["async"].(map[string]any)
			if !ok || a["window"] != 1.0 || math.Abs(a["sync_round"].(float64)-3.1) > 1e-12 {
				t.Errorf("run's clock: %v", e["async"])
			}
		case "round":
			frames++
			r := e["round"].(float64)
			if e["time"] != r+1 {
				t.Errorf("window %v ends at %v, want %v", r, e["time"], r+1)
			}
			if w, ok := wantSteps[int(r)]; ok && e["steps"] != w {
				t.Errorf("window %v: %v steps per node, want %v", r, e["steps"], w)
			}
			st := e["staleness"].(map[string]any)
			steps += st["steps"].(float64)
			if st["inputs"].(float64) == 0 && st["mean"] != nil || st["max"].(float64) > 2 {
				t.Errorf("window %v staleness %v", r, st)
			}
		}
	}
	if frames != 10 || steps != 12 {
		t.Errorf("%d windows with %v steps, want 10 and 12", frames, steps)
	}
	for _, e := range asyncEvents(t, "") {
		if e["async"] != nil || e["time"] != nil || e["steps"] != nil || e["staleness"] != nil {
			t.Fatalf("a run in rounds has time axes: %v", e)
		}
	}
}

const asyncTiming = "[timing]\nmode = \"async\"\nstragglers = 0.25\nslowdown = 3\nwindow = 1\n"

// The page of an asynchronous run read from disk: its charts against
// virtual time, the axis selector shown, the staleness chart drawn with a
// point per window that combined inputs (mean) and per window (max).
func TestBrowserAsyncRun(t *testing.T) {
	bin := chromium(t)
	s := asyncServer(t, asyncTiming)
	ts := httptest.NewServer(endingStreams(s.Handler()))
	defer ts.Close()
	defer s.Close()
	dom := dumpDOM(t, bin, ts.URL+"/")
	noErrors(t, dom)
	if !strings.Contains(dom, `text-anchor="middle">virtual time (s)</text>`) {
		t.Error("no virtual-time axis")
	}
	if strings.Contains(dom, `<label id="axis-box" hidden`) || !strings.Contains(dom, `<option value="steps">steps per node (mean)</option>`) {
		t.Error("no axis selector")
	}
	if strings.Contains(dom, `<figure id="f-stale" hidden`) || attr(t, dom, `data-name="max" data-points="(\d+)"`) != "10" {
		t.Error("no staleness chart with a point per window")
	}
}

// A live asynchronous run: Plan gives the page the run's window (the
// default: the median step, 1.5 for uniform on [1, 2], times eval_every
// 2), and the live frames, fed without step records, are at their
// windows' ends, with no steps axis.
func TestLiveAsyncRun(t *testing.T) {
	c, err := config.Parse([]byte("name = \"t\"\nnodes = 4\nrounds = 3\neval_every = 2\nfinal_rounds = 1\n[strategy]\nname = \"async_mean\"\n"+
		"[timing]\nmode = \"async\"\ncompute = \"uniform\"\ncompute_a = 1\ncompute_b = 2\n"), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	s := New("live")
	s.Plan(t.TempDir(), []config.SweepRun{{Config: c}}, false)
	if info, _ := s.Run(0); info.Async == nil || info.Async.Window != 3 {
		t.Fatalf("live run's clock: %+v", info.Async)
	}
	bin := chromium(t)
	sink := s.Sink(0)
	for r := range 3 {
		_ = sink.Round(fakeRound(r, 6))
	}
	ts := httptest.NewServer(endingStreams(s.Handler()))
	defer ts.Close()
	defer s.Close()
	dom := dumpDOM(t, bin, ts.URL+"/")
	noErrors(t, dom)
	if !strings.Contains(dom, `text-anchor="middle">virtual time (s)</text>`) || attr(t, dom, `data-name="local \(mean\)" data-points="(\d+)"`) != "3" {
		t.Error("the live run is not plotted against virtual time")
	}
	if strings.Contains(dom, `<option value="steps">`) {
		t.Error("a steps axis without steps")
	}
}

// A live asynchronous simulation gets the step records too (the live sink
// is an experiment.StepSink): every window it shows from the first in
// which a step ended carries the time, the steps per node and the
// staleness that the same run, read from its directory afterwards, shows
// for that window.
func TestLiveAsyncStepsMatchTheRunDir(t *testing.T) {
	c, err := config.Parse([]byte(tinyAsyncMean+asyncTiming), "tiny.toml")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	live := New("live")
	runs := []config.SweepRun{{Config: c, Dir: "run"}}
	sw := live.Plan(out, runs, false)
	sink := sw.Live(0, runs[0])
	if _, ok := sink.(experiment.StepSink); !ok {
		t.Fatal("the live sink of an asynchronous run takes no step records")
	}
	if _, err := experiment.RunToDirWith(t.Context(), c, filepath.Join(out, "run"), experiment.RunOptions{Live: sink}); err != nil {
		t.Fatal(err)
	}
	disk := New("serve")
	if n, err := disk.LoadDirs(filepath.Join(out, "run")); err != nil || n != 1 {
		t.Fatalf("LoadDirs: %d %v", n, err)
	}
	type stal struct {
		Steps, Inputs, Max int
		Mean               *float64
	}
	type asyncFrame struct {
		Type        string
		Round       int
		Time, Steps *float64
		Staleness   *stal
	}
	frames := func(s *Server) map[int]*asyncFrame {
		out := map[int]*asyncFrame{}
		for _, b := range s.hub.all() {
			var f asyncFrame
			if err := json.Unmarshal(b, &f); err != nil {
				t.Fatal(err)
			}
			if f.Type == "round" {
				out[f.Round] = &f
			}
		}
		return out
	}
	want := frames(disk)
	if len(want) != 10 {
		t.Fatalf("%d windows from disk, want 10", len(want))
	}
	// The live sink is a Latest one, which the run does not wait for: its
	// last window comes when its goroutine gets to it.
	got := frames(live)
	for deadline := time.Now().Add(time.Minute); got[9] == nil; got = frames(live) {
		if time.Now().After(deadline) {
			t.Fatalf("after a minute the live page has windows %v, not the last", slices.Sorted(maps.Keys(got)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	withSteps := 0
	for r, f := range got {
		w := want[r]
		if f.Steps == nil && w != nil && *w.Steps == 0 {
			continue // before the first step record: no annotation
		}
		if w == nil || f.Time == nil || f.Steps == nil || f.Staleness == nil {
			t.Fatalf("window %d: live %+v, from disk %+v", r, f, w)
		}
		if *f.Time != *w.Time || *f.Steps != *w.Steps || f.Staleness.Steps != w.Staleness.Steps || f.Staleness.Inputs != w.Staleness.Inputs ||
			f.Staleness.Max != w.Staleness.Max || (f.Staleness.Mean == nil) != (w.Staleness.Mean == nil) || f.Staleness.Mean != nil && *f.Staleness.Mean != *w.Staleness.Mean {
			t.Errorf("window %d: live time %v, steps %v, staleness %+v; from disk %v, %v, %+v", r, *f.Time, *f.Steps, *f.Staleness, *w.Time, *w.Steps, *w.Staleness)
		}
		if *f.Steps > 0 {
			withSteps++
		}
	}
	if withSteps == 0 {
		t.Error("no live window counts a step")
	}
}

// A deployment's monitor writes an asynchronous run by step index on the
// wall clock: PlanDeployment shows it by that index, without the
// simulator's windows of virtual time (no clock on the run, no step
// records taken), where Plan gives the same config its virtual window.
func TestDeployedAsyncRunHasNoVirtualClock(t *testing.T) {
	c, err := config.Parse([]byte(tinyAsyncMean+asyncTiming), "tiny.toml")
	if err != nil {
		t.Fatal(err)
	}
	sim := New("live")
	sim.Plan(t.TempDir(), []config.SweepRun{{Config: c}}, false)
	if info, _ := sim.Run(0); info.Async == nil {
		t.Fatal("a simulation's live run has no virtual clock")
	}
	deployed := New("live")
	sw := deployed.PlanDeployment(t.TempDir(), c)
	if info, _ := deployed.Run(0); info.Async != nil || info.Nodes != c.Nodes {
		t.Errorf("a deployed run's info: %+v", info)
	}
	if _, ok := sw.Live(0, config.SweepRun{Config: c}).(experiment.StepSink); ok {
		t.Error("a deployed run's live sink takes step records")
	}
}
