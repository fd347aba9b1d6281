package cluster

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
	// Encryption is every process's --encryption (default auto: CURVE
	// over TCP, none over Unix sockets).
	Encryption Encryption
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
	// with `trellis node … --resume` (its command line is the first line
	// of its log, node-I.log: run it again plus --resume).
	Checkpoints bool
	// MetricsPort, when positive, serves Prometheus metrics on the
	// loopback interface: the monitor's at 127.0.0.1:MetricsPort, node
	// i's at MetricsPort+1+i.
	MetricsPort int
	// Dashboard, when set, is the HOST:PORT the monitor serves its live
	// dashboard on (trellis monitor --dashboard).
	Dashboard string
	// Abort, when closed (a second signal), stops every process at once:
	// each still sends its leave marker, the monitor writes what it has,
	// and the launch removes its sockets.
	Abort <-chan struct{}
	// NodeArgs are more arguments of every node process (the CLI's
	// --data-file: the dataset file the nodes map).
	NodeArgs []string
}

// ClusterDir is the subdirectory of a launched run's directory with what
// the launch wrote besides the run's files.
const ClusterDir = "cluster"

// Launch writes the run's config, keys and peers file, starts the monitor
// and the nodes, and waits for them (superviseLaunch). Cancelling ctx
// asks every process to stop after its current round (SIGTERM; then the
// monitor writes every round of which a record arrived, the missing ones
// marked, and the summary); lc.Abort, or a minute without the processes
// stopping, stops them at once (a second SIGTERM), and those still running
// 15 s later are killed. The Unix sockets' temporary directory is removed
// in every case. It returns nil when every round was written, an error
// wrapping ErrStopped when the run was stopped before, and a process's
// failure (a node that could not start or exited with an error) after
// stopping every other process.
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
	if lc.Checkpoints && t.Mode != Wallclock && t.Mode != Async {
		return errors.New("checkpoints are for wall-clock and asynchronous runs (a resumed node joins the open window, or goes on with its next step; in lock-step the others would wait for it): add --mode wallclock")
	}
	common := []string{"--config", cfgPath, "--peers", peersPath, "--mode", string(t.Mode)}
	if lc.Randomness != "" {
		common = append(common, "--randomness", lc.Randomness)
	}
	if lc.Encryption != "" {
		common = append(common, "--encryption", string(lc.Encryption))
	}
	var nodeArgs []string
	var gap time.Duration
	switch t.Mode {
	case Lockstep:
		nodeArgs = []string{"--phase-timeout", t.PhaseTimeout.String()}
	case Wallclock:
		nodeArgs = []string{"--epoch", t.Epoch.Format(time.RFC3339Nano), "--delta", t.Delta.String(), "--grace", t.Grace.String()}
		gap = 2 * t.Delta
	case Async:
		nodeArgs = []string{"--epoch", t.Epoch.Format(time.RFC3339Nano)}
	}
	stderr := lc.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	var procs []*exec.Cmd
	start := func(name string, args []string, out io.Writer) error {
		cmd := exec.Command(lc.Exe, args...)
		cmd.Stdout, cmd.Stderr = out, out
		cmd.SysProcAttr = childAttr()
		resetPeakRSS()
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting %s: %w", name, err)
		}
		procs = append(procs, cmd)
		return nil
	}
	killAll := func() { // a launch that could not start them all
		for _, p := range procs {
			_ = p.Process.Kill()
			_ = p.Wait()
		}
	}
	metrics := func(k int) []string {
		if lc.MetricsPort <= 0 {
			return nil
		}
		return []string{"--metrics", "127.0.0.1:" + strconv.Itoa(lc.MetricsPort+k)}
	}
	monArgs := append(append([]string{"monitor", "-o", lc.Out, "--gap", gap.String(), "--phase-timeout", t.PhaseTimeout.String()}, common...), metrics(0)...)
	if lc.Quiet {
		monArgs = append(monArgs, "-q")
	}
	if lc.Dashboard != "" {
		monArgs = append(monArgs, "--dashboard", lc.Dashboard)
	}
	if !lc.SeedKeys {
		monArgs = append(monArgs, "--key", filepath.Join(keyDir, MonitorKeyFile))
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
			killAll()
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
		args = append(append(args, "--no-memory-check"), lc.NodeArgs...)
		if t.Mode == Async { // the order of its steps and takes, for sim.Replay
			args = append(args, "--arrivals", filepath.Join(cdir, fmt.Sprintf("node-%d.arrivals.jsonl", i)))
		}
		if lc.Checkpoints { // a node restarted with --resume goes on from here
			args = append(args, "--checkpoint", filepath.Join(cdir, fmt.Sprintf("node-%d.state", i)))
		}
		if _, err := fmt.Fprintf(f, "command: %s\n", commandLine(lc.Exe, args)); err != nil {
			killAll()
			return err
		}
		if err := start(fmt.Sprintf("node %d", i), args, f); err != nil {
			killAll()
			return err
		}
	}
	return superviseLaunch(ctx, lc, procs, logs, stderr)
}

