package cluster_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/cluster"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/rundir"
)

// The tests here start real processes: the trellis binary, built once per
// test run. They are skipped under -short and where no Go toolchain is
// found (the binary is built from this checkout).

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// TestMain removes the binary built for the process tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// trellisBinary builds cmd/trellis into a temporary directory once.
func trellisBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts processes (the trellis binary, one per node): skipped under -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build the trellis binary with")
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "trellis-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "trellis")
		out, err := exec.Command(goTool, "build", "-o", binPath, "github.com/trellis-fl/trellis/cmd/trellis").CombinedOutput()
		if err != nil {
			binErr = &buildError{out: string(out), err: err}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return "building trellis: " + e.err.Error() + "\n" + e.out }

// writeConfig writes a config into a fresh directory.
func writeConfig(t *testing.T, text string) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "cfg.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

// logregFedAvg is a small FedAvg config on the complete graph.
func logregFedAvg(name string, nodes, rounds, seed, samples int) string {
	return fmt.Sprintf("name = %q\nnodes = %d\nrounds = %d\nseed = %d\n[data]\nsamples = %d\n[model]\nkind = \"logreg\"\n"+
		"[strategy]\nname = \"fedavg\"\n[evaluation]\nglobal_test = 0\n", name, nodes, rounds, seed, samples)
}

// small configs: FedAvg on a 2-regular graph, and DMTT on the mobility
// graph under the Gaussian attack (one draw per node and round for all its
// recipients, idle Byzantine nodes) and the omission liar, as
// configs/dmtt does, at a size that runs in seconds.
const fedavgConfig = `
name = "cluster-fedavg"
nodes = 4
rounds = 3
seed = 7
[data]
samples = 2000
[model]
kind = "logreg"
[topology]
kind = "kregular"
k = 2
[strategy]
name = "fedavg"
[evaluation]
global_test = 200
`

const dmttConfig = `
name = "cluster-dmtt"
nodes = 6
rounds = 3
seed = 42
[data]
samples = 3000
[model]
kind = "mlp"
hidden = [32]
head = "evidential"
[partition]
method = "dirichlet"
alpha = 0.5
split = [0.7, 0.1, 0.2]
[topology]
kind = "mobility"
[evaluation]
global_test = 0
[adversary]
fraction = 0.34
attack = "gaussian"
sigma = 10.0
same_for_all = true
idle = true
liar = "omission"
[strategy]
name = "dmtt"
`

// secureConfig is a 5-node neighbourhood (every node's 4 in-neighbours)
// running one of the secure aggregation modes: the group sums
// are exact in fixed point, so masks and ciphertexts drawn from each
// process's private randomness change no record.
func secureConfig(mode string) string {
	return fmt.Sprintf(`
name = "cluster-%[1]s"
nodes = 5
rounds = 2
seed = 7
[data]
samples = 2000
[model]
kind = "logreg"
[topology]
kind = "kregular"
k = 4
[strategy]
name = "fedavg"
[evaluation]
global_test = 200
[secagg]
mode = %[1]q
`, mode)
}

// simulate writes the config text into a fresh directory and runs it in
// the simulator into its subdirectory "sim".
func simulate(t *testing.T, text string) (c config.Config, cfgPath, simDir string) {
	t.Helper()
	dir, cfgPath := writeConfig(t, text)
	c, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	simDir = filepath.Join(dir, "sim")
	if _, err := experiment.RunToDir(context.Background(), c, simDir, nil); err != nil {
		t.Fatal(err)
	}
	return c, cfgPath, simDir
}

// simulateAndLaunch runs the config text in the simulator and with
// `trellis launch` (extra flags appended), each into its own directory.
func simulateAndLaunch(t *testing.T, bin, text string, flags ...string) (c config.Config, simDir, cluDir string) {
	t.Helper()
	c, cfgPath, simDir := simulate(t, text)
	cluDir = filepath.Join(filepath.Dir(cfgPath), "cluster")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard, not a measurement
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"launch", cfgPath, "-o", cluDir, "-q"}, flags...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("trellis launch: %v\n%s", err, out)
	}
	return c, simDir, cluDir
}

