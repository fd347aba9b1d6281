package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/configs"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/report"
)

func runCmd(o *options, name string) *cobra.Command {
	short := "run an experiment from a config file or preset (every run of its sweep, if it has one)"
	if name == "sweep" {
		short = "run every run of a config's sweep, one after another, resuming where a previous call stopped"
	}
	return &cobra.Command{
		Use:   name + " CONFIG|PRESET",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfigOrPreset(args[0])
			if err != nil {
				return err
			}
			out := o.out
			if out == "" {
				out = filepath.Join("runs", cfg.Name)
			}
			bar := newProgress(o.stderr, o.quiet)
			res, err := experiment.RunSweep(cmd.Context(), cfg, out, func(run, runs int, r experiment.SweepRun, round, rounds int) {
				bar.update(fmt.Sprintf("run %d/%d %s", run+1, runs, r.Dir), run*rounds+round, runs*rounds)
			})
			bar.done()
			if err != nil {
				if cmd.Context().Err() != nil {
					return fmt.Errorf("interrupted; finished rounds are in %s, and `trellis %s %s -o %s` resumes", out, name, args[0], out)
				}
				return err
			}
			return printSweep(o, out, res)
		},
	}
}

func reportCmd(o *options) *cobra.Command {
	var q report.PivotQuery
	var where []string
	var curve string
	cmd := &cobra.Command{
		Use:   "report RUNDIR",
		Short: "re-print the results table of a run, sweep or demo directory and re-draw its plots",
		Long: `Re-print the results table of a run, sweep or demo directory and re-draw its plots.

With --rows and --cols it prints one final metric as a paper-style table instead
(mean ± std over seeds in each cell), e.g. attacks by method at λ = 1:

  trellis report runs/rdpfl-table2 --rows adversary.attack --cols label \
      --where strategy.options.lambda=1 --metric honest_local_acc`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if q.Rows != "" || q.Cols != "" {
				if q.Rows == "" || q.Cols == "" {
					return fmt.Errorf("a table needs both --rows and --cols")
				}
				q.Where = map[string]string{}
				for _, w := range where {
					k, v, ok := strings.Cut(w, "=")
					if !ok {
						return fmt.Errorf("--where %q: want KEY=VALUE", w)
					}
					q.Where[k] = v
				}
				md, err := report.PivotDir(args[0], q)
				if err != nil {
					return err
				}
				fmt.Fprint(o.stdout, md)
				return nil
			}
			md, err := report.ResultsCurve(args[0], curve)
			if err != nil {
				return err
			}
			fmt.Fprint(o.stdout, md)
			fmt.Fprintf(o.stdout, "\nresults.md and plots (PNG, SVG) in %s\n", args[0])
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&q.Rows, "rows", "", "swept key (or label) whose values make the table's rows")
	f.StringVar(&q.Cols, "cols", "", "swept key (or label) whose values make the table's columns")
	f.StringVar(&q.Metric, "metric", "honest_local_acc", "final metric in the cells")
	f.StringArrayVar(&where, "where", nil, "KEY=VALUE: only runs with this swept value (repeatable)")
	f.IntVar(&q.Decimals, "decimals", 4, "digits after the point")
	f.StringVar(&curve, "curve", "", "accuracy the plots draw: honest_local_acc or honest_global_acc (default: global when measured)")
	return cmd
}

// loadConfigOrPreset reads a config file, or a built-in preset by name.
func loadConfigOrPreset(arg string) (experiment.Config, error) {
	if _, err := os.Stat(arg); err == nil {
		return experiment.LoadConfig(arg)
	}
	if b, ok := configs.Read(strings.TrimSuffix(arg, ".toml")); ok {
		return experiment.ParseConfig(b, "preset "+arg)
	}
	return experiment.Config{}, fmt.Errorf("%q is neither a config file nor a preset (presets: %s)", arg, strings.Join(configs.Names(), ", "))
}

func printSweep(o *options, out string, res *experiment.SweepResult) error {
	if o.json {
		if _, err := report.Results(out); err != nil {
			return err
		}
		type row struct {
			Dir    string            `json:"dir"`
			Params map[string]string `json:"params"`
			Seed   uint64            `json:"seed"`
			Final  experiment.Final  `json:"final"`
		}
		var rows []row
		for i, r := range res.Runs {
			rows = append(rows, row{filepath.Join(out, r.Dir), r.Params, r.Config.Seed, res.Fin[i]})
		}
		return jsonOut(o.stdout, rows)
	}
	md, err := report.Results(out)
	if err != nil {
		return err
	}
	fmt.Fprint(o.stdout, md)
	fmt.Fprintf(o.stdout, "\nrun directories, results.md and plots (PNG, SVG) in %s\n", out)
	return nil
}

func presetsCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "presets",
		Short: "list the built-in configs (run one with `trellis run NAME`)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			width := 0
			for _, n := range configs.Names() {
				width = max(width, len(n))
			}
			for _, n := range configs.Names() {
				fmt.Fprintf(o.stdout, "%-*s  %s\n", width, n, configs.Summary(n, 118-width))
			}
			return nil
		},
	}
}

func configCmd(o *options) *cobra.Command {
	c := &cobra.Command{Use: "config", Short: "show configuration defaults"}
	c.AddCommand(&cobra.Command{
		Use:   "defaults",
		Short: "print every config key with its default, as TOML",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprint(o.stdout, experiment.Defaults())
			return err
		},
	})
	return c
}

func jsonOut(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
