package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/cluster"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/sim"
)

const asyncLaunchConfig = `
name = "async-launch"
nodes = 4
rounds = 12
seed = 9
[data]
samples = 2000
[model]
kind = "logreg"
[training]
lr = 0.05
[topology]
kind = "kregular"
k = 2
[strategy]
name = "async_mean"
[evaluation]
global_test = 200
[timing]
mode = "async"
max_staleness = 4
compute = "lognormal"
compute_b = 0.5
`

// TestAsyncLaunchReplays: `trellis launch` of an asynchronous config (one
// process per node, fresh keys) takes the mode from
// the config, says the virtual clock's keys are ignored, writes every
// step's record and each node's arrival log; the simulator's replay of
// those logs gives metrics.jsonl's values and the exported models byte
// for byte.
func TestAsyncLaunchReplays(t *testing.T) {
	t.Run("plain", func(t *testing.T) { asyncLaunchReplays(t, asyncLaunchConfig, "private", nil) })
	// Node-level DP, a release per step: with seeded randomness the
	// replay draws the same noise, so the models, and each step's ε, are
	// the cluster's.
	// A Byzantine node (Gaussian noise, σ small enough that no model
	// diverges; from its step 4 on its step 4's vectors again, the stale
	// attack; its messages numbered 20 steps ahead): the replay crafts
	// what its process crafted, so δ_max and the honest models are the
	// cluster's.
	t.Run("Byzantine", func(t *testing.T) {
		byz := strings.Replace(asyncLaunchConfig, "[timing]\n", "[adversary]\nids = [3]\nattack = \"gaussian\"\nsigma = 0.1\n[timing]\nstale = 4\ninflate = 20\n", 1)
		asyncLaunchReplays(t, byz, "private", []string{"byz_weight", "byzantine"})
	})
	t.Run("node DP", func(t *testing.T) {
		asyncLaunchReplays(t, asyncLaunchConfig+"[privacy]\nmode = \"node\"\nnoise_multiplier = 1.5\nclip = 2\n", "seeded", []string{"epsilon", "delta"})
	})
}

