package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/configs"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/report"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/scale"
)

func runCmd(o *options, name string) *cobra.Command {
	short := "run an experiment from a config file or preset (every run of its sweep, if it has one)"
	if name == "sweep" {
		short = "run every run of a config's sweep, one after another, resuming where a previous call stopped"
	}
	var sets []string
	var force, keepGoing bool
	var cpuProfile string
	var sf shardFlags
	var mf memFlags
	dash := &dashFlag{}
	c := &cobra.Command{
		Use:   name + " CONFIG|PRESET",
		Short: short,
		Long: short + `.

A run directory records its config's hash: calling the command again with the
same config resumes an interrupted run after its last complete round (the
final files are those of an uninterrupted run) and keeps finished ones whose
records are still those they wrote (an edited or truncated metrics.jsonl or
rounds.jsonl is refused); with another config it refuses, unless --force
redoes the runs.` + shardHelp + memHelp,
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
			if cfg.WorstCase != nil {
				return fmt.Errorf("%s is a worst-case search ([worst_case]): run it with `trellis worst-case %s`", args[0], scale.Quote(args[0]))
			}
			out, err := o.outDir(filepath.Join("runs", cfg.Name))
			if err != nil {
				return err
			}
			if sf.merge {
				return mergeSweep(o, cfg, out, args[1:])
			}
			// The memory check first: the warnings of a robust rule build
			// the graph, which a run too large for the machine cannot.
			// Task type consensus has neither model nor data to estimate.
			done := false
			if cfg.Consensus != nil {
				if err := consensusFlags(&mf, dash); err != nil {
					return err
				}
			} else if done, err = mf.gate(cmd.Context(), o, cfg, shard); err != nil {
				return err
			}
			warn(o, cfg)
			noteDefaults(o, cfg)
			if done {
				return nil
			}
			live, dashDone, err := dash.start(o, cfg, out, force)
			if err != nil {
				return err
			}
			stopProfile, err := startCPUProfile(cpuProfile)
			if err != nil {
				return err
			}
			defer stopProfile()
			bar := newProgress(o.stderr, o.quiet)
			res, err := experiment.RunSweepWith(cmd.Context(), cfg, out, experiment.SweepOptions{
				Force: force, KeepGoing: keepGoing, Shard: shard, Live: live,
				Progress: func(run, runs int, r config.SweepRun, round, rounds int) {
					bar.update(fmt.Sprintf("run %d/%d %s", run+1, runs, r.Dir), run*rounds+round, runs*rounds)
				}})
			bar.done()
			dashDone(res)
			if err != nil {
				if cmd.Context().Err() != nil {
					return fmt.Errorf("interrupted; finished rounds are in %s, and `%s` resumes after the last one", out, resumeCommand(cmd, args[0], out))
				}
				if res == nil || !keepGoing {
					return err
				}
				fmt.Fprintf(o.stderr, "trellis: some runs failed (--keep-going):\n%v\n", err)
			}
			if shard.Sharded() {
				return printShard(o, args[0], out, shard, res)
			}
			return printSweep(o, out, res)
		},
	}
	f := c.Flags()
	f.StringArrayVar(&sets, "set", nil, "KEY=VALUE: override one config key (repeatable), e.g. --set rounds=5 --set strategy.rule=krum")
	f.BoolVar(&force, "force", false, "redo runs whose directories hold another config's (or a finished) run")
	f.BoolVar(&keepGoing, "keep-going", false, "record a failed run and go on with the next")
	f.StringVar(&cpuProfile, "cpuprofile", "", "FILE: write a CPU profile of the runs to FILE (read it with `go tool pprof`)")
	sf.add(c)
	mf.register(c, true)
	dash.register(c)
	return c
}

// consensusFlags refuses the flags of `run` that mean nothing to task type
// consensus ([consensus]).
func consensusFlags(mf *memFlags, dash *dashFlag) error {
	if mf.dryRun || mf.probe {
		return fmt.Errorf("--dry-run and --probe estimate a learning run's memory; task type consensus ([consensus]) holds only nodes × dim values and its iterations' errors, and runs in seconds: run it")
	}
	if dash.addr != "" {
		return fmt.Errorf("--dashboard draws learning runs (accuracy, weights); task type consensus ([consensus]) prints its table at the end, and each run's rounds.jsonl has its error after every iteration")
	}
	return nil
}

// resumeCommand is the command line that resumes an interrupted run or
// sweep into out: the command and its config, every flag given (each
// --set in order: they define the runs) but --force, which would redo the
// finished rounds, and -o out.
func resumeCommand(cmd *cobra.Command, arg, out string) string {
	words := []string{cmd.CommandPath(), scale.Quote(arg)}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "force", "out":
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				words = append(words, "--"+f.Name, scale.Quote(v))
			}
			return
		}
		if f.Value.Type() == "bool" {
			if f.Value.String() == "true" {
				words = append(words, "--"+f.Name)
			} else {
				words = append(words, "--"+f.Name+"=false")
			}
			return
		}
		words = append(words, "--"+f.Name, scale.Quote(f.Value.String()))
	})
	return strings.Join(append(words, "-o", scale.Quote(out)), " ")
}

