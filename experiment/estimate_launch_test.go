package experiment

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/data"
)

// A launch is its node processes at their expected peak less the pages
// they share, the program's pages and the shared dataset file once, the
// monitor at its peak, and the launcher's runtime, added up here by hand.
func TestEstimateLaunchAddsItsProcesses(t *testing.T) {
	c, d := handConfig()
	c.Nodes = 7
	l, err := EstimateLaunch(c, d)
	if err != nil {
		t.Fatal(err)
	}
	node, err := EstimateLaunchedNode(c, d)
	if err != nil {
		t.Fatal(err)
	}
	mon := EstimateMonitor(c)
	if l.Node.Peak != node.Peak || l.Monitor.Peak != mon.Peak {
		t.Fatalf("node %d, monitor %d; want %d, %d", l.Node.Peak, l.Monitor.Peak, node.Peak, mon.Peak)
	}
	mapped := part(t, node, "dataset mnist (mapped file)").Each
	if private := node.Peak - LaunchedNodeProgramBytes - mapped; node.Private != private {
		t.Errorf("a node process's private bytes %d, want %d (its peak %d less the program's %d and its mapped pages' %d)",
			node.Private, private, node.Peak, LaunchedNodeProgramBytes, mapped)
	}
	file := int64(110 * (4*4 + 4 + 4 + 4)) // 110 samples: 4 float32 values, a label, a row position, a group's room
	want := 7*node.Private + LaunchedNodeProgramBytes + file + mon.Peak + EstimateRuntimeBytes
	if l.Total.Kind != "launch" || l.Total.Live != want || l.Total.Peak != want {
		t.Errorf("launch %s: live %d, peak %d; want %d (7 × %d + %d + %d + %d + %d)", l.Total.Kind, l.Total.Live, l.Total.Peak,
			want, node.Private, LaunchedNodeProgramBytes, file, mon.Peak, EstimateRuntimeBytes)
	}
	c.Nodes = 0
	if _, err := EstimateLaunch(c, d); err == nil {
		t.Error("a launch of 0 nodes estimated")
	}
}

// A launched node process maps its own samples and reads the global test
// set through a window, not the whole dataset: for 200 nodes on MNIST its
// dataset part is the pages of 300 training samples and the window (plus
// two 64 KiB fault-around windows), and 8 + 4 bytes of labels and row
// positions per sample, where a node process that decodes holds all
// 70,000 samples.
func TestLaunchedNodeMapsItsOwnSamples(t *testing.T) {
	c := config.Default()
	c.Nodes, c.Model.Hidden = 200, []int{256, 128}
	d := DataShape{Name: "MNIST", Train: 60000, Test: 10000, Shape: []int{1, 28, 28}, Classes: 10}
	launched, err := EstimateLaunchedNode(c, d)
	if err != nil {
		t.Fatal(err)
	}
	decoding, err := EstimateNodeProcess(c, d)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(300*784*4 + data.SharedStreamWindow + 2*64<<10)
	// Up to 8 KiB more: its rows' pages rounded to whole ones.
	if got := part(t, launched, "dataset mnist (mapped file)").Each; got < want || got > want+8<<10 {
		t.Errorf("mapped dataset part %d, want %d (+ at most 8 KiB)", got, want)
	}
	// Up to 64 KiB more: the allocator's rounding of the two slices.
	want = int64(70000*8) + int64(60000*4)
	if got := part(t, launched, "labels and row positions").Each; got < want || got > want+64<<10 {
		t.Errorf("labels and row positions %d, want %d (+ at most 64 KiB)", got, want)
	}
	if l, d := launched.Peak, decoding.Peak; l >= d {
		t.Errorf("a launched node's peak %d is not below a decoding node's (%d)", l, d)
	}
}