// TestLockstepMatchesSimulator checks, on small configs, that
// `trellis launch` (a monitor and one process per node over IPC, and over
// TCP on the loopback — encrypted with CURVE, the default over TCP —,
// fresh key files, private randomness) writes
// metrics.jsonl, rounds.jsonl and edges.jsonl bit-identical to the
// simulator's run of the same config.
func TestLockstepMatchesSimulator(t *testing.T) {
	bin := trellisBinary(t)
	for _, tc := range []struct {
		name, text string
		flags      []string
	}{{"fedavg", fedavgConfig, nil}, {"dmtt", dmttConfig, nil}, {"fedavg-tcp", fedavgConfig, []string{"--tcp"}},
		{"secagg", secureConfig("neighbourhood") + "threshold = 3\n", nil},
		{"paillier", secureConfig("paillier") + "paillier_bits = 512\n", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			c, simDir, cluDir := simulateAndLaunch(t, bin, tc.text, tc.flags...)
			for _, f := range []string{rundir.MetricsFile, rundir.RoundsFile, rundir.EdgesFile} {
				want, got := readBoth(t, simDir, cluDir, f)
				sameBytes(t, f, want, got)
			}
			if _, err := os.Stat(filepath.Join(cluDir, rundir.SummaryFile)); err != nil {
				t.Errorf("no summary: %v", err)
			}
			checkPeakRSS(t, cluDir, c.Nodes)
			// Every node exported its final model (the format is tested in nn):
			// one F32 value per parameter and state value after the header.
			for i := range c.Nodes {
				b, err := os.ReadFile(filepath.Join(cluDir, "cluster", fmt.Sprintf("node-%d.safetensors", i)))
				if err != nil {
					t.Fatalf("node %d exported no model: %v", i, err)
				}
				if len(b) < 8 || 8+binary.LittleEndian.Uint64(b)+uint64(4*modelValues(t, c)) != uint64(len(b)) {
					t.Errorf("node %d's model file has %d bytes, not a header and %d float32", i, len(b), modelValues(t, c))
				}
			}
		})
	}
}

// checkPeakRSS: the launch wrote every process's peak resident set as
// the kernel counted it (Linux: getrusage), each at least a Go program's
// few MiB and less than the machine.
func checkPeakRSS(t *testing.T, cluDir string, nodes int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cluDir, cluster.ClusterDir, cluster.PeakRSSFile))
	if err != nil {
		t.Fatalf("the launch wrote no peak RSS: %v", err)
	}
	var rss struct {
		Monitor int64
		Nodes   []int64
	}
	if err := json.Unmarshal(b, &rss); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if len(rss.Nodes) != nodes {
		t.Fatalf("peak RSS of %d nodes, want %d: %s", len(rss.Nodes), nodes, b)
	}
	if runtime.GOOS != "linux" {
		return
	}
	for k, v := range append(rss.Nodes, rss.Monitor) {
		if v < 4<<20 || v > 64<<30 {
			t.Errorf("process %d: peak RSS %d bytes (all: %s)", k, v, b)
		}
	}
}

// readBoth reads run-directory file f of the simulator's run (simDir) and
// of the cluster's (cluDir).
func readBoth(t *testing.T, simDir, cluDir, f string) (want, got []byte) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(simDir, f))
	if err != nil {
		t.Fatal(err)
	}
	got, err = os.ReadFile(filepath.Join(cluDir, f))
	if err != nil {
		t.Fatal(err)
	}
	return want, got
}

// sameBytes fails the test unless file f of the cluster's run (got) is
// the simulator's (want), byte for byte, and not empty.
func sameBytes(t *testing.T, f string, want, got []byte) {
	t.Helper()
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("%s differs from the simulator's (%d bytes, simulator %d)\ncluster:   %.300s\nsimulator: %.300s", f, len(got), len(want), got, want)
	}
}

