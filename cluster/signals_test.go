package cluster_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/cluster"
	"github.com/trellis-fl/trellis/rundir"
)

// The tests here stop, kill and restart the processes of `trellis launch`
// and check what it leaves: its exit code, the run directory (every
// round of which a record arrived, missing records marked, the summary),
// the nodes' logs and its temporary directory. None waits a fixed time:
// each polls what it waits for, under a deadline that only guards against
// a hang.

// hangGuard bounds every wait of these tests.
const hangGuard = 2 * time.Minute

// launched is a `trellis launch` started by a test.
type launched struct {
	t       *testing.T
	cmd     *exec.Cmd
	out     []byte // its output, once it exited
	buf     *bytes.Buffer
	done    chan struct{}
	cfgPath string
	run     string // the run directory
	tmp     string // its TMPDIR: where it makes its sockets' directory
}

// startLaunch starts `trellis launch` on the config text (flags added),
// with a TMPDIR of its own.
func startLaunch(t *testing.T, text string, flags ...string) *launched {
	t.Helper()
	bin := trellisBinary(t)
	dir, cfgPath := writeConfig(t, text)
	l := &launched{t: t, cfgPath: cfgPath, run: filepath.Join(dir, "run"), tmp: filepath.Join(dir, "tmp"), buf: new(bytes.Buffer), done: make(chan struct{})}
	if err := os.Mkdir(l.tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	l.cmd = exec.Command(bin, append([]string{"launch", cfgPath, "-o", l.run, "-q"}, flags...)...)
	l.cmd.Env = append(os.Environ(), "TMPDIR="+l.tmp)
	l.cmd.Stdout, l.cmd.Stderr = l.buf, l.buf
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = l.cmd.Wait()
		close(l.done)
	}()
	t.Cleanup(func() {
		select {
		case <-l.done:
		default:
			_ = l.cmd.Process.Kill()
			<-l.done
		}
		if t.Failed() {
			t.Logf("trellis launch:\n%s", l.buf.String())
			for i := range 16 {
				if b, err := os.ReadFile(filepath.Join(l.run, cluster.ClusterDir, fmt.Sprintf("node-%d.log", i))); err == nil {
					t.Logf("node %d's log:\n%s", i, b)
				}
			}
		}
	})
	return l
}

// wait waits for the launch to exit and returns its exit code.
func (l *launched) wait() int {
	l.t.Helper()
	select {
	case <-l.done:
	case <-time.After(hangGuard):
		l.t.Fatalf("trellis launch still runs after %v", hangGuard)
	}
	l.out = l.buf.Bytes()
	return l.cmd.ProcessState.ExitCode()
}

// rounds is how many rounds the monitor wrote so far.
func (l *launched) rounds() int {
	b, _ := os.ReadFile(filepath.Join(l.run, rundir.RoundsFile))
	return bytes.Count(b, []byte("\n"))
}

// waitUntil polls cond until it holds (a hang guard fails the test).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(hangGuard); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", hangGuard, what)
		}
	}
}

// nodeProcess finds the process of node id started by the launch (its
// command line names the launch's config and the id) and returns its pid
// and its arguments.
func (l *launched) nodeProcess(id int) (int, []string) {
	l.t.Helper()
	cfg := filepath.Join(l.run, cluster.ClusterDir, "config.toml")
	var pid int
	var args []string
	waitUntil(l.t, fmt.Sprintf("no process of node %d", id), func() bool {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			p, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil {
				continue
			}
			a := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
			if len(a) > 3 && a[1] == "node" && a[2] == "--id" && a[3] == strconv.Itoa(id) && strings.Contains(string(b), cfg) {
				pid, args = p, a
				return true
			}
		}
		return false
	})
	return pid, args
}

// nodeLog is node i's log.
func (l *launched) nodeLog(i int) string {
	b, _ := os.ReadFile(filepath.Join(l.run, cluster.ClusterDir, fmt.Sprintf("node-%d.log", i)))
	return string(b)
}

// records reads metrics.jsonl.
func (l *launched) records() []killedRecord {
	l.t.Helper()
	b, err := os.ReadFile(filepath.Join(l.run, rundir.MetricsFile))
	if err != nil {
		l.t.Fatal(err)
	}
	var recs []killedRecord
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var x killedRecord
		if err := json.Unmarshal(line, &x); err != nil {
			l.t.Fatal(err)
		}
		recs = append(recs, x)
	}
	return recs
}

