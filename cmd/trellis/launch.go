package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/cluster"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/dashboard"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/experiment"
)

func launchCmd(o *options) *cobra.Command {
	var lc cluster.LaunchConfig
	var mode string
	var mf memFlags
	cmd := &cobra.Command{
		Use:   "launch CONFIG|PRESET [-o DIR]",
		Short: "run an experiment as one process per node on this machine (IPC), with a monitor writing the run directory",
		Long: `Run an experiment deployed: a monitor and one node process per node on this machine,
talking ZeroMQ over Unix sockets. Lock-step mode (the default) gives the simulator's
metrics bit for bit; wallclock runs rounds on the epoch t0 + kΔ; a config with [timing]
mode = "async" runs each node on its own steps from a common start (--start-delay), each
writing its arrival log (cluster/node-I.arrivals.jsonl, which the simulator can replay).
The run directory (-o, default runs/NAME) holds the same files as ` + "`trellis run`" + `'s, plus
cluster/ with the config, keys, peers file and each node's log.

SIGINT (Ctrl-C) or SIGTERM stops every process after its current round: each node tells
its peers it leaves, the monitor writes every round of which a record arrived (the
records that never came marked missing) and the summary, and the sockets are removed;
a second signal (or a minute without the processes stopping) stops them at once, still
cleaning up. A node that fails (it cannot start, or exits with an error) stops every
other process, and the launch names its error. A node killed by a signal is reported and
the run goes on without it (restart it with --resume in wallclock mode, or in
asynchronous timing, with --checkpoints). Exit code: 0 every round written, 3 stopped before the last round (the
finished rounds are written), 1 an error.` + memHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := loadConfigOrPreset(args[0], nil)
			if err != nil {
				return err
			}
			if c, err = oneExperiment(c); err != nil {
				return err
			}
			done, err := mf.launchGate(o, c)
			if err != nil {
				return err
			}
			// After the memory check (it builds the graph), and before a
			// dry run says the launch is fine.
			if lc.Config, err = launchable(c); err != nil || done {
				return err
			}
			if lc.Exe, err = os.Executable(); err != nil {
				return err
			}
			if lc.Out, err = o.outDir(filepath.Join("runs", c.Name)); err != nil {
				return err
			}
			lc.Nodes, lc.Stderr, lc.Quiet = c.Nodes, o.stderr, o.quiet
			if lc.Timing.Mode, err = timingMode(c, mode, cmd.Flags().Changed("mode")); err != nil {
				return err
			}
			if c.Async() && !o.quiet {
				fmt.Fprintln(o.stderr, asyncIgnored)
			}
			if err := lc.Encryption.Check(); err != nil {
				return fmt.Errorf("--%w", err)
			}
			file, err := writeSharedData(c, lc.Out)
			if err != nil {
				return err
			}
			lc.NodeArgs = append(lc.NodeArgs, "--data-file", file)
			if lc.Dashboard != "" {
				// Checked here, before any process starts; the monitor binds it.
				if err := dashboard.CheckAddr(lc.Dashboard); err != nil {
					return err
				}
			}
			ctx, abort := stopSignals(cmd.Context())
			lc.Abort = abort
			return cluster.Launch(ctx, lc)
		},
	}
	mf.register(cmd, false)
	cmd.Flags().StringVar(&mode, "mode", "lockstep", "lockstep or wallclock (a config with [timing] mode = \"async\" runs asynchronous steps)")
	cmd.Flags().DurationVar(&lc.Timing.Delta, "delta", 10*time.Second, "wallclock: the round length Δ")
	cmd.Flags().DurationVar(&lc.StartDelay, "start-delay", 15*time.Second, "wallclock: how long after the launch round 0 starts; async: the nodes' first step")
	cmd.Flags().DurationVar(&lc.Timing.PhaseTimeout, "phase-timeout", 2*time.Minute, "lockstep: the longest a phase waits for a peer; async: how long the monitor waits for a silent node before marking its missing steps")
	cmd.Flags().BoolVar(&lc.SeedKeys, "seed-keys", false, "derive the keys from the seed (simulation keys, not secret) instead of writing key files")
	cmd.Flags().BoolVar(&lc.TCP, "tcp", false, "talk over TCP on 127.0.0.1 instead of Unix sockets")
	cmd.Flags().StringVar((*string)(&lc.Encryption), "encryption", string(cluster.EncryptAuto), encryptionUsage)
	cmd.Flags().BoolVar(&lc.Checkpoints, "checkpoints", false, "wallclock and async: every node writes its checkpoint after every round (step) into cluster/node-I.state (restart one with `trellis node … --checkpoint DIR --resume`)")
	cmd.Flags().IntVar(&lc.MetricsPort, "metrics-port", 0, "serve Prometheus metrics on 127.0.0.1: the monitor's at this port, node i's at port+1+i")
	cmd.Flags().StringVar(&lc.Randomness, "randomness", "private", "the nodes' randomness: private or seeded")
	cmd.Flags().StringVar(&lc.Dashboard, "dashboard", "", "HOST:PORT: the monitor serves a live dashboard of the run in the browser (e.g. 127.0.0.1:8080; a non-loopback host exposes the run and is warned about)")
	return cmd
}

// SharedDataFile is the decoded dataset a launch writes in its run
// directory's cluster/ for its node processes to map.
const SharedDataFile = "dataset.bin"

// writeSharedData loads c's dataset once and writes it decoded into the
// launch's directory, for every node process to map read-only
// (data.OpenShared) instead of decoding its own copy, each node's samples
// together (Setup.RowOrder); it returns the file's path. The launcher's copy is given back to the system before
// the processes start.
func writeSharedData(c config.Config, out string) (string, error) {
	dir := filepath.Join(out, cluster.ClusterDir)
	path := filepath.Join(dir, SharedDataFile)
	err := func() error {
		// The data first: a dataset that cannot be loaded leaves no
		// directory behind.
		tt, err := experiment.LoadData(c)
		if err != nil {
			return err
		}
		s, err := experiment.SetupOf(c, tt)
		if err != nil {
			return err
		}
		order, err := s.RowOrder()
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return data.WriteShared(path, tt, order)
	}()
	debug.FreeOSMemory()
	return path, err
}

// oneExperiment is the one run of c's sweep (c itself without one): a
// launch runs one experiment, and a sweep of several is refused.
func oneExperiment(c config.Config) (config.Config, error) {
	runs, _, err := c.Expand()
	if err != nil {
		return c, err
	}
	if len(runs) != 1 {
		return c, fmt.Errorf("launch runs one experiment: this config's [sweep] has %d runs; launch its runs' configs one at a time", len(runs))
	}
	return runs[0].Config, nil
}

// launchable returns c, one experiment (oneExperiment), as the config file
// every process of its launch reads, or why it cannot run as one process
// per node: an attack that reads every honest payload has no process to
// run in (adversary.CheckLocal).
func launchable(c config.Config) ([]byte, error) {
	s, err := experiment.SetupOf(c, data.TrainTest{}) // the adversary, not the samples
	if err != nil {
		return nil, err
	}
	ac, err := s.Adversary()
	if err == nil {
		err = adversary.CheckLocal(ac)
	}
	if err != nil {
		return nil, fmt.Errorf("this experiment cannot run as one process per node: %w", err)
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(c); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
