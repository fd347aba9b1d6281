package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/cluster"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/wire"
)

// clusterFlags are the flags the node and monitor processes share.
type clusterFlags struct {
	config, peers, randomness string
	mode, encryption          string
}

func (f *clusterFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.config, "config", "", "the experiment's config file (required)")
	cmd.Flags().StringVar(&f.peers, "peers", "", "the peers file: endpoints and public keys (required; `trellis keys` writes one)")
	cmd.Flags().StringVar(&f.randomness, "randomness", "private", "private: DP noise, masks and keys from crypto/rand; seeded: every stream from the seed (reproducible, not private)")
	cmd.Flags().StringVar(&f.mode, "mode", "lockstep", "lockstep (a phase closes when every expected message arrived) or wallclock (rounds on t0 + kΔ); a config with [timing] mode = \"async\" runs asynchronous steps")
	cmd.Flags().StringVar(&f.encryption, "encryption", string(cluster.EncryptAuto), encryptionUsage)
	_ = cmd.MarkFlagRequired("config")
	_ = cmd.MarkFlagRequired("peers")
}

// timingMode is a process's timing mode: the config's [timing] mode
// decides asynchronous timing (the nodes are built for it); --mode
// chooses between lock-step and wall-clock rounds otherwise.
func timingMode(c config.Config, flag string, changed bool) (cluster.Mode, error) {
	switch {
	case c.Async() && c.Timing.Flood > 0:
		return "", errors.New(`timing.flood is the Byzantine nodes' pace on the simulator's virtual clock: a deployed Byzantine node steps as fast as it trains; remove timing.flood to launch (the stale attack, timing.stale, runs)`)
	case c.Async() && changed && flag != string(cluster.Async):
		return "", fmt.Errorf("the config's [timing] mode is \"async\": --mode %s does not apply (the nodes run on their own steps)", flag)
	case c.Async():
		return cluster.Async, nil
	case flag == string(cluster.Async):
		return "", errors.New(`--mode async needs [timing] mode = "async" in the config (the nodes are built for asynchronous steps)`)
	}
	return cluster.Mode(flag), nil
}

// asyncIgnored is the note a deployed asynchronous run gives: the keys of
// the simulator's virtual clock do not apply to real time.
const asyncIgnored = `note: [timing] compute, latency, stragglers, slowdown and window describe the simulator's virtual clock; a deployed run runs on real time and ignores them (horizon is read as wall-clock seconds from the common start)`

const encryptionUsage = "which links use ZeroMQ's CURVE encryption: auto (those over TCP), curve (all) or none; every process of a run needs the same"

// load reads the config and the peers file.
func (f *clusterFlags) load() (config.Config, *cluster.Peers, error) {
	if err := cluster.Encryption(f.encryption).Check(); err != nil {
		return config.Config{}, nil, fmt.Errorf("--%w", err)
	}
	c, err := config.Load(f.config)
	if err != nil {
		return c, nil, err
	}
	p, err := cluster.LoadPeers(f.peers, c.Nodes)
	return c, p, err
}

// source is the nodes' randomness.
func (f *clusterFlags) source(c config.Config) (seed.Source, error) {
	switch f.randomness {
	case "private":
		return seed.Mixed{Seed: c.Seed, Crypto: seed.Private}, nil
	case "seeded":
		return seed.Seeded(c.Seed), nil
	}
	return nil, fmt.Errorf("--randomness %q: want private or seeded", f.randomness)
}

const metricsUsage = "serve Prometheus metrics at http://ADDR/metrics (HOST:PORT; :PORT binds 127.0.0.1 only)"

// stopSignals is how launch, node and monitor stop: the first SIGINT or
// SIGTERM cancels the returned context (a graceful stop after the current
// round), the second closes abort (stop at once, still cleaning up). A
// third is handled as the second: the process cleans up, then exits.
func stopSignals(ctx context.Context) (stop context.Context, abort <-chan struct{}) {
	stop, cancel := context.WithCancel(ctx)
	ab := make(chan struct{})
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		cancel()
		<-sig
		close(ab)
	}()
	return stop, ab
}

// setNodeGC lets a node process's heap grow experiment.NodeGCPercent
// above its live data between collections instead of Go's default 100
// (twice the live data), unless GOGC is set: node processes share
// machines, and one that holds as much garbage as live data takes twice
// its share. The cost is more frequent collections of a small heap.
func setNodeGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(experiment.NodeGCPercent)
	}
}