// summaryRounds is the rounds column of the run's summary.csv (-1: no
// summary).
func (l *launched) summaryRounds() int {
	l.t.Helper()
	b, err := os.ReadFile(filepath.Join(l.run, rundir.SummaryFile))
	if err != nil {
		return -1
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		l.t.Fatalf("summary.csv: %q", b)
	}
	head, row := strings.Split(lines[0], ","), strings.Split(lines[1], ",")
	for k, h := range head {
		if h == "rounds" && k < len(row) {
			n, err := strconv.Atoi(row[k])
			if err != nil {
				l.t.Fatal(err)
			}
			return n
		}
	}
	l.t.Fatalf("summary.csv has no rounds column: %q", b)
	return -1
}

// checkCleanedUp fails the test if the launch left a temporary directory
// (its sockets') behind.
func (l *launched) checkCleanedUp() {
	l.t.Helper()
	ents, err := os.ReadDir(l.tmp)
	if err != nil {
		l.t.Fatal(err)
	}
	for _, e := range ents {
		l.t.Errorf("the launch left %s in its temporary directory", e.Name())
	}
}

// TestLaunchStopsOnSignal: SIGINT or SIGTERM to `trellis launch` stops
// every node after its current round (each says in its log that it left
// the run, having sent its leave marker), the monitor writes every round
// of which a record arrived, with the records that never came marked
// missing, and the summary of those rounds; the sockets' temporary
// directory is removed and the exit code is 3 (stopped before the last
// round). A second SIGTERM stops them at once, with the same clean-up.
func TestLaunchStopsOnSignal(t *testing.T) {
	for _, tc := range []struct {
		name string
		sigs []syscall.Signal
	}{{"SIGINT", []syscall.Signal{syscall.SIGINT}}, {"SIGTERM", []syscall.Signal{syscall.SIGTERM}},
		{"SIGTERM twice", []syscall.Signal{syscall.SIGTERM, syscall.SIGTERM}}} {
		t.Run(tc.name, func(t *testing.T) {
			const nodes, rounds = 3, 100000
			l := startLaunch(t, logregFedAvg("stopped", nodes, rounds, 5, 600))
			waitUntil(t, "fewer than 2 rounds written", func() bool { return l.rounds() >= 2 })
			for _, s := range tc.sigs {
				_ = l.cmd.Process.Signal(s)
			}
			if rc := l.wait(); rc != cluster.ExitStopped || !bytes.Contains(l.out, []byte("stopped")) {
				t.Fatalf("launch after %v: exit code %d, output %q; want %d and a message saying it stopped", tc.sigs, rc, l.out, cluster.ExitStopped)
			}
			l.checkCleanedUp()
			recs := l.records()
			written := l.rounds()
			if len(recs) != nodes*written || written >= rounds {
				t.Errorf("%d node records for %d rounds, want %d per round and not every round", len(recs), written, nodes)
			}
			if got := l.summaryRounds(); got != written {
				t.Errorf("summary.csv: %d rounds, want the %d written", got, written)
			}
			for i := range nodes {
				if log := l.nodeLog(i); !strings.Contains(log, "left the run") {
					t.Errorf("node %d did not say it left the run:\n%s", i, log)
				}
			}
		})
	}
}

// TestLockstepDeadNodeIsMarkedMissing: in lock-step mode a node killed
// with SIGKILL misses its phase markers; its peers close their phases at
// the phase timeout and go on, and the monitor writes its records as
// missing (it does not wait for them): the run completes, exit code 0,
// every surviving node's record is there, and the dead node's records
// stop at its death (present, then missing, never present again).
//
// The kill is sent once the monitor has written two rounds, but the nodes
// run ahead of the monitor: on a fast machine the victim may have finished
// every round before the signal lands, and then nothing was tested. Such
// an attempt is redone with more local work per round (the run's length in
// rounds stays, since every round after a death costs a phase timeout).
func TestLockstepDeadNodeIsMarkedMissing(t *testing.T) {
	const nodes, rounds, victim = 5, 5, 2
	for _, epochs := range []int{1, 20, 200} {
		cfg := logregFedAvg("dead-lockstep", nodes, rounds, 3, 600) + fmt.Sprintf("[training]\nepochs = %d\n", epochs)
		if died := lockstepDeath(t, cfg, nodes, rounds, victim); died || t.Failed() {
			return
		}
		t.Logf("with %d local epochs node %d finished every round before the kill landed; again with more local work", epochs, victim)
	}
	t.Fatalf("node %d finished every round before the kill landed at every amount of local work", victim)
}