func asyncLaunchReplays(t *testing.T, text, randomness string, more []string) {
	bin := trellisBinary(t)
	dir, cfgPath := writeConfig(t, text)
	out := filepath.Join(dir, "run")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // a hang guard
	defer cancel()
	b, err := exec.CommandContext(ctx, bin, "launch", cfgPath, "-o", out, "--start-delay", "2s", "--randomness", randomness).CombinedOutput()
	if err != nil {
		t.Fatalf("trellis launch: %v\n%s", err, b)
	}
	if !bytes.Contains(b, []byte("ignores them")) {
		t.Errorf("no note on the ignored [timing] keys:\n%s", b)
	}
	c, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	logs := make([][]sim.ReplayEvent, c.Nodes)
	for i := range c.Nodes {
		f, err := os.Open(filepath.Join(out, cluster.ClusterDir, fmt.Sprintf("node-%d.arrivals.jsonl", i)))
		if err != nil {
			t.Fatal(err)
		}
		logs[i], err = sim.ReadReplayLog(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	tt, err := experiment.LoadData(c)
	if err != nil {
		t.Fatal(err)
	}
	s, err := experiment.SetupOf(c, tt)
	if err != nil {
		t.Fatal(err)
	}
	built, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	replayed := map[[2]int]map[string]any{}
	err = sim.Replay(t.Context(), built.Config, built.Nodes, logs, func(r sim.StepRecord) error {
		var m map[string]any
		b, _ := json.Marshal(r.NodeRound)
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		replayed[[2]int{r.Step, r.Node}] = m
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
		var got map[string]any
		if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		k := [2]int{int(got["round"].(float64)), int(got["node"].(float64))}
		want := replayed[k]
		if want == nil {
			t.Fatalf("step %d of node %d: not replayed", k[0], k[1])
		}
		for _, key := range append([]string{"local_acc", "local_loss", "global_acc", "global_loss", "train_loss", "steps", "bytes_sent", "rejected"}, more...) {
			if !reflect.DeepEqual(got[key], want[key]) || got[key] == nil && slices.Contains(more, key) {
				t.Errorf("step %d of node %d: %s = %v in the cluster, %v replayed", k[0], k[1], key, got[key], want[key])
			}
		}
	}
	if lines != c.Nodes*c.Rounds {
		t.Errorf("metrics.jsonl has %d lines, want %d", lines, c.Nodes*c.Rounds)
	}
	exported := func(i int, nd *node.Node) bool {
		var buf bytes.Buffer
		meta := map[string]string{"node": strconv.Itoa(i), "rounds": strconv.Itoa(c.Rounds), "model": nd.Model().Describe()}
		if err := nd.Model().WriteSafetensors(&buf, meta); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, cluster.ClusterDir, fmt.Sprintf("node-%d.safetensors", i)))
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Equal(got, buf.Bytes())
	}
	for i, nd := range built.Nodes {
		if !exported(i, nd) {
			t.Errorf("node %d: the exported model is not the replayed one", i)
		}
	}
	if len(built.Config.Adversary.Byzantine) == 0 {
		return
	}
	// The Byzantine nodes did attack: replayed with another attack stream
	// (other noise, the same messages), an honest model that combined a
	// Byzantine vector (a step with byz_weight > 0) is not the cluster's.
	combined := false
	for _, m := range replayed {
		w, _ := m["byz_weight"].(float64)
		combined = combined || w > 0
	}
	if !combined {
		t.Log("no honest node combined a Byzantine vector (all came too late or too stale on a loaded machine): the attack's effect is not checked")
		return
	}
	other, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	other.Config.Adversary.Seed++
	if err := sim.Replay(t.Context(), other.Config, other.Nodes, logs, nil); err != nil {
		t.Fatal(err)
	}
	same := 0
	for i, nd := range other.Nodes {
		if !slices.Contains(built.Config.Adversary.Byzantine, i) && exported(i, nd) {
			same++
		}
	}
	if same == c.Nodes-len(built.Config.Adversary.Byzantine) {
		t.Error("every honest node's exported model is the one of a replay with other attack noise: the Byzantine nodes' attack changed nothing")
	}
}

// TestAsyncDeadNodeIsMarkedMissing: in asynchronous timing a node killed
// with SIGKILL sends no more records, and nobody's record lists it
// missing (its peers do not wait for it). The monitor writes its steps as
// missing once it has been silent for the phase timeout, while the
// others still run — it does not hold the run's records until the end —
// and the run ends on its horizon, exit code 0, with every step each node
// took up to its last.
func TestAsyncDeadNodeIsMarkedMissing(t *testing.T) {
	const nodes, victim = 4, 2
	text := strings.Replace(asyncLaunchConfig, "rounds = 12", "rounds = 100000", 1) + "horizon = 12\n"
	l := startLaunch(t, text, "--phase-timeout", "2s", "--start-delay", "1s")
	pid, _ := l.nodeProcess(victim)
	waitUntil(t, "fewer than 2 steps written", func() bool { return l.rounds() >= 2 })
	_ = syscall.Kill(pid, syscall.SIGKILL)
	killedAt := l.rounds()
	running := func() bool {
		select {
		case <-l.done:
			return false
		default:
			return true
		}
	}
	// Steps written while the others still run, far past those written
	// when the victim died (its own last step is a few dozen past them):
	// the monitor stopped waiting for it.
	var mid int
	waitUntil(t, "the steps after the dead node's are not written", func() bool {
		mid = l.rounds()
		return !running() || mid > killedAt+500
	})
	if !running() {
		t.Fatalf("the run ended before the steps after the dead node's were written (%d steps written when it was killed, %d at the end): the monitor waited for it", killedAt, l.rounds())
	}
	if rc := l.wait(); rc != 0 || !bytes.Contains(l.out, []byte(fmt.Sprintf("node %d was killed", victim))) {
		t.Fatalf("launch: exit code %d, output %q; want 0 (every step written) and a word about node %d", rc, l.out, victim)
	}
	l.checkCleanedUp()
	recs := l.records()
	rounds := l.rounds()
	if len(recs) != nodes*rounds {
		t.Fatalf("%d node records, want %d (%d steps × %d nodes)", len(recs), nodes*rounds, rounds, nodes)
	}
	last := lastStepsWithoutGaps(t, recs)
	if l, ok := last[victim]; !ok || l >= mid {
		t.Errorf("the dead node's last step %d; %d steps written while the others ran: want it far past", last[victim], mid)
	}
}

// TestAsyncResume: an asynchronous launch with --checkpoints; a node
// killed with SIGKILL and restarted by hand with --resume goes on with the
// step after its checkpoint (its first record says so), the monitor
// waited for it (phase timeout 60 s), so every node's record of every
// step up to its last is there, the launch exits 0, and the arrival log,
// which says where the node resumed, is refused by the replay. (Its first
// record after the restart says it resumed, unless the dying process had
// pushed its record of that step before checkpointing it.)
func TestAsyncResume(t *testing.T) {
	const victim = 1
	text := strings.Replace(asyncLaunchConfig, "rounds = 12", "rounds = 100000", 1) + "horizon = 12\n"
	l := startLaunch(t, text, "--checkpoints", "--phase-timeout", "60s", "--start-delay", "1s")
	pid, args := l.nodeProcess(victim)
	checkpoint := l.checkpointOf(victim)
	waitUntil(t, "no checkpoint after step 5", func() bool { return checkpoint() >= 5 })
	_ = syscall.Kill(pid, syscall.SIGKILL)
	waitUntil(t, "the node still runs", func() bool { return !alive(pid) })
	stoppedAt := checkpoint()
	node := startProcess(t, args[0], append(args[1:], "--resume")...)
	if rc := l.wait(); rc != 0 {
		t.Fatalf("launch: exit code %d, output %q", rc, l.out)
	}
	if err := node.Wait(); err != nil {
		t.Fatalf("the restarted node: %v", err)
	}
	records := l.records()
	last := lastStepsWithoutGaps(t, records)
	recs := map[int]*killedRecord{} // the victim's, by step
	for k, r := range records {
		if r.Node == victim && !r.Missing {
			recs[r.Round] = &records[k]
		}
	}
	if last[victim] <= stoppedAt+5 {
		t.Errorf("the restarted node's last step %d, its checkpoint's %d: it did not go on", last[victim], stoppedAt)
	}
	resumed := false
	readLines(t, filepath.Join(l.run, cluster.DriverFile), func(b []byte) {
		var x struct {
			Round, Node  int
			ResumedAfter *int `json:"resumed_after"`
		}
		if err := json.Unmarshal(b, &x); err != nil {
			t.Fatal(err)
		}
		if x.ResumedAfter != nil {
			resumed = true
			if x.Node != victim || *x.ResumedAfter != stoppedAt || x.Round != stoppedAt+1 {
				t.Errorf("node %d's record of step %d says it resumed after step %d; want node %d, step %d after %d", x.Node, x.Round, *x.ResumedAfter, victim, stoppedAt+1, stoppedAt)
			}
		}
	})
	if !resumed && recs[stoppedAt+1] == nil {
		// The restarted node's first record is missing if it neither
		// reached the monitor nor had a twin: the dying process can push
		// a step's record before it checkpoints that step, and the redone
		// step's record is then a copy the monitor drops.
		t.Error("no record says the node resumed, and none of its step after the checkpoint came")
	}
	f, err := os.Open(filepath.Join(l.run, cluster.ClusterDir, fmt.Sprintf("node-%d.arrivals.jsonl", victim)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := sim.ReadReplayLog(f); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("restarted from its checkpoint before its step %d", stoppedAt+1)) {
		t.Errorf("the restarted node's arrival log read for a replay: %v", err)
	}
}

// lastStepsWithoutGaps is each node's last step with a record in recs;
// the test fails for a record missing before it (asynchronous records
// arrive in the order of a node's steps: a gap is a lost record).
func lastStepsWithoutGaps(t *testing.T, recs []killedRecord) map[int]int {
	t.Helper()
	last := map[int]int{}
	for _, r := range recs {
		if !r.Missing {
			last[r.Node] = max(last[r.Node], r.Round)
		}
	}
	for _, r := range recs {
		if l, ok := last[r.Node]; r.Missing && ok && r.Round <= l {
			t.Errorf("node %d's record of step %d, before its last (%d), is missing", r.Node, r.Round, l)
		}
	}
	return last
}
