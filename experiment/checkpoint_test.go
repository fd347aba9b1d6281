package experiment

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/wire"
)

// A node's checkpoint after a trained round (parameters and SGD momentum)
// is saved, loaded and restored into a fresh node of the same config, which
// then trains the next round exactly as the original does.
func TestCheckpointRoundTrip(t *testing.T) {
	c := config.Default()
	c.Nodes, c.Rounds, c.Data.Samples = 4, 3, 400
	c.Model.Hidden = []int{8}
	c.Training.Momentum = 0.9
	keys := wire.NewSeedKeys(c.Seed, c.Nodes)
	build := func() *node.Node {
		n, err := BuildNode(c, 2, keys, nil)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	hood := node.Neighborhood{In: []int{0, 1, 3}, InDegree: []int{3, 3, 3}, Degree: 3}
	round := func(n *node.Node, r int) {
		t.Helper()
		if err := n.Begin(r, hood); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Train(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := n.Outbox(); err != nil {
			t.Fatal(err)
		}
		if _, err := n.End(node.EndOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	a := build()
	round(a, 0)
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	st := &Checkpoint{Snapshot: snap}
	if len(st.Optimizer) == 0 {
		t.Fatal("SGD with momentum captured no optimizer state")
	}
	dir := t.TempDir()
	if err := Save(dir, st); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Round != 0 || got.Node != 2 || !slices.Equal(got.Params, st.Params) || !slices.Equal(got.Optimizer, st.Optimizer) {
		t.Fatalf("loaded checkpoint differs: round %d node %d", got.Round, got.Node)
	}
	// A fresh twin trains round 1 as a does once restored (its data
	// order, parameters and momentum are a's).
	b := build()
	if err := b.Restore(got.Snapshot); err != nil {
		t.Fatal(err)
	}
	round(a, 1)
	round(b, 1)
	if !slices.Equal(a.Model().Params(), b.Model().Params()) {
		t.Error("a restored node trains round 1 differently")
	}

	// Damage is named; another node's checkpoint is refused.
	if err := os.WriteFile(filepath.Join(dir, CheckpointBin), []byte("xx"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), CheckpointBin) {
		t.Errorf("damaged checkpoint: %v", err)
	}
	if _, err := Load(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing checkpoint: %v", err)
	}
	st.Node = 1
	if err := build().Restore(st.Snapshot); err == nil {
		t.Error("node 1's checkpoint restored into node 2")
	}
}

func TestAdamStateRoundTrip(t *testing.T) {
	o, err := nn.NewOptimizer(nn.OptimizerSpec{Name: "adam", LR: 0.1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	w, g := []float32{1, 2, 3}, []float32{0.5, -1, 2}
	for range 3 {
		o.Step(w, g)
	}
	s := slices.Clone(o.(node.OptimizerState).State())
	o2, _ := nn.NewOptimizer(nn.OptimizerSpec{Name: "adam", LR: 0.1}, 3)
	if err := o2.(node.OptimizerState).SetState(s); err != nil {
		t.Fatal(err)
	}
	w2 := slices.Clone(w)
	o.Step(w, g)
	o2.Step(w2, g)
	if !slices.Equal(w, w2) {
		t.Errorf("Adam after restore: %v, want %v", w2, w)
	}
}

// An asynchronous node's newest step and sequence number per sender
// (node.Snapshot.Senders) survive Save and Load; a stream of a length
// that is not whole entries is refused, naming it.
func TestCheckpointKeepsAsyncSenders(t *testing.T) {
	want := []node.SenderStep{{From: 1, Step: 5, Seq: 2}, {From: 4, Step: 1 << 40, Seq: 1}}
	dir := t.TempDir()
	if err := Save(dir, &Checkpoint{Snapshot: node.Snapshot{Node: 0, Round: 7, Params: []float32{1, 2}, Senders: want}}); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Senders, want) {
		t.Errorf("senders %+v, want %+v", got.Senders, want)
	}
	js, err := os.ReadFile(filepath.Join(dir, CheckpointJSON))
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(js, &meta); err != nil {
		t.Fatal(err)
	}
	meta["streams"].(map[string]any)[sendersStream] = "AAAA" // 3 bytes
	js, _ = json.Marshal(meta)
	if err := os.WriteFile(filepath.Join(dir, CheckpointJSON), js, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "asynchronous senders") {
		t.Errorf("a senders stream of 3 bytes: %v", err)
	}
}