// lockstepDeath runs one attempt of TestLockstepDeadNodeIsMarkedMissing
// and says whether the victim died before its last round.
func lockstepDeath(t *testing.T, cfg string, nodes, rounds, victim int) bool {
	t.Helper()
	l := startLaunch(t, cfg, "--phase-timeout", "2s")
	pid, _ := l.nodeProcess(victim)
	waitUntil(t, "fewer than 2 rounds written", func() bool { return l.rounds() >= 2 })
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if rc := l.wait(); rc != 0 || !bytes.Contains(l.out, []byte(fmt.Sprintf("node %d was killed", victim))) {
		t.Fatalf("launch: exit code %d, output %q; want 0 (every round written) and a word about node %d", rc, l.out, victim)
	}
	l.checkCleanedUp()
	recs := l.records()
	if len(recs) != nodes*rounds {
		t.Fatalf("%d node records, want %d", len(recs), nodes*rounds)
	}
	diedAfter := -1 // the last round of which the victim's record came
	for _, r := range recs {
		switch {
		case r.Node != victim && r.Missing && r.Round >= 2:
			t.Errorf("node %d lost its record of round %d", r.Node, r.Round)
		case r.Node == victim && !r.Missing:
			if r.Round != diedAfter+1 {
				t.Errorf("the dead node %d has a record of round %d after missing round %d", victim, r.Round, diedAfter+1)
			}
			diedAfter = r.Round
		}
	}
	if got := l.summaryRounds(); got != rounds {
		t.Errorf("summary.csv: %d rounds, want %d", got, rounds)
	}
	return diedAfter < rounds-1
}

// TestLaunchStopsWhenANodeFails: a node that cannot start (its metrics
// port is taken) makes the launch stop every other process and exit
// non-zero naming that node and its error.
func TestLaunchStopsWhenANodeFails(t *testing.T) {
	const nodes, victim = 4, 2
	var ln net.Listener
	var base int
	for range 20 { // a free port for the monitor and the nodes, node 2's taken
		probe, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base = probe.Addr().(*net.TCPAddr).Port
		probe.Close()
		if ln, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+1+victim)); err == nil {
			break
		}
	}
	if ln == nil {
		t.Skip("no free port to take")
	}
	defer ln.Close()
	l := startLaunch(t, logregFedAvg("node-fails", nodes, 1000, 3, 600), "--phase-timeout", "2s", "--metrics-port", strconv.Itoa(base))
	rc := l.wait()
	if rc != 1 || !bytes.Contains(l.out, []byte(fmt.Sprintf("node %d failed", victim))) || !bytes.Contains(l.out, []byte("address already in use")) {
		t.Fatalf("launch: exit code %d, output %q; want 1 and node %d's error", rc, l.out, victim)
	}
	l.checkCleanedUp()
}

// TestLaunchCheckpointsDPAndSecAgg: `launch --checkpoints` runs a
// node-level DP, secure-aggregation config to the end (their state is in
// the checkpoint), every node checkpointing every round.
func TestLaunchCheckpointsDPAndSecAgg(t *testing.T) {
	const nodes, rounds = 4, 3
	text := logregFedAvg("checkpoints-dp-secagg", nodes, rounds, 7, 800) + "[topology]\nkind = \"kregular\"\nk = 3\n[secagg]\nmode = \"neighbourhood\"\nthreshold = 2\n" +
		"[privacy]\nmode = \"node\"\nclip = 1.0\nnoise_multiplier = 1.0\ndelta = 1e-3\n"
	l := startLaunch(t, text, "--mode", "wallclock", "--checkpoints", "--delta", "2s", "--start-delay", "6s")
	if rc := l.wait(); rc != 0 {
		t.Fatalf("launch: exit code %d, output %q", rc, l.out)
	}
	recs := l.records()
	if len(recs) != nodes*rounds {
		t.Fatalf("%d node records, want %d", len(recs), nodes*rounds)
	}
	for _, r := range recs {
		if !r.Missing && (r.SecAgg == nil || r.Epsilon == nil) {
			t.Errorf("node %d round %d: no secure aggregation or no ε in its record", r.Node, r.Round)
		}
	}
	for i := range nodes {
		r, err := cluster.LoadCheckpoint(filepath.Join(l.run, cluster.ClusterDir, fmt.Sprintf("node-%d.state", i)), roundOnly{})
		if err != nil || r != rounds-1 {
			t.Errorf("node %d's checkpoint: round %d, %v; want round %d", i, r, err, rounds-1)
		}
	}
}

