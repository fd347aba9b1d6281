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
		Version:       version(),
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().BoolVarP(&o.quiet, "quiet", "q", false, "no progress output")
	root.PersistentFlags().BoolVar(&o.json, "json", false, "print a machine-readable summary on stdout")
	root.PersistentFlags().StringVarP(&o.out, "out", "o", "", "output directory (default runs/NAME)")
	root.AddCommand(demoCmd(o), runCmd(o, "run"), runCmd(o, "sweep"), reportCmd(o), presetsCmd(o), configCmd(o), benchCmd(o), privacyCmd(o), validateCmd(o), auditCmd(o))
	root.AddCommand(nodeCmd(o))
	root.AddCommand(monitorCmd(o))
	root.AddCommand(launchCmd(o))
	root.AddCommand(keysCmd(o))
	root.AddCommand(slurmCmd(o), k8sCmd(o))
	root.AddCommand(serveCmd(o))
	return root
}

// run executes the command line args (for tests).
func run(args []string, stdout, stderr io.Writer) error {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	return root.ExecuteContext(context.Background())
}