// How long a stopping launch waits before it stops its processes at once
// (a second SIGTERM: they still clean up), and then before it kills them.
const (
	launchStopWait  = time.Minute
	launchAbortWait = 15 * time.Second
	// launchLastRecords is how long the monitor gets, after the last node
	// process exited, before it is told to stop, and then to write what
	// it has.
	launchLastRecords = 2 * time.Second
)

// superviseLaunch waits for the launch's processes (procs[0] the monitor,
// procs[1+i] node i, logging into logs[i]). A signal (ctx) or a second
// one (lc.Abort) is passed on to every process; a node or the monitor
// that fails (an exit code other than 0 and ExitStopped) stops all the
// others and is the launch's error, its log's error line quoted; a node
// killed by a signal the launch did not send is reported and waited
// without (a node restarted by hand with --resume rejoins; in lock-step
// its peers mark it missing). It returns nil when the monitor wrote every
// round, an error wrapping ErrStopped when it was stopped before. Once
// every node process exited, a monitor still waiting (for the records of
// a node that died) is stopped, and told to write what it has.
func superviseLaunch(ctx context.Context, lc LaunchConfig, procs []*exec.Cmd, logs []*os.File, stderr io.Writer) error {
	type exit struct {
		k   int
		err error
	}
	exits := make(chan exit, len(procs))
	for k, p := range procs {
		go func() { exits <- exit{k, p.Wait()} }()
	}
	exited := make([]bool, len(procs))
	signalAll := func(sig os.Signal) {
		for k, p := range procs {
			if !exited[k] {
				_ = p.Process.Signal(sig)
			}
		}
	}
	name := func(k int) string {
		if k == 0 {
			return "the monitor"
		}
		return fmt.Sprintf("node %d", k-1)
	}
	var failed []error
	monitorOK, stopping := false, false
	ctxDone, abort := ctx.Done(), lc.Abort
	var escalate, kill <-chan time.Time
	stop := func() { // each process stops after its current round
		if !stopping {
			stopping = true
			signalAll(syscall.SIGTERM)
			escalate = time.After(launchStopWait)
		}
	}
	stopNow := func() { // a second SIGTERM: at once, still cleaning up
		if kill == nil {
			stopping = true
			signalAll(syscall.SIGTERM)
			escalate, kill = nil, time.After(launchAbortWait)
		}
	}
	// Once every node process exited, the monitor has every record it
	// will get from them (a node that failed or was killed may owe some,
	// and nobody may have missed its markers): after a moment for the
	// last ones to arrive it is told to stop, and after another to write
	// what it has at once. A node restarted by hand ends its last round
	// with the others (the same windows), within that moment.
	var nodesGone <-chan time.Time
	monitorTold := 0
	for running := len(procs); running > 0; {
		select {
		case <-nodesGone:
			nodesGone = nil
			if !exited[0] && monitorTold < 2 {
				_ = procs[0].Process.Signal(syscall.SIGTERM)
				monitorTold++
				nodesGone = time.After(launchLastRecords)
			}
		case e := <-exits:
			running--
			exited[e.k] = true
			if running == 1 && !exited[0] && nodesGone == nil {
				if stopping {
					monitorTold = max(monitorTold, 1)
				}
				nodesGone = time.After(launchLastRecords)
			}
			var ee *exec.ExitError
			switch {
			case e.err == nil:
				monitorOK = monitorOK || e.k == 0
			case errors.As(e.err, &ee) && ee.ExitCode() == ExitStopped:
				// Stopped by a signal, its finished rounds written.
			case stopping && errors.As(e.err, &ee) && ee.ExitCode() < 0:
				// Killed by the launch's own signal (before it could
				// handle it, or after the last wait).
			case errors.As(e.err, &ee) && ee.ExitCode() < 0 && e.k > 0:
				restart := ""
				if lc.Checkpoints {
					restart = "; restart it with the command on the first line of its log plus --resume"
				}
				fmt.Fprintf(stderr, "trellis launch: %s was killed (%v): the others go on without it%s\n", name(e.k), e.err, restart)
			default:
				msg := e.err.Error()
				if e.k > 0 {
					if line := lastErrorLine(logs[e.k-1].Name()); line != "" {
						msg += ": " + line
					}
					msg += " (log: " + logs[e.k-1].Name() + ")"
				}
				failed = append(failed, fmt.Errorf("%s failed: %s", name(e.k), msg))
				if running > 0 {
					fmt.Fprintf(stderr, "trellis launch: %s failed: stopping every other process\n", name(e.k))
				}
				stop()
			}
		case <-ctxDone:
			ctxDone = nil
			stop()
		case <-abort:
			abort = nil
			stopNow()
		case <-escalate:
			stopNow()
		case <-kill:
			kill = nil
			signalAll(syscall.SIGKILL)
		}
	}
	reportPeakRSS(lc, procs, stderr)
	switch {
	case len(failed) > 0:
		return errors.Join(failed...)
	case monitorOK:
		return nil // every round written, even if a signal came at the end
	}
	return fmt.Errorf("%w: the finished rounds are in %s", ErrStopped, lc.Out)
}

