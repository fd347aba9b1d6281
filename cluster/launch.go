package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/trellis-fl/trellis/wire"
)

// LaunchConfig is a deployed run on one machine: a monitor and one process
// per node, started from the trellis binary Exe.
type LaunchConfig struct {
	Exe string
	// Config is the experiment's config file, as every process reads it
	// (trellis node and trellis monitor --config), of a run of Nodes
	// nodes that can run as one process per node (the CLI checks that:
	// one experiment, no sweep; an attack each process can run,
	// adversary.CheckLocal).
	Config []byte
	Nodes  int
	// Out is the run directory (the monitor writes it); the launch keeps
	// its config, keys, peers file and the processes' logs in Out/cluster.
	Out    string
	Timing Timing
	// SeedKeys derives the keys from the seed (simulation keys, not
	// secret) instead of writing fresh key files.
	SeedKeys bool
	// TCP puts the endpoints on 127.0.0.1 ports instead of Unix sockets.
	TCP bool
	// Randomness is the nodes' --randomness ("private" or "seeded").
	Randomness string
	// StartDelay (wall-clock) is how long after the launch the epoch t0
	// falls, for the processes to load their data (default 15 s).
	StartDelay time.Duration
	// Stderr receives the monitor's progress, unless Quiet.
	Stderr io.Writer
	Quiet  bool
	// Checkpoints (wall-clock) gives every node a checkpoint directory,
	// Out/cluster/node-I.state, so that a node that died can be restarted
	// with `trellis node … --resume` (its command line is in its log's
	// directory: the launch's own, plus --resume).
	Checkpoints bool
	// MetricsPort, when positive, serves Prometheus metrics on the
	// loopback interface: the monitor's at 127.0.0.1:MetricsPort, node
	// i's at MetricsPort+1+i.
	MetricsPort int
	// Dashboard, when set, is the HOST:PORT the monitor serves its live
	// dashboard on (trellis monitor --dashboard).
	Dashboard string
}

// ClusterDir is the subdirectory of a launched run's directory with what
// the launch wrote besides the run's files.
const ClusterDir = "cluster"

