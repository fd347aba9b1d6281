package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/dashboard"
	"github.com/trellis-fl/trellis/scale"
	"github.com/trellis-fl/trellis/worstcase"
)

func worstCaseCmd(o *options) *cobra.Command {
	var sets []string
	var sf shardFlags
	var dry bool
	c := &cobra.Command{
		Use:   "worst-case CONFIG|PRESET",
		Short: "search, for each defence of a config's [worst_case], the attack and Byzantine placement that hurt its honest nodes most",
		Long: `Search, for each defence of a config's [worst_case] section, the attack that
hurts its honest nodes most on the config's graph: every attack of the catalogue
the defence can run with (the topology liars too where it has a trust layer), its
continuous parameter over a meaningful range, and four placements of the
Byzantine nodes (random, highest degree, around the honest node of lowest
degree, κ-maximizing). A coarse grid on short runs, a golden-section refinement
of the worst families' parameter, then the worst points confirmed with the full
rounds and seeds. It writes worst_case.md, worst_case.csv, worst_case_families.csv
and report.html (the confirmed runs) into -o DIR.

Every evaluated point is a run directory: calling the command again resumes an
interrupted search. --dry-run prints how many runs the search takes.

The search runs in stages (the grid, each refinement step, the confirmations):
--shard I/N runs the runs k of each stage with k mod N = I, and goes on to the
next stage once the other shards' runs of the stage are in the same -o DIR (a
shared file system); else it stops, and running the shards again continues.
Shards with directories of their own: --merge -o DIR DIR1 DIR2 … copies their
finished runs into DIR and writes the tables when every stage is complete, or
names the runs of the first stage still missing (run the shards again from DIR).`,
		Args: sf.args,
		RunE: func(cmd *cobra.Command, args []string) error {
			shard, err := sf.get()
			if err != nil {
				return err
			}
			cfg, err := loadConfigOrPreset(args[0], sets)
			if err != nil {
				return err
			}
			s, err := worstcase.New(cfg)
			if err != nil {
				return err
			}
			out, err := o.outDir(filepath.Join("runs", cfg.Name))
			if err != nil {
				return err
			}
			if dry {
				return printEstimate(o, s)
			}
			var res *worstcase.Result
			if sf.merge {
				res, err = s.Merge(out, args[1:])
			} else {
				bar := newProgress(o.stderr, o.quiet)
				res, err = s.Run(cmd.Context(), out, worstcase.Options{Shard: shard,
					Progress: func(stage, run, runs int, dir string, round, rounds int) {
						bar.update(fmt.Sprintf("stage %d run %d/%d %s", stage, run+1, runs, dir), run*rounds+round, runs*rounds)
					}})
				bar.done()
			}
			var pending *worstcase.PendingError
			if errors.As(err, &pending) && shard.Sharded() {
				if o.json {
					return jsonOut(o.stdout, map[string]any{"shard": shard.String(), "stage": pending.Stage, "waiting_for": len(pending.Missing)})
				}
				fmt.Fprintln(o.stdout, pending.Error())
				return nil
			}
			if err != nil {
				if cmd.Context().Err() != nil {
					return fmt.Errorf("interrupted; finished runs are in %s, and `%s` resumes the search", out, resumeCommand(cmd, args[0], out))
				}
				return err
			}
			if err := s.Write(out, res); err != nil {
				return err
			}
			page, err := dashboard.WriteReportOf(out, "trellis worst case: "+cfg.Name, s.ConfirmedDirs(res))
			if err != nil {
				return err
			}
			if o.json {
				return jsonOut(o.stdout, s.Rows(res))
			}
			fmt.Fprint(o.stdout, s.Markdown(res))
			fmt.Fprintf(o.stdout, "\n%s, %s, %s and the runs in %s; self-contained HTML report of the confirmed runs: %s\n",
				worstcase.MarkdownFile, worstcase.CSVFile, worstcase.FamiliesCSVFile, out, page)
			if shard.Sharded() {
				fmt.Fprintf(o.stdout, "(shard %s ran its share of the last stage; `trellis worst-case %s --merge -o %s` writes the same tables)\n", shard, scale.Quote(args[0]), scale.Quote(out))
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringArrayVar(&sets, "set", nil, "KEY=VALUE: override one config key (repeatable), e.g. --set rounds=5 --set worst_case.grid=5")
	f.BoolVar(&dry, "dry-run", false, "run nothing: print how many runs (and rounds) the search takes")
	sf.add(c)
	return c
}

// printEstimate is --dry-run: the runs the search takes, by kind.
func printEstimate(o *options, s *worstcase.Search) error {
	e := s.Estimate()
	if o.json {
		return jsonOut(o.stdout, map[string]any{
			"grid_runs": e.Grid, "refine_runs_at_most": e.Refine, "confirm_runs_at_most": e.Confirm,
			"runs_at_most": e.Total(), "rounds_at_most": e.Rounds(),
			"search_rounds": e.SearchRounds, "confirm_rounds": e.ConfirmRounds,
		})
	}
	fmt.Fprintf(o.stdout, "%d defence(s); at most %d runs (%d rounds in all):\n", len(s.Space.Defences), e.Total(), e.Rounds())
	fmt.Fprintf(o.stdout, "  grid:          %d runs of %d rounds\n", e.Grid, e.SearchRounds)
	fmt.Fprintf(o.stdout, "  refinement:    at most %d runs of %d rounds\n", e.Refine, e.SearchRounds)
	fmt.Fprintf(o.stdout, "  confirmation:  at most %d runs of %d rounds (the runs without attack included)\n", e.Confirm, e.ConfirmRounds)
	for _, d := range s.Space.Defences {
		fmt.Fprintf(o.stdout, "  %s: %d attack settings × %d placements", d.Name, len(d.Settings), len(d.Placements))
		if len(d.Skipped) > 0 {
			fmt.Fprintf(o.stdout, " (%d settings not usable with it)", len(d.Skipped))
		}
		fmt.Fprintln(o.stdout)
	}
	return nil
}
