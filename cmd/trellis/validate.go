package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/scale"
	"github.com/trellis-fl/trellis/worstcase"
)

// validateCmd checks a config, every run of its sweep included, without
// running anything: what `run` would refuse, it refuses (a run too large
// for this machine's memory included, before anything is built), and it
// prints the warnings and the runs in the order `--shard` counts them.
func validateCmd(o *options) *cobra.Command {
	var sets []string
	c := &cobra.Command{
		Use:   "validate CONFIG|PRESET",
		Short: "check a config and every run of its sweep without running anything; list the runs",
		Long: `Check a config and every run of its sweep without running anything: what
` + "`trellis run`" + ` would refuse, validate refuses, a run too large for this machine's
memory included. It prints the warnings, and the runs of a sweep numbered
from 0 in the order they run (the order --shard I/N counts them in).
With --json it prints {"valid": true, "runs": N, "run_dirs": [...],
"warnings": [...]} or {"valid": false, "error": "..."} on stdout.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cfg, err := loadConfigOrPreset(args[0], sets); err == nil && cfg.WorstCase != nil {
				return validateWorstCase(o, args[0], cfg)
			}
			runs, warnings, err := validateConfig(args[0], sets)
			if err != nil {
				if o.json {
					_ = jsonOut(o.stdout, map[string]any{"valid": false, "error": err.Error()})
				}
				return err
			}
			dirs := make([]string, len(runs))
			for k, r := range runs {
				dirs[k] = r.Dir
			}
			if o.json {
				return jsonOut(o.stdout, map[string]any{"valid": true, "runs": len(runs), "run_dirs": dirs, "warnings": warnings})
			}
			for _, w := range warnings {
				fmt.Fprintln(o.stderr, "trellis: warning:", w)
			}
			fmt.Fprintf(o.stdout, "%s: valid, %d run(s)\n", args[0], len(runs))
			if len(runs) > 1 {
				width := len(fmt.Sprint(len(runs) - 1))
				for k, d := range dirs {
					fmt.Fprintf(o.stdout, "  %*d  %s\n", width, k, d)
				}
			}
			return nil
		},
	}
	c.Flags().StringArrayVar(&sets, "set", nil, "KEY=VALUE: override one config key (repeatable)")
	return c
}

// validateWorstCase is validate of a worst-case search: every defence
// and every attack setting it will run, checked as the search checks
// them, and the most runs it takes.
func validateWorstCase(o *options, arg string, cfg config.Config) error {
	s, err := worstcase.New(cfg)
	if err != nil {
		if o.json {
			_ = jsonOut(o.stdout, map[string]any{"valid": false, "error": err.Error()})
		}
		return err
	}
	e := s.Estimate()
	if o.json {
		return jsonOut(o.stdout, map[string]any{"valid": true, "worst_case": true, "defences": len(s.Space.Defences), "runs_at_most": e.Total()})
	}
	fmt.Fprintf(o.stdout, "%s: valid, a worst-case search of %d defence(s), at most %d runs (`trellis worst-case %s --dry-run` counts them by stage)\n",
		arg, len(s.Space.Defences), e.Total(), scale.Quote(arg))
	return nil
}

// validateConfig is validate's check of the config arg names with sets
// applied: its runs and their warnings, or what `run` would refuse. The
// memory estimate comes first, as in `run`: a run too large for the
// machine is refused before its graph is built.
func validateConfig(arg string, sets []string) ([]config.SweepRun, []string, error) {
	cfg, err := loadConfigOrPreset(arg, sets)
	if err != nil {
		return nil, nil, err
	}
	runs, _, err := cfg.Expand()
	if err != nil {
		return nil, nil, err
	}
	if fit, err := fitSweep(cfg, experiment.Shard{}); err == nil && fit.check != nil {
		return nil, nil, fit.check
	}
	for _, r := range runs {
		if err := experiment.Check(r.Config); err != nil {
			return nil, nil, fmt.Errorf("run %s: %w", r.Dir, err)
		}
	}
	var warnings []string
	for _, r := range runs {
		for _, w := range experiment.Warnings(r.Config) {
			warnings = append(warnings, r.Dir+": "+w)
		}
	}
	return runs, warnings, nil
}

// version is the binary's module, version and commit (or why it has none).
func version() string { return rundir.ReadBuild().String() }

// printVersion is --version: the line of version, or with --json the
// build's fields.
func printVersion(o *options) error {
	if o.json {
		return jsonOut(o.stdout, rundir.ReadBuild())
	}
	_, err := fmt.Fprintln(o.stdout, "trellis version", version())
	return err
}
