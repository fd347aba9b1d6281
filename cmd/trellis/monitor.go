package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/cluster"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/wire"
)

func monitorCmd(o *options) *cobra.Command {
	var f clusterFlags
	var gap, wait time.Duration
	var metricsAddr, key string
	dash := &dashFlag{}
	cmd := &cobra.Command{
		Use:   "monitor --config CFG --peers PEERS [-o DIR]",
		Short: "receive a deployed run's records and write its run directory (passive: never sends to nodes)",
		Long: `Receive a deployed run's records on the peers file's monitor endpoint and write its run
directory, as ` + "`trellis run`" + ` writes it. It never sends anything to a node. SIGINT or
SIGTERM stops it as it stops the nodes: it takes the records of their current rounds,
then writes every round of which a record arrived (the records that never came marked
missing) and the summary; a second signal does so at once. Exit code: 0 every round
written, 3 stopped before the last round, 1 an error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Before the data load: a stop while loading is a stop too.
			ctx, abort := stopSignals(cmd.Context())
			c, peers, err := f.load()
			if err != nil {
				return err
			}
			mode, err := timingMode(c, f.mode, cmd.Flags().Changed("mode"))
			if err != nil {
				return err
			}
			f.mode = string(mode)
			s, err := experiment.SetupOf(c, data.TrainTest{}) // the monitor needs the graph and the adversary, not the samples
			if err != nil {
				return err
			}
			d, err := s.Deploy()
			if err != nil {
				return err
			}
			var dir *wire.Directory
			var ident *wire.Identity // the monitor's key, for an encrypted socket
			switch {
			case key != "":
				if ident, err = cluster.ReadMonitorKey(key, peers); err != nil {
					return err
				}
				dir, err = peers.Directory()
			case peers.HasKeys():
				dir, err = peers.Directory()
			default:
				ident = cluster.SeedMonitorIdentity(c.Seed)
				dir, err = wire.NewSeedKeys(c.Seed, c.Nodes).Directory()
			}
			if err != nil {
				return err
			}
			src, err := f.source(c)
			if err != nil {
				return err
			}
			out, err := o.outDir(filepath.Join("runs", c.Name))
			if err != nil {
				return err
			}
			live, dashDone, err := dash.startRun(o, c, out)
			if err != nil {
				return err
			}
			bar := newProgress(o.stderr, o.quiet)
			var pm *cluster.MonitorMetrics
			if metricsAddr != "" {
				pm = cluster.NewMonitorMetrics()
				log := slog.New(slog.NewTextHandler(o.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
				a, err := cluster.ServeMetrics(context.WithoutCancel(ctx), metricsAddr, pm, log)
				if err != nil {
					return err
				}
				if !o.quiet {
					fmt.Fprintf(o.stderr, "metrics at http://%s/metrics\n", a)
				}
			}
			rd, err := experiment.CreateRunDir(c, out, seed.Describe(src)+" (deployment, "+f.mode+")", func(r *metrics.Round, rounds int) {
				bar.update(fmt.Sprintf("round %d of 0–%d, honest local accuracy %.3f", r.Round, rounds-1, r.HonestLocalAcc), r.Round+1, rounds)
			})
			if err != nil {
				dashDone(err)
				return err
			}
			err = cluster.RunMonitor(ctx, cluster.MonitorConfig{Run: clusterRun(d), Out: rd,
				Endpoint: peers.Monitor, Directory: dir, Dir: out, Gap: gap, Wait: wait, Metrics: pm, Live: live, Abort: abort,
				Encryption: cluster.Encryption(f.encryption), Identity: ident})
			stopped := errors.Is(err, cluster.ErrStopped)
			if stopped {
				err = nil // a stopped run's rounds are written, with its summary
			}
			fin, err := rd.Close(err)
			bar.done()
			dashDone(err)
			if err != nil {
				return err
			}
			if stopped {
				return fmt.Errorf("%w: the %d rounds written are in %s (the records that never came marked missing)", cluster.ErrStopped, fin.Rounds, out)
			}
			if !o.quiet {
				fmt.Fprintf(o.stderr, "%s: %d rounds, final honest local accuracy %.4f, delta_max %.4f\n", out, fin.Rounds, fin.HonestLocalAcc, fin.DeltaMax)
			}
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&metricsAddr, "metrics", "", metricsUsage)
	cmd.Flags().StringVar(&key, "key", "", "the monitor's private key file ("+cluster.MonitorKeyFile+" from `trellis keys`), for an encrypted socket")
	cmd.Flags().DurationVar(&gap, "gap", 0, "write a round this long after its first record even if some nodes never reported (0: wait for all)")
	cmd.Flags().DurationVar(&wait, "phase-timeout", 2*time.Minute, "lockstep (no --gap): the nodes' phase timeout; a node a peer gave up on is waited for this long more, then marked missing; async: a node that sends no record this long is marked missing from the steps it has not reported")
	dash.register(cmd)
	return cmd
}
