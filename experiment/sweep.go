package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
)

// SweepProgress is told when a run starts and after each of its rounds.
type SweepProgress func(run, runs int, r config.SweepRun, round, rounds int)

// SweepResult is a finished sweep: every run with its final metrics.
type SweepResult struct {
	Keys []string
	Runs []config.SweepRun
	Fin  []rundir.Final
	// Errs holds each run's error with SweepOptions.KeepGoing (nil for a
	// run that finished).
	Errs []error
}

// SweepOptions are RunSweepWith's options.
type SweepOptions struct {
	Progress SweepProgress
	// Force redoes runs whose directories hold another config's run (or a
	// finished one) instead of refusing (or keeping) them.
	Force bool
	// KeepGoing records a failed run (SweepResult.Errs) and goes on with
	// the next instead of stopping the sweep.
	KeepGoing bool
	// Shard runs only the shard's runs (every run is still checked) and
	// writes no sweep summary: MergeSweep does once all shards are done.
	Shard Shard
	// Live, when set, gives each run a live viewer's sink
	// (RunOptions.Live); it may return nil.
	Live func(run int, r config.SweepRun) metrics.Sink
}

// RunSweep is RunSweepWith with a progress callback alone.
func RunSweep(ctx context.Context, c config.Config, out string, progress SweepProgress) (*SweepResult, error) {
	return RunSweepWith(ctx, c, out, SweepOptions{Progress: progress})
}

// RunSweepWith runs every run of c's sweep one after another into out,
// each in its own directory (RunToDirWith: a finished run is kept, an
// interrupted one resumed), then writes the sweep's summary.csv. Every run
// is checked (Check) before the first starts.
func RunSweepWith(ctx context.Context, c config.Config, out string, o SweepOptions) (*SweepResult, error) {
	runs, keys, err := c.Expand()
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, r := range runs {
		if err := Check(r.Config); err != nil {
			errs = append(errs, fmt.Errorf("sweep run %s: %w", r.Dir, err))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	res := &SweepResult{Keys: keys, Runs: runs, Fin: make([]rundir.Final, len(runs)), Errs: make([]error, len(runs))}
	var rows []rundir.SummaryRow
	for i, r := range runs {
		if !o.Shard.Owns(i) {
			continue
		}
		dir := filepath.Join(out, r.Dir)
		var live metrics.Sink
		if o.Live != nil {
			live = o.Live(i, r)
		}
		fin, err := RunToDirWith(ctx, r.Config, dir, RunOptions{Force: o.Force, Live: live, Progress: func(rd *metrics.Round, rounds int) {
			if o.Progress != nil {
				o.Progress(i, len(runs), r, rd.Round+1, rounds)
			}
		}})
		if err != nil {
			err = fmt.Errorf("run %s: %w", r.Dir, err)
			if !o.KeepGoing || ctx.Err() != nil {
				return res, err
			}
			res.Errs[i] = err
			continue
		}
		res.Fin[i] = fin
		rows = append(rows, rundir.SummaryRow{Name: r.Config.Name, Seed: r.Config.Seed, Params: r.Params, Final: fin})
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return res, err
	}
	if o.Shard.Sharded() {
		return res, errors.Join(res.Errs...)
	}
	if err := rundir.WriteSummary(out, keys, rows); err != nil {
		return res, err
	}
	return res, errors.Join(res.Errs...)
}
