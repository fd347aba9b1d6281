package cluster_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/cluster"
	"github.com/trellis-fl/trellis/rundir"
)

// netns is a set of network namespaces, one per host, on one bridge (in a
// namespace of its own), removed whole by cleanup: deleting a namespace
// deletes its veth end, its iptables rules and its qdiscs.
type netns struct {
	t      *testing.T
	prefix string
	names  []string
}

// sh runs a command, failing the test with its output.
func (n *netns) sh(args ...string) {
	n.t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		n.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// in runs a command inside host h's namespace.
func (n *netns) in(h int, args ...string) {
	n.t.Helper()
	n.sh(append([]string{"ip", "netns", "exec", n.host(h)}, args...)...)
}

func (n *netns) host(h int) string { return fmt.Sprintf("%s-h%d", n.prefix, h) }
func addr(h int) string            { return fmt.Sprintf("10.77.0.%d", h+1) }

// newNetns makes hosts namespaces 10.77.0.1 … on a bridge, or skips the
// test naming what is missing.
func newNetns(t *testing.T, hosts int) *netns {
	if testing.Short() {
		t.Skip("network namespaces: not under -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	for _, tool := range []string{"ip", "iptables", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found (Debian: apt-get install iproute2 iptables)", tool)
		}
	}
	n := &netns{t: t, prefix: fmt.Sprintf("trellis%d", os.Getpid()%100000)}
	t.Cleanup(func() {
		for _, name := range n.names {
			_ = exec.Command("ip", "netns", "del", name).Run()
		}
	})
	sw := n.prefix + "-sw"
	if out, err := exec.Command("ip", "netns", "add", sw).CombinedOutput(); err != nil {
		t.Skipf("cannot make a network namespace here: %v: %s", err, bytes.TrimSpace(out))
	}
	n.names = append(n.names, sw)
	n.sh("ip", "-n", sw, "link", "add", "br0", "type", "bridge")
	n.sh("ip", "-n", sw, "link", "set", "br0", "up")
	for h := range hosts {
		n.sh("ip", "netns", "add", n.host(h))
		n.names = append(n.names, n.host(h))
		n.sh("ip", "-n", n.host(h), "link", "set", "lo", "up")
		n.sh("ip", "-n", n.host(h), "link", "add", "eth0", "type", "veth", "peer", "name", fmt.Sprintf("p%d", h), "netns", sw)
		n.sh("ip", "-n", n.host(h), "addr", "add", addr(h)+"/24", "dev", "eth0")
		n.sh("ip", "-n", n.host(h), "link", "set", "eth0", "up")
		n.sh("ip", "-n", sw, "link", "set", fmt.Sprintf("p%d", h), "master", "br0", "up")
	}
	// The statistic match may be missing from the kernel: probe it.
	probe := exec.Command("ip", "netns", "exec", n.host(0), "iptables", "-A", "INPUT", "-m", "statistic", "--mode", "random", "--probability", "0.05", "-j", "DROP")
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("iptables' statistic match does not work here: %v: %s", err, bytes.TrimSpace(out))
	}
	n.in(0, "iptables", "-D", "INPUT", "-m", "statistic", "--mode", "random", "--probability", "0.05", "-j", "DROP")
	return n
}

// partition drops (add) or lets through again (delete) all traffic
// between hosts a and b, on a's side, both directions.
func (n *netns) partition(a, b int, add bool) {
	op := "-I"
	if !add {
		op = "-D"
	}
	n.in(a, "iptables", op, "INPUT", "-s", addr(b), "-j", "DROP")
	n.in(a, "iptables", op, "OUTPUT", "-d", addr(b), "-j", "DROP")
}