// Launch writes the run's config, keys and peers file, starts the monitor
// and the nodes, and waits for them. Cancelling ctx asks every process to
// stop after its current round (SIGINT) and kills those still running a
// minute later; the run directory then holds every finished round.
func Launch(ctx context.Context, lc LaunchConfig) error {
	if lc.Nodes < 1 || len(lc.Config) == 0 {
		return fmt.Errorf("launch: a config of %d bytes for %d nodes", len(lc.Config), lc.Nodes)
	}
	cdir := filepath.Join(lc.Out, ClusterDir)
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		return err
	}
	cfgPath := filepath.Join(cdir, "config.toml")
	if err := os.WriteFile(cfgPath, lc.Config, 0o644); err != nil {
		return err
	}
	sock, err := os.MkdirTemp("", "trellis-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(sock)
	peers := IPCEndpoints(sock, lc.Nodes)
	if lc.TCP {
		if peers, err = LoopbackEndpoints(lc.Nodes); err != nil {
			return err
		}
	}
	keyDir := filepath.Join(cdir, "keys")
	peersPath := filepath.Join(keyDir, PeersFile)
	if lc.SeedKeys {
		if err := os.MkdirAll(keyDir, 0o755); err != nil {
			return err
		}
		err = peers.Write(peersPath)
	} else {
		err = WriteKeys(keyDir, peers, rand.Reader)
	}
	if err != nil {
		return err
	}
	t, err := lc.Timing.withDefaultsForLaunch(lc.StartDelay)
	if err != nil {
		return err
	}
	if lc.Checkpoints && t.Mode != Wallclock {
		return errors.New("checkpoints are for wall-clock runs (a resumed node joins the open window): add --mode wallclock")
	}
	common := []string{"--config", cfgPath, "--peers", peersPath, "--mode", string(t.Mode)}
	if lc.Randomness != "" {
		common = append(common, "--randomness", lc.Randomness)
	}
	var nodeArgs []string
	var gap time.Duration
	switch t.Mode {
	case Lockstep:
		nodeArgs = []string{"--phase-timeout", t.PhaseTimeout.String()}
	case Wallclock:
		nodeArgs = []string{"--epoch", t.Epoch.Format(time.RFC3339Nano), "--delta", t.Delta.String(), "--grace", t.Grace.String()}
		gap = 2 * t.Delta
	}
	stderr := lc.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	var procs []*exec.Cmd
	start := func(name string, args []string, out io.Writer) error {
		cmd := exec.Command(lc.Exe, args...)
		cmd.Stdout, cmd.Stderr = out, out
		// Their own process group (the launch forwards Ctrl-C itself), and
		// killed if the launch dies.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting %s: %w", name, err)
		}
		procs = append(procs, cmd)
		return nil
	}
	stopAll := func(sig os.Signal) {
		for _, p := range procs {
			if p.ProcessState == nil {
				_ = p.Process.Signal(sig)
			}
		}
	}
	metrics := func(k int) []string {
		if lc.MetricsPort <= 0 {
			return nil
		}
		return []string{"--metrics", "127.0.0.1:" + strconv.Itoa(lc.MetricsPort+k)}
	}
	monArgs := append(append([]string{"monitor", "-o", lc.Out, "--gap", gap.String()}, common...), metrics(0)...)
	if lc.Quiet {
		monArgs = append(monArgs, "-q")
	}
	if lc.Dashboard != "" {
		monArgs = append(monArgs, "--dashboard", lc.Dashboard)
	}
	if err := start("the monitor", monArgs, stderr); err != nil {
		return err
	}
	logs := make([]*os.File, lc.Nodes)
	defer func() {
		for _, f := range logs {
			if f != nil {
				f.Close()
			}
		}
	}()
	for i := range lc.Nodes {
		f, err := os.Create(filepath.Join(cdir, fmt.Sprintf("node-%d.log", i)))
		if err != nil {
			stopAll(syscall.SIGKILL)
			return err
		}
		logs[i] = f
		args := append(append(append([]string{"node", "--id", strconv.Itoa(i)}, common...), nodeArgs...), metrics(1+i)...)
		if !lc.SeedKeys {
			args = append(args, "--key", filepath.Join(keyDir, wire.NodeKeyFile(i)))
		}
		args = append(args, "--export", filepath.Join(cdir, fmt.Sprintf("node-%d.safetensors", i)))
		// The launcher checked every node process and the monitor together
		// (or was told not to): a node started here does not check again,
		// when the others' memory is not yet taken.
		args = append(args, "--no-memory-check")
		if lc.Checkpoints && t.Mode == Wallclock { // a node restarted with --resume goes on from here
			args = append(args, "--checkpoint", filepath.Join(cdir, fmt.Sprintf("node-%d.state", i)))
		}
		if err := start(fmt.Sprintf("node %d", i), args, f); err != nil {
			stopAll(syscall.SIGKILL)
			return err
		}
	}
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for k, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = p.Wait()
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-ctx.Done():
		stopAll(syscall.SIGINT)
		select {
		case <-finished:
		case <-time.After(time.Minute):
			stopAll(syscall.SIGKILL)
			<-finished
		}
	}
	var bad []error
	for k, err := range errs {
		if err == nil {
			continue
		}
		who := "the monitor"
		if k > 0 {
			who = fmt.Sprintf("node %d (log: %s)", k-1, logs[k-1].Name())
		}
		bad = append(bad, fmt.Errorf("%s: %w", who, err))
	}
	if ctx.Err() != nil {
		// The processes' exit statuses say they were stopped: expected.
		return fmt.Errorf("interrupted; the finished rounds are in %s", lc.Out)
	}
	return errors.Join(bad...)
}

// withDefaultsForLaunch fills the launch's timing: the epoch StartDelay
// from now in wall-clock mode.
func (t Timing) withDefaultsForLaunch(delay time.Duration) (Timing, error) {
	if t.Mode == "" {
		t.Mode = Lockstep
	}
	if t.Mode == Wallclock && t.Epoch.IsZero() {
		if delay <= 0 {
			delay = 15 * time.Second
		}
		if t.Delta <= 0 {
			t.Delta = 10 * time.Second
		}
		t.Epoch = time.Now().Add(delay)
	}
	return t.withDefaults()
}
