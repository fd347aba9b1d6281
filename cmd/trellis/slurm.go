package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/scale"
)

// configArg is a config argument as a job sees it: an absolute file path
// or a preset name, with its text and the config it decodes to.
type configArg struct {
	ref    string
	preset bool
	text   []byte
	cfg    config.Config
}

func loadConfigArg(arg string) (configArg, error) {
	cfg, src, err := config.Resolve(arg, nil)
	if err != nil {
		return configArg{}, err
	}
	return configArg{ref: src.Ref, preset: src.Preset, text: src.Text, cfg: cfg}, nil
}

// shards is the number of shards of the config's sweep: n, or one per run
// when n is 0; at most one per run.
func (ca configArg) shards(n int) (int, error) {
	runs, _, err := ca.cfg.Expand()
	if err != nil {
		return 0, err
	}
	if n <= 0 {
		n = len(runs)
	}
	if n > len(runs) {
		return 0, fmt.Errorf("--shards %d for a sweep of %d runs: at most one shard per run", n, len(runs))
	}
	return n, nil
}

// single refuses a config with a sweep for a deployed run.
func (ca configArg) single(engine string) error {
	if ca.cfg.Sweep.Grid != nil || ca.cfg.Sweep.Variants != nil || len(ca.cfg.Sweep.Seeds) > 1 {
		return fmt.Errorf("a deployed run is one run: this config has a [sweep] (use `trellis %s sweep`)", engine)
	}
	return nil
}