// PeakRSSFile, in a launched run's ClusterDir, holds every process's
// peak resident set in bytes, as the kernel counted it (getrusage when
// the process was waited for): {"monitor": B, "nodes": [B0, B1, …]}, 0
// where the platform does not say.
const PeakRSSFile = "peak_rss.json"

// reportPeakRSS writes the launch's processes' peak resident sets
// (PeakRSSFile) and, unless quiet, says them in a line: what an operator
// sizing a machine needs, with no sampling that could miss a peak.
func reportPeakRSS(lc LaunchConfig, procs []*exec.Cmd, stderr io.Writer) {
	rss := make([]int64, len(procs))
	for k, p := range procs {
		if p.ProcessState != nil {
			rss[k] = peakRSS(p.ProcessState)
		}
	}
	b, err := json.Marshal(struct {
		Monitor int64   `json:"monitor"`
		Nodes   []int64 `json:"nodes"`
	}{rss[0], rss[1:]})
	if err == nil {
		err = os.WriteFile(filepath.Join(lc.Out, ClusterDir, PeakRSSFile), append(b, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "trellis launch: writing the processes' peak memory: %v\n", err)
	}
	if line := peakRSSLine(rss[1:], rss[0]); line != "" && !lc.Quiet {
		fmt.Fprintf(stderr, "trellis launch: %s\n", line)
	}
}

// peakRSSLine says the node processes' peak resident sets (min, median,
// max, sum) and the monitor's, or "" when the platform did not say them.
func peakRSSLine(nodes []int64, monitor int64) string {
	s := slices.Clone(nodes)
	slices.Sort(s)
	if len(s) == 0 || s[len(s)-1] == 0 {
		return ""
	}
	var sum int64
	for _, b := range s {
		sum += b
	}
	const mib = 1 << 20
	med := float64(s[len(s)/2])
	if len(s)%2 == 0 {
		med = (float64(s[len(s)/2-1]) + float64(s[len(s)/2])) / 2
	}
	return fmt.Sprintf("peak RSS of the %d node processes: min %.1f, median %.1f, max %.1f MiB, sum %.2f GiB; the monitor %.1f MiB (%s in %s)",
		len(s), float64(s[0])/mib, med/mib, float64(s[len(s)-1])/mib, float64(sum)/(1<<30), float64(monitor)/mib, PeakRSSFile, ClusterDir)
}

// commandLine is exe and args as a shell reads them (an argument with
// anything but letters, digits and -_./:=+, quoted).
func commandLine(exe string, args []string) string {
	words := make([]string, 0, 1+len(args))
	for _, a := range append([]string{exe}, args...) {
		if a == "" || strings.ContainsFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=+", r))
		}) {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

// lastErrorLine is the last line of a process's log that the trellis
// command printed for its error ("trellis: …"), or "".
func lastErrorLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if line, ok := strings.CutPrefix(lines[i], "trellis: "); ok {
			return line
		}
	}
	return ""
}

// withDefaultsForLaunch fills the launch's timing: the epoch StartDelay
// from now in wall-clock mode.
func (t Timing) withDefaultsForLaunch(delay time.Duration) (Timing, error) {
	if t.Mode == "" {
		t.Mode = Lockstep
	}
	if (t.Mode == Wallclock || t.Mode == Async) && t.Epoch.IsZero() {
		if delay <= 0 {
			delay = 15 * time.Second
		}
		if t.Delta <= 0 && t.Mode == Wallclock {
			t.Delta = 10 * time.Second
		}
		t.Epoch = time.Now().Add(delay)
	}
	return t.withDefaults()
}
