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
	"testing"
	"time"

	"github.com/trellis-fl/trellis/cluster"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
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
	for i, nd := range built.Nodes {
		var buf bytes.Buffer
		meta := map[string]string{"node": strconv.Itoa(i), "rounds": strconv.Itoa(c.Rounds), "model": nd.Model().Describe()}
		if err := nd.Model().WriteSafetensors(&buf, meta); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, cluster.ClusterDir, fmt.Sprintf("node-%d.safetensors", i)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, buf.Bytes()) {
			t.Errorf("node %d: the exported model is not the replayed one", i)
		}
	}
}