func slurmCmd(o *options) *cobra.Command {
	var s scale.Slurm
	var submit bool
	c := &cobra.Command{
		Use:   "slurm",
		Short: "print (or --submit) a Slurm batch script: a job array for a sweep, one job of N tasks for a deployed run",
		Long: `Print a ready sbatch script, or with --submit write it into the output directory
and submit it. Paths in it are absolute: the output directory, the config and the
trellis binary (--trellis, default this one) must be on a file system every compute
node sees.`,
	}
	pf := c.PersistentFlags()
	pf.BoolVar(&submit, "submit", false, "write the script into the output directory and submit it with sbatch")
	pf.StringVar(&s.Trellis, "trellis", "", "the trellis binary on the compute nodes (default: this binary's absolute path)")
	pf.StringVar(&s.Partition, "partition", "", "sbatch --partition")
	pf.StringVar(&s.Time, "time", "", "sbatch --time (e.g. 02:00:00)")
	pf.StringVar(&s.Mem, "mem-per-cpu", "", "sbatch --mem-per-cpu (e.g. 2G)")
	pf.IntVar(&s.CPUs, "cpus-per-task", 0, "sbatch --cpus-per-task")
	pf.BoolVar(&s.Overcommit, "overcommit", false, "sbatch --overcommit: more tasks than CPUs (a small cluster)")
	pf.StringArrayVar(&s.Extra, "sbatch", nil, "another #SBATCH option, as written after #SBATCH (repeatable), e.g. --sbatch=--account=lab")
	prepare := func(arg string) (configArg, error) {
		ca, err := loadConfigArg(arg)
		if err != nil {
			return ca, err
		}
		s.Config, s.Preset = ca.ref, ca.preset
		s.Out = o.out
		if s.Out == "" {
			s.Out = filepath.Join("runs", ca.cfg.Name)
		}
		if s.Out, err = filepath.Abs(s.Out); err != nil {
			return ca, err
		}
		s.Name = config.SafeName(ca.cfg.Name)
		if s.Trellis == "" {
			if s.Trellis, err = os.Executable(); err != nil {
				return ca, err
			}
		}
		return ca, nil
	}

	var shards, parallel int
	sweep := &cobra.Command{
		Use:   "sweep CONFIG|PRESET [-o DIR]",
		Short: "a job array of sweep shards (task i runs the runs k with k mod N = i), then the merge",
		Long: `A job array running the sweep's shards: task i of N runs the runs k (in
` + "`trellis validate`" + ` order) with k mod N = i, all into one sweep directory; any task can
be rerun alone. With --submit, a second job (afterany) merges the shards into the
sweep's summary.csv, results.md and plots, or names the missing runs.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ca, err := prepare(args[0])
			if err != nil {
				return err
			}
			if shards, err = ca.shards(shards); err != nil {
				return err
			}
			script, err := scale.SlurmSweep(s, shards, parallel)
			if err != nil {
				return err
			}
			if !submit {
				fmt.Fprint(o.stdout, script)
				fmt.Fprintf(o.stdout, "# mkdir -p %s; submit: sbatch SCRIPT; when the array is done:\n# %s\n", scale.Quote(s.Out), scale.SlurmMerge(s))
				fmt.Fprintf(o.stdout, "# (or with --submit, which submits the merge as a job that waits for the array)\n")
				return nil
			}
			id, err := sbatch(s.Out, "sweep.sbatch", script, scale.SweepLogs(s))
			if err != nil {
				return err
			}
			merge, err := sbatchRun("--parsable", "--dependency=afterany:"+id, "--job-name="+s.Name+"-merge",
				"--output="+s.Out+"/slurm-merge-%j.out", "--wrap", scale.SlurmMerge(s))
			if err != nil {
				return fmt.Errorf("the array is job %s, but the merge job: %w", id, err)
			}
			fmt.Fprintf(o.stdout, "submitted job array %s (%d shards) and merge job %s; results in %s\n", id, shards, merge, s.Out)
			return nil
		},
	}
	sweep.Flags().IntVar(&shards, "shards", 0, "number of array tasks (default: one per run)")
	sweep.Flags().IntVar(&parallel, "parallel", 0, "at most this many tasks at once (0: as Slurm schedules)")

	var port int
	var t scale.Timing
	launch := &cobra.Command{
		Use:   "launch CONFIG|PRESET [-o DIR]",
		Short: "one job of N tasks: srun starts `trellis node --id $SLURM_PROCID` in each, the monitor on the batch host",
		Long: `One job of N tasks (N = the config's nodes) for a deployed run: a first job step
writes each task's host name under its SLURM_PROCID into DIR/cluster/hosts (the
rendezvous), the script writes the peers file and fresh keys (node i on
tcp://HOST_i:PORT+1+i), starts the monitor on the batch host (tcp://HOST:PORT) and
srun starts every node, with the same block placement. The run directory DIR holds
what ` + "`trellis launch`" + ` writes.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ca, err := prepare(args[0])
			if err != nil {
				return err
			}
			if err := ca.single("slurm"); err != nil {
				return err
			}
			script, err := scale.SlurmLaunch(s, ca.cfg.Nodes, port, t)
			if err != nil {
				return err
			}
			if !submit {
				fmt.Fprint(o.stdout, script)
				fmt.Fprintf(o.stdout, "# mkdir -p %s; submit: sbatch SCRIPT\n", scale.Quote(s.Out))
				return nil
			}
			id, err := sbatch(s.Out, "launch.sbatch", script, scale.LaunchLogs(s))
			if err != nil {
				return err
			}
			fmt.Fprintf(o.stdout, "submitted job %s (%d node tasks); the run directory is %s\n", id, ca.cfg.Nodes, s.Out)
			return nil
		},
	}
	launch.Flags().IntVar(&port, "port", 7100, "the monitor's TCP port; node i listens on port+1+i")
	launch.Flags().StringVar(&t.Mode, "mode", "lockstep", "lockstep or wallclock")
	launch.Flags().DurationVar(&t.Delta, "delta", 10*time.Second, "wallclock: the round length Δ")
	launch.Flags().DurationVar(&t.Start, "start-delay", 30*time.Second, "wallclock: how long after the keys are written round 0 starts")
	c.AddCommand(sweep, launch)
	return c
}

// sbatch writes script into dir as name and submits it with its log
// files; it returns the job id.
func sbatch(dir, name, script, logs string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		return "", err
	}
	return sbatchRun("--parsable", "--output="+logs, path)
}

func sbatchRun(args ...string) (string, error) {
	if _, err := exec.LookPath("sbatch"); err != nil {
		return "", errors.New("--submit: no sbatch on PATH (install Slurm's client, or print the script and submit it where sbatch is)")
	}
	out, err := exec.Command("sbatch", args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("sbatch: %w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("sbatch: %w", err)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	return id, nil
}
