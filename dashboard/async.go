package dashboard

import (
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
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
// then, and the window's staleness, from steps.jsonl and the clock in the
// manifest.
type asyncFrames struct {
	window float64
	nodes  int
	per    map[int]*stalenessFrame
	sum    map[int]float64
	cum    []int // steps ended by the end of each window, cumulative
}

func newAsyncFrames(clock *rundir.AsyncClock, nodes int, steps []metrics.Step) *asyncFrames {
	a := &asyncFrames{window: clock.Window, nodes: max(1, nodes), per: map[int]*stalenessFrame{}, sum: map[int]float64{}}
	last := 0
	for _, s := range steps {
		w := a.per[s.Window]
		if w == nil {
			w = &stalenessFrame{}
			a.per[s.Window] = w
		}
		w.Steps++
		w.Inputs += s.Inputs
		w.Max = max(w.Max, s.MaxStaleness)
		a.sum[s.Window] += s.MeanStaleness * float64(s.Inputs)
		last = max(last, s.Window)
	}
	a.cum = make([]int, last+1)
	total := 0
	for k := range a.cum {
		if w := a.per[k]; w != nil {
			total += w.Steps
		}
		a.cum[k] = total
	}
	return a
}

// annotate sets f's time, steps and staleness.
func (a *asyncFrames) annotate(f *frame) {
	t := num(float64(f.Round+1) * a.window)
	f.Time = &t
	done := 0
	if len(a.cum) > 0 {
		done = a.cum[min(f.Round, len(a.cum)-1)]
	}
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