// TestLaunchCKKSMatchesSimulator: threshold CKKS in node processes gives
// the simulator's records up to CKKS's own error. Lattigo draws its
// encryption noise from crypto/rand, so the two runs cannot be
// bit-identical: integers (bytes, steps, counts) must be equal, and every
// other number within 10^-3 relative (CKKS's error is about 10^-6; an
// accuracy within 0.02, one test sample of 200 near a decision boundary).
func TestLaunchCKKSMatchesSimulator(t *testing.T) {
	_, simDir, cluDir := simulateAndLaunch(t, trellisBinary(t), secureConfig("ckks"))
	for _, f := range []string{rundir.MetricsFile, rundir.RoundsFile} {
		want, got := readBoth(t, simDir, cluDir, f)
		wl, gl := bytes.Split(bytes.TrimSpace(want), []byte("\n")), bytes.Split(bytes.TrimSpace(got), []byte("\n"))
		if len(wl) == 0 || len(wl) != len(gl) {
			t.Fatalf("%s: %d records, simulator %d", f, len(gl), len(wl))
		}
		for i := range wl {
			var w, g map[string]any
			if err := json.Unmarshal(wl[i], &w); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(gl[i], &g); err != nil {
				t.Fatal(err)
			}
			if msg := closeRecords("", w, g); msg != "" {
				t.Errorf("%s record %d: %s", f, i, msg)
			}
		}
	}
}

// closeRecords compares two decoded JSON values as TestLaunchCKKSMatchesSimulator
// says, returning the first difference ("" if none).
func closeRecords(path string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: %v, simulator %v", path, got, want)
		}
		for k, v := range w {
			if msg := closeRecords(path+"."+k, v, g[k]); msg != "" {
				return msg
			}
		}
	case float64:
		g, ok := got.(float64)
		tol := 1e-3 * max(1, math.Abs(w))
		if strings.HasSuffix(path, "_acc") {
			tol = 0.02
		}
		if w == math.Trunc(w) && ok && g == math.Trunc(g) && !strings.Contains(path, "acc") && !strings.Contains(path, "loss") {
			tol = 0 // an integer: bytes, steps, counts
		}
		if !ok || math.Abs(g-w) > tol {
			return fmt.Sprintf("%s: %v, simulator %v (tolerance %g)", path, got, want, tol)
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return fmt.Sprintf("%s: %v, simulator %v", path, got, want)
		}
	}
	return ""
}

// TestLaunchRefusesOmniscientAttack: an attack that needs every honest
// payload of the round cannot run in node processes; launch says so
// before starting any.
func TestLaunchRefusesOmniscientAttack(t *testing.T) {
	bin := trellisBinary(t)
	dir, cfgPath := writeConfig(t, fedavgConfig+"[adversary]\nfraction = 0.25\nattack = \"alie\"\n")
	out, err := exec.Command(bin, "launch", cfgPath, "-o", filepath.Join(dir, "out"), "-q").CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("omniscient")) || !bytes.Contains(out, []byte("alie")) {
		t.Fatalf("launch with alie: err %v, output %q; want a refusal naming the attack and the omniscient view", err, out)
	}
}