// restartUnderLaunch runs a wall-clock launch with checkpoints, stops
// node victim with sig once its checkpoint after round 0 is on disk,
// restarts it by hand with its command line plus --resume two rounds
// later, and returns the launch, its exit code, the restarted process's
// exit error and the round of the checkpoint it resumed from.
func restartUnderLaunch(t *testing.T, sig syscall.Signal) (l *launched, rc int, restarted error, stoppedAt int) {
	const nodes, rounds, victim = 4, 9, 3
	l = startLaunch(t, logregFedAvg("restarted", nodes, rounds, 3, 800), "--mode", "wallclock", "--checkpoints", "--delta", "2s", "--start-delay", "6s")
	pid, args := l.nodeProcess(victim)
	checkpoint := l.checkpointOf(victim)
	waitUntil(t, "no checkpoint", func() bool { return checkpoint() >= 0 })
	_ = syscall.Kill(pid, sig)
	waitUntil(t, "the node still runs", func() bool { return !alive(pid) })
	stoppedAt = checkpoint()
	waitUntil(t, "rounds not written", func() bool { return l.rounds() >= stoppedAt+3 })
	if stoppedAt > rounds-4 {
		t.Fatalf("node %d stopped after round %d of %d: too late to resume", victim, stoppedAt, rounds)
	}
	node := startProcess(t, args[0], append(args[1:], "--resume")...)
	rc = l.wait()
	restarted = node.Wait()
	recs := l.records()
	if len(recs) != nodes*rounds {
		t.Fatalf("%d node records, want %d", len(recs), nodes*rounds)
	}
	for _, r := range recs {
		if r.Missing && r.Node != victim && r.Round > stoppedAt {
			t.Errorf("node %d lost its record of round %d", r.Node, r.Round)
		}
	}
	if last := recs[len(recs)-nodes+victim]; last.Missing {
		t.Errorf("the restarted node %d has no record of the last round", victim)
	}
	return l, rc, restarted, stoppedAt
}

// checkpointOf reads node i's checkpoint under the launch's cluster
// directory: the round (or step) it was taken after, -1 while there is
// none.
func (l *launched) checkpointOf(i int) func() int {
	state := filepath.Join(l.run, cluster.ClusterDir, fmt.Sprintf("node-%d.state", i))
	return func() int {
		r, err := cluster.LoadCheckpoint(state, roundOnly{})
		if err != nil {
			return -1
		}
		return r
	}
}

// isZombie reports whether process pid has exited and awaits its parent's
// wait.
func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, after, ok := strings.Cut(string(b), ") ")
	return ok && strings.HasPrefix(after, "Z")
}

// TestLaunchWithRestartedNodeExitsZero: a node of a launch killed with
// SIGKILL and restarted by hand with --resume rejoins, and the launch of
// the completed run exits 0.
func TestLaunchWithRestartedNodeExitsZero(t *testing.T) {
	l, rc, restarted, _ := restartUnderLaunch(t, syscall.SIGKILL)
	if rc != 0 || restarted != nil {
		t.Errorf("launch exit code %d (output %q), the restarted node: %v; want 0 and nil", rc, l.out, restarted)
	}
}

// TestResumeAfterLeaveIsAwaited: a node stopped with SIGTERM (it sends
// its leave marker and exits with 3) and restarted with --resume is
// waited for again: after its first round back, no peer closes a phase
// without its marker, and the launch exits 0.
func TestResumeAfterLeaveIsAwaited(t *testing.T) {
	const victim = 3
	l, rc, restarted, stoppedAt := restartUnderLaunch(t, syscall.SIGTERM)
	if rc != 0 || restarted != nil {
		t.Errorf("launch exit code %d (output %q), the restarted node: %v; want 0 and nil", rc, l.out, restarted)
	}
	if log := l.nodeLog(victim); !strings.Contains(log, "left the run") {
		t.Errorf("node %d did not leave the run after SIGTERM:\n%s", victim, log)
	}
	d, err := os.ReadFile(filepath.Join(l.run, cluster.DriverFile))
	if err != nil {
		t.Fatal(err)
	}
	back := -1
	type line struct {
		Round, Node  int
		Missing      []int `json:"missing_markers"`
		ResumedAfter *int  `json:"resumed_after"`
	}
	var lines []line
	for _, b := range bytes.Split(bytes.TrimSpace(d), []byte("\n")) {
		var x line
		if err := json.Unmarshal(b, &x); err != nil {
			t.Fatal(err)
		}
		if x.Node == victim && x.ResumedAfter != nil {
			back = x.Round
			if *x.ResumedAfter != stoppedAt {
				t.Errorf("node %d resumed after round %d, want %d", victim, *x.ResumedAfter, stoppedAt)
			}
		}
		lines = append(lines, x)
	}
	if back < 0 {
		t.Fatalf("node %d has no record of its return", victim)
	}
	for _, x := range lines {
		if x.Node != victim && x.Round > back && slices.Contains(x.Missing, victim) {
			t.Errorf("node %d closed round %d without node %d's marker: it was not waited for", x.Node, x.Round, victim)
		}
	}
}
