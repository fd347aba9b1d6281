package dashboard

import (
	"sync"

	"github.com/trellis-fl/trellis/metrics"
)

// stalenessFrame is one window of an asynchronous run: the node steps that
// ended in it, the inputs they combined and how stale those were (the
// inputs' mean, the steps' largest; receiver steps).
type stalenessFrame struct {
	Steps  int  `json:"steps"`
	Inputs int  `json:"inputs"`
	Mean   *num `json:"mean"` // null: no input
	Max    int  `json:"max"`
}

// asyncFrames puts an asynchronous run's windows on its time axes: each
// window's end in virtual time, the mean number of steps per node taken by
// then, and the window's staleness, from the step records (steps.jsonl,
// or a live run's as they are made) and the window length.
type asyncFrames struct {
	window float64
	nodes  int
	per    map[int]*stalenessFrame
	sum    map[int]float64
	last   int   // the latest window with a step
	cum    []int // steps ended by the end of each window up to last, cumulative
	stale  bool  // cum is behind add
}

func newAsyncFrames(window float64, nodes int, steps []metrics.Step) *asyncFrames {
	a := &asyncFrames{window: window, nodes: max(1, nodes), per: map[int]*stalenessFrame{}, sum: map[int]float64{}}
	for _, s := range steps {
		a.add(s)
	}
	return a
}

// add counts one step record into its window.
func (a *asyncFrames) add(s metrics.Step) {
	w := a.per[s.Window]
	if w == nil {
		w = &stalenessFrame{}
		a.per[s.Window] = w
	}
	w.Steps++
	w.Inputs += s.Inputs
	w.Max = max(w.Max, s.MaxStaleness)
	a.sum[s.Window] += s.MeanStaleness * float64(s.Inputs)
	a.last = max(a.last, s.Window)
	a.stale = true
}

// annotate sets f's time, steps and staleness.
func (a *asyncFrames) annotate(f *frame) {
	t := num(float64(f.Round+1) * a.window)
	f.Time = &t
	if a.stale || a.cum == nil {
		// Once for a run read from disk, once a window for a live one.
		a.cum = a.cum[:0]
		total := 0
		for k := range a.last + 1 {
			if w := a.per[k]; w != nil {
				total += w.Steps
			}
			a.cum = append(a.cum, total)
		}
		a.stale = false
	}
	done := a.cum[min(f.Round, len(a.cum)-1)]
	st := num(float64(done) / float64(a.nodes))
	f.Steps = &st
	w := a.per[f.Round]
	if w == nil {
		w = &stalenessFrame{}
	}
	sf := *w
	if sf.Inputs > 0 {
		m := num(a.sum[f.Round] / float64(sf.Inputs))
		sf.Mean = &m
	}
	f.Staleness = &sf
}

// asyncLive is what a live asynchronous run's sink adds: its step
// records (on the simulator's goroutine, experiment.StepSink) and its
// window records (on the live fan-out's) meet under a lock. Once a step
// record has come, each window's frame carries the time, steps and
// staleness of the records so far — every step of a window comes before
// the window's record, so they are the window's as the run directory has
// them. Before (windows in which no step ended yet) the frame is left as
// it is and the page puts it at its window's end.
type asyncLive struct {
	mu      sync.Mutex
	frames  *asyncFrames
	stepped bool
}

// Step implements experiment.StepSink.
func (a *asyncLive) Step(st metrics.Step) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.frames.add(st)
	a.stepped = true
	return nil
}

// annotate sets f's time, steps and staleness once a step record came.
func (a *asyncLive) annotate(f *frame) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stepped {
		a.frames.annotate(f)
	}
}

// asyncLiveSink is the live sink of an asynchronous run: Round from the
// run's sink, Step from its asyncLive.
type asyncLiveSink struct {
	metrics.Sink
	*asyncLive
}
