package experiment

import (
	"context"
	"fmt"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
)

// RunSideBySide runs several configs with the same number of rounds at
// once, each into its own directory (RunToDir), and calls row once per
// round, in round order, when every run has finished that round, with the
// runs' round aggregates in config order. Each run is reproducible on its
// own, so running them together changes no metric. Every run is redone
// from round 0 (RunOptions.Force): the rows are the point. The first error
// (in config order) is returned after all runs stop.
func RunSideBySide(ctx context.Context, cfgs []config.Config, dirs []string, row func(round int, rs []*metrics.Round)) ([]rundir.Final, error) {
	if len(cfgs) != len(dirs) || len(cfgs) == 0 {
		return nil, fmt.Errorf("side by side: %d configs for %d directories", len(cfgs), len(dirs))
	}
	rounds := cfgs[0].Rounds
	for _, c := range cfgs[1:] {
		if c.Rounds != rounds {
			return nil, fmt.Errorf("side by side: runs of %d and %d rounds", rounds, c.Rounds)
		}
	}
	type report struct {
		k     int
		r     *metrics.Round
		fin   rundir.Final
		err   error
		final bool
	}
	ch := make(chan report)
	for k, c := range cfgs {
		go func() {
			fin, err := RunToDirWith(ctx, c, dirs[k], RunOptions{Force: true, Progress: func(r *metrics.Round, _ int) { ch <- report{k: k, r: r} }})
			ch <- report{k: k, fin: fin, err: err, final: true}
		}()
	}
	byRound := make([][]*metrics.Round, rounds)
	got := make([]int, rounds)
	fins := make([]rundir.Final, len(cfgs))
	errs := make([]error, len(cfgs))
	next := 0
	for finished := 0; finished < len(cfgs); {
		rep := <-ch
		if rep.final {
			finished++
			fins[rep.k], errs[rep.k] = rep.fin, rep.err
			continue
		}
		if byRound[rep.r.Round] == nil {
			byRound[rep.r.Round] = make([]*metrics.Round, len(cfgs))
		}
		byRound[rep.r.Round][rep.k] = rep.r
		got[rep.r.Round]++
		for next < rounds && got[next] == len(cfgs) {
			if row != nil {
				row(next, byRound[next])
			}
			next++
		}
	}
	for k, err := range errs {
		if err != nil {
			return fins, fmt.Errorf("%s: %w", cfgs[k].Label(), err)
		}
	}
	return fins, nil
}
