package experiment

import (
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/sim"
)

// AsyncWindow is the virtual time one record of c's asynchronous run
// covers (timing.window, whose default is the compute distribution's
// median times max(1, eval_every), as sim.Async.Window's); 0 for a run in
// rounds. A live viewer puts the records on a time axis with it.
func AsyncWindow(c config.Config) float64 {
	if !c.Async() {
		return 0
	}
	t := c.Timing
	if t.Window > 0 {
		return t.Window
	}
	return sim.Dist{Kind: t.Compute, A: t.ComputeA, B: t.ComputeB}.Median() * float64(max(1, c.EvalEvery))
}

// asyncClock is the manifest's record of an asynchronous run's clock: the
// window a summary record covers (AsyncWindow) and the virtual
// time a synchronous round would take on the same clock: every node's step
// and its slowest out-link, the slowest of them (the round ends when the
// last message of the slowest node has arrived), on the graph of round 0.
// rundir.Verify checks each step record against the window, so a default
// here that differed from the simulator's would not go unnoticed.
func asyncClock(c config.Config, s Setup) (*rundir.AsyncClock, error) {
	a := *s.Async
	w := AsyncWindow(c)
	d := s.Defaults() // the graph and seed Build uses
	sched, err := sim.NewSchedule(a, d.Nodes, d.Seed)
	if err != nil {
		return nil, err
	}
	dyn, err := d.Graph(d.Nodes, d.Seed)
	if err != nil {
		return nil, err
	}
	return &rundir.AsyncClock{Window: w, SyncRound: sched.SyncRound(dyn.At(0))}, nil
}

// StepSink takes an asynchronous run's step records as they are made, on
// the simulator's goroutine (RunOptions.Live may be one: a live page's
// steps axis and staleness come from them).
type StepSink interface {
	Step(metrics.Step) error
}

// stepsTo sends an asynchronous run's step records to w's steps.jsonl,
// each with its window: the simulator sends a window's summary record
// before any step of a later window, so the windows sent so far, counted
// on the simulator's goroutine before out sees them, are the window of
// the steps that follow. It returns the sink the simulator writes to.
//
// live, if it is a StepSink (a dashboard's), gets each step record too,
// after the file.
func stepsTo(w *rundir.Writer, a *sim.Async, out, live metrics.Sink) metrics.Sink {
	window := 0
	steps, _ := live.(StepSink)
	a.Steps = func(sr sim.StepRecord) error {
		st := metrics.Step{Window: window, Time: sr.Time, Step: sr.Step, NodeRound: sr.NodeRound,
			Inputs: sr.Inputs, MaxStaleness: sr.MaxStaleness, MeanStaleness: sr.MeanStaleness, Refused: sr.Refused}
		if err := w.Step(st); err != nil {
			return err
		}
		if steps != nil {
			return steps.Step(st)
		}
		return nil
	}
	return metrics.SinkFunc(func(r *metrics.Round) error {
		window = r.Round + 1
		return out.Round(r)
	})
}