// TestNetnsLossBandwidthPartition: four node hosts
// and a monitor host in network namespaces on a bridge, talking TCP, every
// host dropping 5 % of the packets it receives at random (iptables'
// statistic match: this kernel has no netem) behind a 20 Mbit/s token
// bucket (tc tbf), and hosts 1 and 2 cut from each other for three rounds,
// then healed. The wall-clock run completes every round with every node's
// record; what the partition cost is counted — the markers missing
// between 1 and 2 in those rounds, the messages that arrived after their
// round closed — and every late message was refused by its node (counted
// in its round's rejected), never used in another round.
func TestNetnsLossBandwidthPartition(t *testing.T) {
	const nodes, rounds, mon = 4, 12, 4
	n := newNetns(t, nodes+1)
	bin := trellisBinary(t)
	for h := range nodes + 1 {
		n.in(h, "iptables", "-A", "INPUT", "-m", "statistic", "--mode", "random", "--probability", "0.05", "-j", "DROP")
		n.in(h, "tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", "20mbit", "burst", "64kb", "latency", "400ms")
	}
	dir, cfgPath := writeConfig(t, logregFedAvg("netns", nodes, rounds, 11, 800))
	peers := &cluster.Peers{Monitor: "tcp://" + addr(mon) + ":7100"}
	for i := range nodes {
		peers.Nodes = append(peers.Nodes, cluster.Peer{ID: i, Endpoint: "tcp://" + addr(i) + ":7000"})
	}
	peersPath := filepath.Join(dir, cluster.PeersFile)
	if err := peers.Write(peersPath); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	epoch := time.Now().Add(10 * time.Second).Format(time.RFC3339Nano)
	common := []string{"--config", cfgPath, "--peers", peersPath, "--mode", "wallclock", "-q"}
	var procs []*exec.Cmd
	start := func(h int, args ...string) {
		cmd := exec.Command("ip", append([]string{"netns", "exec", n.host(h), bin}, args...)...)
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		cmd.SysProcAttr = dieWithTheTest()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
				_, _ = cmd.Process.Wait()
			}
			if t.Failed() {
				t.Logf("host %d %v:\n%s", h, args[0], buf.String())
			}
		})
	}
	// The gap must outlast TCP's retransmissions of a record: at 5 % loss a
	// record (or its ACK) lost twice arrives 1 s + 2 s after it was sent,
	// plus the round's own skew; with a 4 s gap CI once marked such a record
	// missing. 10 s covers three losses in a row (odds about 1e-4 a record).
	start(mon, append([]string{"monitor", "-o", out, "--gap", "10s"}, common...)...)
	for i := range nodes {
		start(i, append([]string{"node", "--id", strconv.Itoa(i), "--epoch", epoch, "--delta", "2s"}, common...)...)
	}
	written := func() int {
		b, _ := os.ReadFile(filepath.Join(out, rundir.RoundsFile))
		return bytes.Count(b, []byte("\n"))
	}
	waitRounds := func(k int) {
		for deadline := time.Now().Add(90 * time.Second); written() < k; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("fewer than %d rounds written", k)
			}
		}
	}
	waitRounds(3)
	n.partition(1, 2, true)
	cut := written()
	waitRounds(cut + 3)
	n.partition(1, 2, false)
	healed := written()
	for k, p := range procs {
		if err := p.Wait(); err != nil {
			t.Errorf("process %d: %v", k, err)
		}
	}
	if t.Failed() {
		return
	}

	// Every round, every node's record.
	type nodeLine struct {
		Round, Node, Rejected int
		Missing               bool
	}
	rejected := map[[2]int]int{}
	lines := 0
	readLines(t, filepath.Join(out, rundir.MetricsFile), func(b []byte) {
		var x nodeLine
		if err := json.Unmarshal(b, &x); err != nil {
			t.Fatal(err)
		}
		lines++
		if x.Missing {
			t.Errorf("round %d: node %d's record is missing", x.Round, x.Node)
		}
		rejected[[2]int{x.Round, x.Node}] = x.Rejected
	})
	if lines != rounds*nodes {
		t.Errorf("%d node records, want %d", lines, rounds*nodes)
	}
	if _, err := os.Stat(filepath.Join(out, rundir.SummaryFile)); err != nil {
		t.Errorf("no summary: %v", err)
	}
	// What the partition cost, counted.
	type driverLine struct {
		Round, Node, Late int
		Missing           []int `json:"missing_markers"`
	}
	cutOff, late := 0, 0
	readLines(t, filepath.Join(out, cluster.DriverFile), func(b []byte) {
		var x driverLine
		if err := json.Unmarshal(b, &x); err != nil {
			t.Fatal(err)
		}
		late += x.Late
		if x.Late > rejected[[2]int{x.Round, x.Node}] {
			t.Errorf("round %d node %d: %d late messages, %d refused: a late message was used", x.Round, x.Node, x.Late, rejected[[2]int{x.Round, x.Node}])
		}
		for _, j := range x.Missing {
			if x.Node == 1 && j == 2 || x.Node == 2 && j == 1 {
				cutOff++
				if x.Round < cut-1 || x.Round > healed+1 {
					t.Logf("round %d: node %d missed %d's marker outside the partition (rounds %d–%d)", x.Round, x.Node, j, cut, healed)
				}
			}
		}
	})
	if cutOff < 2 {
		t.Errorf("the partition between hosts 1 and 2 (rounds %d–%d) cost %d missing markers, want at least 2", cut, healed, cutOff)
	}
	t.Logf("partition rounds %d–%d: %d markers missing between 1 and 2, %d late messages, all refused", cut, healed, cutOff, late)
}

func readLines(t *testing.T, path string, fn func([]byte)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		fn(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