func nodeCmd(o *options) *cobra.Command {
	var f clusterFlags
	var id int
	var key, epoch, state, metricsAddr, export, dataFile, arrivals string
	var resume bool
	var t cluster.Timing
	var clockOffset time.Duration
	var mf memFlags
	cmd := &cobra.Command{
		Use:   "node --config CFG --id I --peers PEERS [--key FILE]",
		Short: "run one node of a deployed experiment (one process per node)",
		Long: `Run node I of the experiment in CFG as its own process: it binds its endpoint from
the peers file, runs every round (lock-step, or on the wall-clock epoch t0 + kΔ),
exchanges signed messages with the round's neighbours over ZeroMQ (ZMTP 3.1), and
pushes its per-round record to the monitor. Without --key, keys derive from the
seed (simulation keys: anyone who knows the seed can forge them). SIGINT or SIGTERM
stops it after the current round (it tells its peers it leaves, so none waits for it;
a second signal drops the round in progress); it then exits with code 3 (stopped
before the last round; 0: every round run, 1: an error). With --checkpoint DIR it writes its state there
after every round (atomically); --resume restarts from it after a crash or a kill:
the node restores its model, optimizer, strategy and trust state and joins the
wall-clock round that is open (the rounds it missed are missing in the run), or, in
asynchronous timing, goes on with the step after its checkpoint (lock-step: refused).

Without --data-file the node loads only its shard: the labels of every training
sample (to compute the partition every node computes alike), the values of its
own samples (its train, validation and test splits) and the global test set. MNIST
and Fashion-MNIST stream their training images, decoding the node's samples and
skipping the rest; other datasets decode whole, then keep the shard. With
--data-file it maps the decoded dataset file a launch wrote.

Before loading anything the node estimates its memory (its shard or mapped pages,
splits, model, optimizer and buffers) and refuses to start when that exceeds the available memory
(MemAvailable, or the cgroup limit; TRELLIS_MEMORY_AVAILABLE overrides), with the
numbers; --dry-run prints the estimate and exits, --no-memory-check starts anyway.
` + fmt.Sprintf(`Its heap grows %d %% above its live data between garbage collections (GOGC=%d: many
node processes share a machine), unless the environment sets GOGC.`, experiment.NodeGCPercent, experiment.NodeGCPercent),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Before the data load: a stop while loading is a stop too.
			ctx, abort := stopSignals(cmd.Context())
			setNodeGC()
			c, peers, err := f.load()
			if err != nil {
				return err
			}
			if done, err := mf.nodeGate(o, c, dataFile != ""); done || err != nil {
				return err
			}
			var keys wire.KeySource = wire.NewSeedKeys(c.Seed, c.Nodes)
			var monitorKey ed25519.PublicKey // the peers file's, unless the keys derive from the seed
			if key == "" {
				monitorKey = cluster.SeedMonitorIdentity(c.Seed).Public()
			}
			switch {
			case key != "":
				keys = cluster.Keys{Peers: peers, PrivatePath: key}
			case peers.HasKeys():
				return fmt.Errorf("%s lists public keys: give this node's key file with --key", f.peers)
			}
			src, err := f.source(c)
			if err != nil {
				return err
			}
			tt, err := nodeData(c, dataFile, id)
			if err != nil {
				return err
			}
			s, err := experiment.SetupOf(c, tt)
			if err != nil {
				return err
			}
			s.Random = src
			if t.Mode, err = timingMode(c, f.mode, cmd.Flags().Changed("mode")); err != nil {
				return err
			}
			if c.Async() {
				t.Horizon = time.Duration(c.Timing.Horizon * float64(time.Second))
			}
			if resume && state == "" {
				return fmt.Errorf("--resume needs --checkpoint DIR (where the node wrote its checkpoints)")
			}
			if epoch != "" {
				if t.Epoch, err = time.Parse(time.RFC3339Nano, epoch); err != nil {
					return fmt.Errorf("--epoch: %w (want RFC 3339, e.g. 2026-12-01T16:00:00Z)", err)
				}
			}
			if clockOffset != 0 {
				t.Clock = cluster.SkewedClock{Offset: clockOffset}
			}
			nc, err := nodeProcess(c, s, id, keys)
			if err != nil {
				return err
			}
			level := slog.LevelWarn
			if !o.quiet {
				level = slog.LevelInfo
			}
			log := slog.New(slog.NewTextHandler(o.stderr, &slog.HandlerOptions{Level: level})).With("node", id)
			var pm *cluster.NodeMetrics
			if metricsAddr != "" {
				pm = cluster.NewNodeMetrics(id)
				a, err := cluster.ServeMetrics(context.WithoutCancel(ctx), metricsAddr, pm, log)
				if err != nil {
					return err
				}
				log.Info("metrics", "url", "http://"+a.String()+"/metrics")
			}
			nc.Peers, nc.Timing, nc.StateDir, nc.Resume, nc.Metrics, nc.Log, nc.Export, nc.Abort = peers, t, state, resume, pm, log, export, abort
			nc.Encryption, nc.MonitorKey, nc.Arrivals = cluster.Encryption(f.encryption), monitorKey, arrivals
			return cluster.RunNode(ctx, nc)
		},
	}
	f.add(cmd)
	cmd.Flags().IntVar(&id, "id", -1, "this node's id (0 … nodes−1)")
	cmd.Flags().StringVar(&key, "key", "", "this node's private key file (from `trellis keys`)")
	cmd.Flags().StringVar(&epoch, "epoch", "", "wallclock: t0, the start of round 0; async: when the first step begins (RFC 3339)")
	cmd.Flags().StringVar(&arrivals, "arrivals", "", "async: write the node's arrival log (its steps and the messages it took, JSON lines; `sim.Replay` replays it) to this file")
	cmd.Flags().DurationVar(&t.Delta, "delta", 10*time.Second, "wallclock: the round length Δ")
	cmd.Flags().DurationVar(&t.Grace, "grace", 0, "wallclock: time kept free at the end of a round (default Δ/10)")
	cmd.Flags().DurationVar(&t.PhaseTimeout, "phase-timeout", 2*time.Minute, "lockstep: the longest a phase waits for a peer")
	cmd.Flags().StringVar(&state, "checkpoint", "", "write the node's checkpoint into this directory after every round")
	cmd.Flags().StringVar(&metricsAddr, "metrics", "", metricsUsage)
	cmd.Flags().StringVar(&export, "export", "", "after the last round, write the node's model to this file (safetensors: PyTorch's safetensors.torch.load_file reads it)")
	cmd.Flags().StringVar(&dataFile, "data-file", "", "map this decoded dataset file read-only instead of loading the node's shard of the dataset (launch writes one, cluster/dataset.bin, for its nodes to share)")
	cmd.Flags().BoolVar(&resume, "resume", false, "restart from the checkpoint in --checkpoint and join the open wall-clock round (async: go on with the next step)")
	cmd.Flags().DurationVar(&clockOffset, "clock-offset", 0, "run on the system clock off by this much (positive: ahead), to test how a deployment takes clock skew")
	_ = cmd.Flags().MarkHidden("clock-offset") // a fault to inject, not a setting
	mf.register(cmd, false)
	_ = cmd.MarkFlagRequired("id")
	return cmd
}