// A launch that does not fit is refused naming the largest node count that
// would, found here by trying every count.
func TestCheckLaunchMemoryNamesTheNodesThatFit(t *testing.T) {
	c, d := handConfig()
	c.Nodes = 40
	l, err := EstimateLaunch(c, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckLaunchMemory(c, l, d, Memory{Available: l.Total.Live}); err != nil {
		t.Errorf("a launch that just fits: %v", err)
	}
	if err := CheckLaunchMemory(c, l, d, Memory{}); err != nil {
		t.Errorf("unknown memory: %v", err)
	}
	liveOf := func(n int) int64 {
		x := c
		x.Nodes = n
		e, err := EstimateLaunch(x, d)
		if err != nil {
			t.Fatal(err)
		}
		return e.Total.Live
	}
	for _, wantNodes := range []int{1, 13, 39} {
		avail := liveOf(wantNodes) + 1 // wantNodes fit, one more does not (a node process is far larger than a byte)
		err := CheckLaunchMemory(c, l, d, Memory{Available: avail, Source: "test"})
		var me *MemoryError
		if !errors.As(err, &me) {
			t.Fatalf("%d bytes for a launch of %d: %v, want a MemoryError", avail, l.Total.Live, err)
		}
		best := 0
		for n := 1; n < c.Nodes; n++ {
			if liveOf(n) <= avail {
				best = n
			}
		}
		if best != wantNodes || me.Fits[0] != fmt.Sprintf("nodes = %d", best) {
			t.Errorf("%d bytes: fits %q, want nodes = %d first", avail, me.Fits, best)
		}
		if !strings.Contains(err.Error(), "`trellis run` (one process: the dataset once)") {
			t.Errorf("the refusal does not offer one process:\n%v", err)
		}
	}
	// Not even one node: only the other ways out.
	err = CheckLaunchMemory(c, l, d, Memory{Available: 1, Source: "test"})
	var me *MemoryError
	if !errors.As(err, &me) || len(me.Fits) != 2 || strings.HasPrefix(me.Fits[0], "nodes") {
		t.Errorf("1 byte: %v", err)
	}
}

func TestCheckNodeProcessMemory(t *testing.T) {
	c, d := handConfig()
	node, err := EstimateNodeProcess(c, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckNodeProcessMemory(c, node, Memory{Available: node.Live}); err != nil {
		t.Errorf("a node that just fits: %v", err)
	}
	if err := CheckNodeProcessMemory(c, node, Memory{}); err != nil {
		t.Errorf("unknown memory: %v", err)
	}
	err = CheckNodeProcessMemory(c, node, Memory{Available: node.Live - 1, Source: "test"})
	if err == nil || !strings.Contains(err.Error(), `node process "tiny" needs about`) ||
		!strings.Contains(err.Error(), "a machine with more memory") {
		t.Errorf("one byte short: %v", err)
	}
}

// The embedded MNIST's shape is known without loading it: nothing is
// remembered. A dataset read from files is loaded once and remembered.
func TestShapesLoadsOnce(t *testing.T) {
	s := Shapes{}
	d, err := s.Of(config.Default())
	if err != nil || d.Train != 60000 || d.Classes != 10 || len(s) != 0 {
		t.Errorf("MNIST: %+v, %v; %d remembered", d, err, len(s))
	}
	c := config.Default()
	c.Data.Dataset, c.Data.Dir = "mnist", t.TempDir() // no files there
	if _, err := s.Of(c); err == nil {
		t.Error("a dataset without files loaded")
	}
	want := DataShape{Name: "remembered", Train: 5, Shape: []int{3}, Classes: 2}
	s[c.Data.Dataset+"\x00"+c.Data.Dir] = want
	if d, err := s.Of(c); err != nil || d.Name != want.Name {
		t.Errorf("a remembered shape: %+v, %v; want it, without loading", d, err)
	}
}

func TestLargestIsTheFirstOfTheMost(t *testing.T) {
	es := []RunEstimate{{Dir: "a"}, {Dir: "b"}, {Dir: "c"}, {Dir: "d"}}
	for i, live := range []int64{5, 9, 2, 9} {
		es[i].Estimate.Live = live
	}
	if got := Largest(es); got != 1 {
		t.Errorf("Largest = %d, want 1 (the first of the two of 9 bytes)", got)
	}
	if got := Largest(nil); got != 0 {
		t.Errorf("Largest(nil) = %d", got)
	}
}

// A sweep's estimates: one row per run up to 40, the largest marked, then
// the largest in full; a single run is its estimate alone.
func TestSweepEstimateText(t *testing.T) {
	c, d := handConfig()
	e, err := EstimateWith(c, d)
	if err != nil {
		t.Fatal(err)
	}
	if got := SweepEstimateText([]RunEstimate{{Estimate: e}}); got != e.Text() {
		t.Errorf("one run:\n%s\nwant its estimate alone:\n%s", got, e.Text())
	}
	var es []RunEstimate
	for i := range 45 {
		x := e
		x.Live = int64(1000 + i)
		if i == 3 {
			x.Live = 1 << 40
		}
		es = append(es, RunEstimate{Dir: fmt.Sprintf("run-%02d", i), Estimate: x})
	}
	got := SweepEstimateText(es)
	lines := strings.Split(got, "\n")
	if lines[0] != "45 runs (run one after another: the largest sets the peak)" {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.Contains(lines[2+3], "run-03") || !strings.HasSuffix(lines[2+3], "← largest") || strings.Count(got, "← largest") != 1 {
		t.Errorf("run-03 is not the one marked largest:\n%s", got)
	}
	if !strings.Contains(got, "  … 5 more\n") || strings.Contains(got, "run-40") {
		t.Errorf("45 runs are not cut after 40:\n%s", got)
	}
	if !strings.Contains(got, "\nthe largest, run-03:\n") || !strings.HasSuffix(got, es[3].Estimate.Text()) {
		t.Errorf("the largest is not given in full:\n%s", got)
	}
}

func TestDurationText(t *testing.T) {
	for s, want := range map[float64]string{0: "0 s", 90: "90 s", 119: "119 s", 120: "2 min", 1500: "25 min", 7200: "2.0 h", 12600: "3.5 h"} {
		if got := durationText(s); got != want {
			t.Errorf("durationText(%v) = %q, want %q", s, got, want)
		}
	}
}

func TestMemoryText(t *testing.T) {
	if got := MemoryText(Memory{}, errors.New("no /proc")); got != "available memory: unknown (no /proc)" {
		t.Errorf("with an error: %q", got)
	}
	m := Memory{Available: 3 << 30, MemAvailable: 3 << 30, Source: "MemAvailable"}
	if got := MemoryText(m, nil); got != m.Text() || got != "available memory: 3.00 GiB (MemAvailable)" {
		t.Errorf("3 GiB: %q", got)
	}
}

// The probe's text keeps its clauses apart: the measured peak, then what
// rounds this long mean for the garbage.
func TestProbeTextSeparatesItsClauses(t *testing.T) {
	e := Estimate{Rounds: 100, RoundGarbage: 10 << 20, GCPercent: 100, Parts: []EstimatePart{
		{Name: "model", Each: 200 << 20, Count: 1},
		{Name: "runtime and program", Each: EstimateRuntimeBytes, Count: 1, OutsideHeap: true},
	}}
	e.setGarbage(e.Rounds - 1)
	p := ProbeResult{Rounds: 100, RoundSeconds: 60, PeakRSS: 300 << 20}
	got := p.Text(e)
	if !strings.Contains(got, " %); with rounds of 60.0 s the collector runs every 2 rounds at most: expected peak ") {
		t.Errorf("probe text:\n%s", got)
	}
}
