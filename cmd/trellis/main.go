// Command trellis is the command line of the trellis framework. It holds
// flags and wiring only; the work is done by the library packages.
//
//	trellis demo                      the main job on the embedded MNIST
//	trellis run CONFIG|PRESET         one experiment (or every run of its sweep)
//	trellis sweep CONFIG|PRESET       the runs of a sweep, resuming where it stopped
//	trellis report RUNDIR             re-print tables, re-draw plots, write report.html
//	trellis serve RUNDIR...           the dashboard's page over finished runs and sweeps
//	trellis validate CONFIG|PRESET    check a config and every run of its sweep
//	trellis presets [show NAME]       the built-in configs
//	trellis config defaults           every key with its default
//	trellis bench rules               κ̂-robustness of every rule under every attack
//	trellis launch CONFIG|PRESET      a deployed run on this machine: monitor + one process per node
//	trellis node / monitor / keys     one node process, the passive monitor, a deployment's keys
//	trellis slurm / k8s sweep|launch  an sbatch script or Kubernetes manifests for a sweep or a deployed run
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/cluster"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := newRoot(os.Stdout, os.Stderr).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "trellis:", err)
		os.Exit(exitCode(err))
	}
}

// exitCode is the process's exit code after err: cluster.ExitStopped for
// a deployed run stopped by a signal before its last round, else 1.
func exitCode(err error) int {
	if errors.Is(err, cluster.ErrStopped) {
		return cluster.ExitStopped
	}
	return 1
}

// options are the flags every command shares.
type options struct {
	quiet  bool
	json   bool
	out    string
	stdout io.Writer
	stderr io.Writer
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	o := &options{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:           "trellis",
		Short:         "decentralized, personalized federated learning that keeps working when some peers lie",
		SilenceUsage:  true,
		SilenceErrors: true,
		// -o "" would silently become the default directory.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if f := cmd.Flags().Lookup("out"); f != nil && f.Changed && strings.TrimSpace(o.out) == "" {
				return errors.New(`-o "": the output directory is empty; give a directory, or leave -o out for the default (runs/NAME)`)
			}
			return checkJSON(cmd, o)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if v, _ := cmd.Flags().GetBool("version"); v {
				return printVersion(o)
			}
			return cmd.Help()
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.Flags().BoolP("version", "v", false, "print the version and the commit it was built from (--json: as JSON)")
	root.PersistentFlags().BoolVarP(&o.quiet, "quiet", "q", false, "no progress output")
	root.PersistentFlags().BoolVar(&o.json, "json", false, "print a machine-readable summary on stdout (run, sweep, worst-case, demo, report, validate, presets, config defaults, bench rules, privacy, audit, --version; launch and node with --dry-run)")
	root.PersistentFlags().StringVarP(&o.out, "out", "o", "", "output directory (default runs/NAME)")
	root.AddCommand(demoCmd(o), runCmd(o, "run"), runCmd(o, "sweep"), reportCmd(o), presetsCmd(o), configCmd(o), benchCmd(o), privacyCmd(o), validateCmd(o), auditCmd(o))
	root.AddCommand(nodeCmd(o))
	root.AddCommand(monitorCmd(o))
	root.AddCommand(launchCmd(o))
	root.AddCommand(keysCmd(o))
	root.AddCommand(slurmCmd(o), k8sCmd(o))
	root.AddCommand(serveCmd(o))
	root.AddCommand(worstCaseCmd(o))
	return root
}

// outDir is the output directory: -o, or def when -o is not given. A
// path that exists and is not a directory is refused here, before any
// work: nothing could be written under it, and no flag would change that.
func (o *options) outDir(def string) (string, error) {
	out := o.out
	if out == "" {
		out = def
	}
	if fi, err := os.Stat(out); err == nil && !fi.IsDir() {
		return "", fmt.Errorf("-o %s: is a file, not a directory; give a directory (a new one, or one trellis wrote), or remove the file", out)
	}
	return out, nil
}

// jsonCommands are the commands that print a machine-readable summary
// with --json, each with the flag it needs for one ("" none).
var jsonCommands = map[string]string{
	"trellis": "", "trellis demo": "", "trellis run": "", "trellis sweep": "", "trellis report": "",
	"trellis presets": "", "trellis presets show": "", "trellis config defaults": "", "trellis validate": "",
	"trellis bench rules": "", "trellis privacy": "", "trellis audit": "", "trellis worst-case": "",
	"trellis launch": "--dry-run", "trellis node": "--dry-run",
}

// checkJSON refuses --json where the command would ignore it.
func checkJSON(cmd *cobra.Command, o *options) error {
	if !o.json {
		return nil
	}
	need, ok := jsonCommands[cmd.CommandPath()]
	if ok && need == "" {
		return nil
	}
	if ok {
		if f := cmd.Flags().Lookup(strings.TrimPrefix(need, "--")); f != nil && f.Changed {
			return nil
		}
		return fmt.Errorf("--json: `%s` prints a machine-readable summary only with %s; leave --json out", cmd.CommandPath(), need)
	}
	var with []string
	for c, need := range jsonCommands {
		if c != "trellis" && need == "" {
			with = append(with, strings.TrimPrefix(c, "trellis "))
		}
	}
	slices.Sort(with)
	return fmt.Errorf("--json: `%s` has no machine-readable output; leave --json out (it works with %s, and --version)", cmd.CommandPath(), strings.Join(with, ", "))
}

// run executes the command line args (for tests).
func run(args []string, stdout, stderr io.Writer) error {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	return root.ExecuteContext(context.Background())
}