// nodeData is node id's dataset: the shared file mapped read-only (every
// node process of a launch maps the one the launch wrote, so the samples
// are in memory once) or, without one, its shard loaded (a node on its own
// device: every label, its own samples' values, the global test set;
// experiment.LoadNodeData). The mapping lives as long as the process.
func nodeData(c config.Config, file string, id int) (data.TrainTest, error) {
	if file == "" {
		return experiment.LoadNodeData(c, id)
	}
	s, err := data.OpenShared(file)
	if err != nil {
		return data.TrainTest{}, err
	}
	return s.TrainTest, nil
}

// clusterRun is the run every process of a deployment shares (cluster.Run),
// from the experiment's deployment.
func clusterRun(d *experiment.Deployment) cluster.Run {
	s := d.Setup
	return cluster.Run{Nodes: s.Nodes, Rounds: s.Rounds, EvalEvery: s.EvalEvery, Graph: d.Graph, Drops: d.Drops,
		Byzantine: d.Adversary.Byzantine, ByzantineIdle: s.ByzantineIdle, Async: s.Async != nil, Stale: s.AsyncStale()}
}

// nodeProcess builds node id of the experiment (config c, setup s) as the
// simulator builds it, with its keys, its adversary if it is Byzantine,
// and its checkpoints (naming the config): a node process's configuration
// but for the transport and timing.
func nodeProcess(c config.Config, s experiment.Setup, id int, keys wire.KeySource) (cluster.NodeConfig, error) {
	d, err := s.Deploy()
	if err != nil {
		return cluster.NodeConfig{}, err
	}
	n, adv, err := d.Node(id, keys)
	if err != nil {
		return cluster.NodeConfig{}, err
	}
	ident, err := keys.Identity(id)
	if err != nil {
		return cluster.NodeConfig{}, err
	}
	dir, err := keys.Directory()
	if err != nil {
		return cluster.NodeConfig{}, err
	}
	fp, err := experiment.Fingerprint(c)
	if err != nil {
		return cluster.NodeConfig{}, err
	}
	return cluster.NodeConfig{Node: n, Identity: ident, Directory: dir, Run: clusterRun(d), Adversary: adv, Global: d.Global(),
		Checkpoints: experiment.NodeCheckpoints{Node: n, Config: fp}}, nil
}