// noteDefaults says which defaults that change what is measured the config
// took without a file asking for them: a convolutional model's global
// accuracy on a subsample of the test set.
func noteDefaults(o *options, c config.Config) {
	if c.Evaluation.ConvDefault && !o.quiet {
		fmt.Fprintf(o.stderr, "trellis: note: global accuracy is measured on the first %d samples of the global test set, the default for a %s model (every node evaluates each; [evaluation] global_test = -1 takes them all)\n",
			c.Evaluation.GlobalTest, c.Model.Kind)
	}
}

// warn prints the config's warnings (experiment.Warnings), once per distinct
// message over the sweep's runs.
func warn(o *options, c config.Config) {
	runs, _, err := c.Expand()
	if err != nil {
		return
	}
	const most = 5
	seen := map[string]bool{}
	for _, r := range runs {
		for _, w := range experiment.Warnings(r.Config) {
			if !seen[w] {
				seen[w] = true
				if len(seen) <= most {
					fmt.Fprintf(o.stderr, "trellis: warning: %s: %s\n", r.Dir, w)
				}
			}
		}
	}
	if len(seen) > most {
		fmt.Fprintf(o.stderr, "trellis: %d more warnings (`trellis validate` lists them all)\n", len(seen)-most)
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
				if o.json {
					return jsonOut(o.stdout, map[string]string{"table": md})
				}
				fmt.Fprint(o.stdout, md)
				return nil
			}
			md, err := report.ResultsCurve(args[0], curve)
			if err != nil {
				return err
			}
			if o.json {
				rows, err := rundir.ReadSummary(args[0])
				if err != nil {
					return err
				}
				return jsonOut(o.stdout, rows)
			}
			fmt.Fprint(o.stdout, md)
			fmt.Fprintf(o.stdout, "\nresults.md and plots (PNG, SVG) in %s\n", args[0])
			return writeReportHTML(o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&q.Rows, "rows", "", "config key (swept, or one the label names, e.g. consensus.method; or label) whose values make the table's rows")
	f.StringVar(&q.Cols, "cols", "", "config key (as --rows) whose values make the table's columns")
	f.StringVar(&q.Metric, "metric", "honest_local_acc", "final metric in the cells")
	f.StringArrayVar(&where, "where", nil, "KEY=VALUE: only runs with this config value (repeatable)")
	f.IntVar(&q.Decimals, "decimals", 4, "digits after the point")
	f.StringVar(&curve, "curve", "", "accuracy the plots draw for every run: honest_local_acc or honest_global_acc (default: each run's strategy picks, local for personalized methods, global for the others where measured)")
	return cmd
}

// loadConfigOrPreset reads a config file, or a built-in preset by name,
// and applies the --set overrides (config.Resolve).
func loadConfigOrPreset(arg string, sets []string) (config.Config, error) {
	cfg, _, err := config.Resolve(arg, sets)
	return cfg, err
}

func printSweep(o *options, out string, res *experiment.SweepResult) error {
	if o.json {
		if _, err := report.Results(out); err != nil {
			return err
		}
		if err := writeReportHTML(o, out); err != nil {
			return err
		}
		type row struct {
			Dir    string            `json:"dir"`
			Params map[string]string `json:"params"`
			Seed   uint64            `json:"seed"`
			Final  rundir.Final      `json:"final"`
		}
		var rows []row
		for i, r := range res.Runs {
			if res.Errs != nil && res.Errs[i] != nil {
				continue
			}
			rows = append(rows, row{filepath.Join(out, r.Dir), r.Params, r.Config.Seed, res.Fin[i]})
		}
		return jsonOut(o.stdout, rows)
	}
	md, err := report.Results(out)
	if err != nil {
		return err
	}
	fmt.Fprint(o.stdout, md)
	what := "run directories, results.md and plots (PNG, SVG)"
	if len(res.Runs) > 0 && res.Runs[0].Config.Consensus != nil {
		what = "run directories and results.md" // task type consensus draws no plots
	}
	fmt.Fprintf(o.stdout, "\n%s in %s\n", what, out)
	return writeReportHTML(o, out)
}

func presetsCmd(o *options) *cobra.Command {
	c := &cobra.Command{
		Use:   "presets",
		Short: "list the built-in configs (run one with `trellis run NAME`, print one with `trellis presets show NAME`)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.json {
				type preset struct {
					Name    string `json:"name"`
					Summary string `json:"summary"`
				}
				var ps []preset
				for _, n := range configs.Names() {
					ps = append(ps, preset{n, configs.Summary(n, 1<<20)})
				}
				return jsonOut(o.stdout, ps)
			}
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
	c.AddCommand(&cobra.Command{
		Use:   "show NAME",
		Short: "print a preset's TOML (save it, edit it, run the file)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, ok := configs.Read(strings.TrimSuffix(args[0], ".toml"))
			if !ok {
				return fmt.Errorf("no preset %q: %s", args[0], config.PresetHint(args[0]))
			}
			if o.json {
				return jsonOut(o.stdout, map[string]string{"name": args[0], "toml": string(b)})
			}
			_, err := o.stdout.Write(b)
			return err
		},
	})
	return c
}

func configCmd(o *options) *cobra.Command {
	c := &cobra.Command{Use: "config", Short: "show configuration defaults"}
	c.AddCommand(&cobra.Command{
		Use:   "defaults",
		Short: "print every config key with its default, as TOML (--json: as JSON, with the strategy registry under \"strategies\")",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.json {
				return jsonOut(o.stdout, config.DefaultsJSON())
			}
			_, err := fmt.Fprint(o.stdout, config.Defaults())
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
