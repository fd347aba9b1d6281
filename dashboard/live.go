package dashboard

import (
	"path/filepath"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
)

// Sweep is a sweep (or a single run) shown live while it runs into out.
type Sweep struct {
	s     *Server
	out   string
	runs  []config.SweepRun
	first int // the page's number of the sweep's first run
	force bool
}

// Plan adds the runs of a sweep that is about to run into out to the
// page, as pending (or as on file, for runs already there), and returns
// the Sweep whose Live goes into experiment.SweepOptions.Live.
func (s *Server) Plan(out string, runs []config.SweepRun, force bool) *Sweep {
	w := &Sweep{s: s, out: out, runs: runs, force: force}
	cs := make([]config.Config, len(runs))
	for i, r := range runs {
		cs[i] = r.Config
	}
	params := sweptParams(cs)
	for i, r := range runs {
		info := RunInfo{Label: r.Config.Label(), Seed: r.Config.Seed, Nodes: r.Config.Nodes, Rounds: r.Config.Rounds,
			Strategy: r.Config.Strategy.Name, Accuracy: accuracyOf(r.Config), Global: r.Config.Evaluation.GlobalTest != 0, Status: Pending, Dir: r.Dir, Params: params[i]}
		if len(r.Params) > 0 {
			info.Params = r.Params
		}
		if r.Config.Async() {
			// The window makes the live sink an asynchronous one (its
			// frames carry time, steps and staleness from the step
			// records); the synchronous round is the manifest's, once the
			// run is read from disk.
			info.Async = &rundir.AsyncClock{Window: experiment.AsyncWindow(r.Config)}
		}
		if info.Dir == "" {
			info.Dir = filepath.Base(filepath.Clean(out))
		}
		n := s.AddRun(info)
		if i == 0 {
			w.first = n
		}
	}
	return w
}

// PlanDeployment is Plan for the one run of c that a deployment's monitor
// writes into out: its records are by round, or in asynchronous timing by
// step index, on the wall clock, so the page shows them by that index —
// the simulator's windows of virtual time do not apply.
func (s *Server) PlanDeployment(out string, c config.Config) *Sweep {
	c.Timing = nil
	return s.Plan(out, []config.SweepRun{{Config: c}}, true)
}

// Live is experiment.SweepOptions.Live: run i starts. The runs before it
// get their status from their directories; a run finished on file (kept
// by the sweep) is shown from its files, and a run to compute gets a live
// sink.
func (w *Sweep) Live(i int, r config.SweepRun) metrics.Sink {
	for j := range i {
		w.settle(j, nil)
	}
	path := filepath.Join(w.out, r.Dir)
	if !w.force && rundir.Has(path, rundir.SummaryFile) {
		w.settle(i, nil)
		if err := w.s.loadRounds(w.first+i, path); err != nil {
			w.s.Update(w.first+i, func(info *RunInfo) { info.Error = err.Error() })
		}
		return nil
	}
	return w.s.Sink(w.first + i)
}

// settle sets run i's status from its directory (and err, its error).
func (w *Sweep) settle(i int, err error) {
	if info, ok := w.s.Run(w.first + i); !ok || info.Status == Finished || info.Status == Failed {
		return // settled already: no event
	}
	path := filepath.Join(w.out, w.runs[i].Dir)
	w.s.Update(w.first+i, func(info *RunInfo) {
		if info.Config == "" {
			d := describe(w.runs[i].Config, path)
			info.Config, info.Manifest, info.Command = d.Config, d.Manifest, d.Command
		}
		refresh(info, path)
		if err != nil {
			info.Status, info.Error = Failed, err.Error()
		}
	})
}

// Done records how the sweep ended: res (nil when it did not start) and
// its error.
func (w *Sweep) Done(res *experiment.SweepResult) {
	for i := range w.runs {
		var err error
		if res != nil && i < len(res.Errs) {
			err = res.Errs[i]
		}
		w.settle(i, err)
	}
}