// TestWallclockSurvivesKilledNode: in wall-clock mode (Δ = 2 s), node 3
// is killed with SIGKILL once its checkpoint after round 0 (or later) is
// on disk, and restarted with --resume once two rounds were written; node
// 2 gets SIGTERM then. Node 2 stops cleanly after its current round (exit
// code 3: stopped before the last round), nodes 0 and 1 finish every round, the restarted node 3 restores its
// checkpoint (its first record says which), joins the open round (its
// peers reconnect to it) and finishes the run, checkpointing every round,
// and the monitor writes every round, marking the records that never came.
func TestWallclockSurvivesKilledNode(t *testing.T) {
	const rounds = 8
	wc := startWallclock(t, logregFedAvg("wallclock", 4, rounds, 3, 800), 4, 8*time.Second, 2*time.Second)
	out := wc.out
	wc.waitRounds(1)
	for deadline := time.Now().Add(time.Minute); wc.checkpointRound(3) < 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("node 3 wrote no checkpoint")
		}
	}
	killedAt := wc.kill(3)
	wc.waitRounds(killedAt + 3)
	wc.resume(3)
	_ = wc.nodes[2].Process.Signal(syscall.SIGTERM)
	wc.wait()
	b, err := os.ReadFile(filepath.Join(out, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	type line struct {
		Round, Node int
		Missing     bool
	}
	missing := map[int]int{}
	lines := 0
	lastMissing3 := true
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var x line
		if err := json.Unmarshal(l, &x); err != nil {
			t.Fatal(err)
		}
		lines++
		if x.Missing {
			missing[x.Node]++
		}
		if x.Node == 3 && x.Round == rounds-1 {
			lastMissing3 = x.Missing
		}
	}
	if lines != rounds*4 {
		t.Errorf("%d records, want %d (%d rounds × 4 nodes)", lines, rounds*4, rounds)
	}
	if missing[0] > 0 || missing[1] > 0 {
		t.Errorf("records of the surviving nodes missing: %v", missing)
	}
	if missing[3] == 0 || missing[2] == 0 {
		t.Errorf("the stopped nodes' rounds are not marked missing: %v", missing)
	}
	if lastMissing3 {
		t.Errorf("the restarted node 3 has no record of the last round: it did not rejoin")
	}
	d, err := os.ReadFile(filepath.Join(out, cluster.DriverFile))
	if err != nil || !bytes.Contains(d, []byte(`"missing_markers":[`)) {
		t.Errorf("%s does not list the missing markers (err %v)", cluster.DriverFile, err)
	}
	if !bytes.Contains(d, []byte(`"node":3,`)) || !bytes.Contains(d, []byte(fmt.Sprintf(`"resumed_after":%d}`, killedAt))) {
		t.Errorf("%s has no record of node 3 resumed after round %d", cluster.DriverFile, killedAt)
	}
	if r := wc.checkpointRound(3); r != rounds-1 {
		t.Errorf("the resumed node's checkpoint is of round %d, want %d", r, rounds-1)
	}
	if _, err := os.Stat(filepath.Join(out, rundir.SummaryFile)); err != nil {
		t.Errorf("no summary: %v", err)
	}
}

// startProcess starts the trellis binary with args. Its output is logged
// if the test fails; it is killed when the test ends if it still runs,
// and when the test process dies.
func startProcess(t *testing.T, bin string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.SysProcAttr = dieWithTheTest()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_, _ = cmd.Process.Wait()
		}
		if t.Failed() {
			t.Logf("%v:\n%s", args[:min(3, len(args))], buf.String())
		}
	})
	return cmd
}

// wallclockRun is a deployed run started by hand in wall-clock mode: a
// monitor (writing a round 4 s after its first record at the latest) and
// one `trellis node` process per node over IPC, each writing its
// checkpoint after every round.
type wallclockRun struct {
	t        *testing.T
	bin, dir string
	out      string // the run directory
	node     func(i int) []string
	start    func(host int, args ...string) *exec.Cmd // a process on host (node i: host i)
	monitor  *exec.Cmd
	nodes    []*exec.Cmd
}

// startWallclock starts the config text's run on nodes processes, round 0
// beginning after startIn (time for the processes to start), each round
// lasting delta.
func startWallclock(t *testing.T, text string, nodes int, startIn, delta time.Duration) *wallclockRun {
	t.Helper()
	return startWallclockWith(t, text, nodes, startIn, delta, wallclockOptions{})
}

// wallclockOptions change how startWallclockWith deploys a run.
type wallclockOptions struct {
	// clockOffset, when set, is how far node i's clock is off (positive:
	// ahead), injected with the node's --clock-offset.
	clockOffset func(i int) time.Duration
	// hosts, when set, runs node i in namespace host i and the monitor in
	// host nodes, over TCP.
	hosts *netns
}

// startWallclockWith is startWallclock with options.
func startWallclockWith(t *testing.T, text string, nodes int, startIn, delta time.Duration, o wallclockOptions) *wallclockRun {
	t.Helper()
	wc := &wallclockRun{t: t, bin: trellisBinary(t)}
	dir, cfgPath := writeConfig(t, text)
	wc.dir, wc.out = dir, filepath.Join(dir, "run")
	peers := &cluster.Peers{Monitor: "tcp://" + addr(nodes) + ":7100"}
	if o.hosts != nil {
		for i := range nodes {
			peers.Nodes = append(peers.Nodes, cluster.Peer{ID: i, Endpoint: "tcp://" + addr(i) + ":7000"})
		}
	} else {
		sock, err := os.MkdirTemp("", "wc-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(sock) })
		peers = cluster.IPCEndpoints(sock, nodes)
	}
	peersPath := filepath.Join(dir, cluster.PeersFile)
	if err := peers.Write(peersPath); err != nil {
		t.Fatal(err)
	}
	epoch := time.Now().Add(startIn)
	common := []string{"--config", cfgPath, "--peers", peersPath, "--mode", "wallclock", "-q"}
	wc.node = func(i int) []string {
		args := []string{"node", "--id", strconv.Itoa(i), "--epoch", epoch.Format(time.RFC3339Nano), "--delta", delta.String(), "--checkpoint", wc.state(i)}
		if o.clockOffset != nil {
			if off := o.clockOffset(i); off != 0 {
				args = append(args, "--clock-offset", off.String())
			}
		}
		return append(args, common...)
	}
	wc.start = func(h int, args ...string) *exec.Cmd {
		if o.hosts != nil {
			return startProcess(t, "ip", append([]string{"netns", "exec", o.hosts.host(h), wc.bin}, args...)...)
		}
		return startProcess(t, wc.bin, args...)
	}
	wc.monitor = wc.start(nodes, append([]string{"monitor", "-o", wc.out, "--gap", "4s"}, common...)...)
	for i := range nodes {
		wc.nodes = append(wc.nodes, wc.start(i, wc.node(i)...))
	}
	return wc
}

// state is node i's checkpoint directory.
func (wc *wallclockRun) state(i int) string {
	return filepath.Join(wc.dir, fmt.Sprintf("node-%d.state", i))
}

// checkpointRound is the round of node i's checkpoint on disk (-1: none).
func (wc *wallclockRun) checkpointRound(i int) int {
	r, err := cluster.LoadCheckpoint(wc.state(i), roundOnly{})
	if err != nil {
		return -1
	}
	return r
}

// kill kills node i with SIGKILL and returns the round of its checkpoint.
func (wc *wallclockRun) kill(i int) int {
	_ = wc.nodes[i].Process.Signal(syscall.SIGKILL)
	_ = wc.nodes[i].Wait()
	return wc.checkpointRound(i)
}

// resume restarts node i from its checkpoint (--resume).
func (wc *wallclockRun) resume(i int) {
	wc.nodes[i] = wc.start(i, append(wc.node(i), "--resume")...)
}

// waitRounds waits until the monitor wrote n rounds.
func (wc *wallclockRun) waitRounds(n int) {
	wc.t.Helper()
	deadline := time.Now().Add(3 * time.Minute) // a hang guard
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(filepath.Join(wc.out, rundir.RoundsFile))
		if bytes.Count(b, []byte("\n")) >= n {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	wc.t.Fatalf("fewer than %d rounds written", n)
}

// wait waits for every node process (each must exit cleanly: 0, or
// cluster.ExitStopped for one stopped by a signal), then the monitor.
func (wc *wallclockRun) wait() {
	wc.t.Helper()
	for i, n := range wc.nodes {
		if err := n.Wait(); err != nil && n.ProcessState.ExitCode() != cluster.ExitStopped {
			wc.t.Errorf("node %d: %v", i, err)
		}
	}
	if err := wc.monitor.Wait(); err != nil {
		wc.t.Fatalf("monitor: %v", err)
	}
}

// modelValues is how many parameter and state values a config's model has.
func modelValues(t *testing.T, c config.Config) int {
	t.Helper()
	params, state := modelSizes(t, c)
	return params + state
}

// modelSizes is how many parameters and state values a config's model
// has.
func modelSizes(t *testing.T, c config.Config) (params, state int) {
	t.Helper()
	tt, err := experiment.LoadData(c)
	if err != nil {
		t.Fatal(err)
	}
	s, err := experiment.SetupOf(c, tt)
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.Build(s.Model, 1, nn.Options{Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	return m.NumParams(), len(m.State())
}

// roundOnly is a cluster.Checkpointer that reads a checkpoint's round
// (while its node process runs on).
type roundOnly struct{}

func (roundOnly) Check() error           { return nil }
func (roundOnly) Save(string, int) error { return errors.New("roundOnly only loads") }
func (roundOnly) Load(dir string) (int, error) {
	st, err := experiment.Load(dir)
	if err != nil {
		return 0, err
	}
	return st.Round, nil
}
