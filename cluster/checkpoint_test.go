package cluster

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/wire"
)

// Resume is refused where it cannot work: in lock-step (the others wait
// for the rounds the node missed), without a checkpoint, and from a
// checkpoint of another config. (A node-level DP node checkpoints: its
// accountant is in its snapshot.)
func TestResumeRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a DP node from its data")
	}
	_, s := testSetup(t, twoNodes+"[privacy]\nmode = \"node\"\nclip = 1.0\nnoise_multiplier = 1.0\ndelta = 1e-3\n")
	sock, err := os.MkdirTemp("", "ck-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sock)
	keys := wire.NewSeedKeys(s.Seed, 2)
	run := func(timing Timing, state, fingerprint string) error {
		nc := testNode(t, s, 0, keys)
		nc.Peers, nc.Timing, nc.StateDir, nc.Resume = IPCEndpoints(sock, 2), timing, state, true
		nc.Checkpoints = experiment.NodeCheckpoints{Node: nc.Node, Config: fingerprint}
		return RunNode(t.Context(), nc)
	}
	err = run(Timing{Mode: Lockstep}, t.TempDir(), "")
	if err == nil || !strings.Contains(err.Error(), "wall-clock") {
		t.Fatalf("resume in lock-step: %v", err)
	}
	err = run(Timing{Mode: Wallclock, Epoch: time.Now(), Delta: time.Second}, t.TempDir(), "")
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("resume without a checkpoint: %v", err)
	}
	state := t.TempDir() + "/node-0.state"
	if err := SaveCheckpoint(state, saveCheckpoint(&experiment.Checkpoint{Snapshot: node.Snapshot{Round: 0}, Config: "aaaa"})); err != nil {
		t.Fatal(err)
	}
	err = run(Timing{Mode: Wallclock, Epoch: time.Now(), Delta: time.Second}, state, "bbbb")
	if err == nil || !strings.Contains(err.Error(), "another config") {
		t.Fatalf("resume from a checkpoint of another config: %v", err)
	}
}

// SaveCheckpoint replaces the directory whole; a process killed between
// its two renames leaves DIR.new (complete), which LoadCheckpoint finds;
// a damaged checkpoint is an error naming the file.
func TestCheckpointDirectory(t *testing.T) {
	dir := t.TempDir() + "/node-0.state"
	ck := func(r int) *experiment.Checkpoint {
		return &experiment.Checkpoint{Snapshot: node.Snapshot{Round: r, Params: []float32{float32(r)}}}
	}
	for r := range 3 {
		if err := SaveCheckpoint(dir, saveCheckpoint(ck(r))); err != nil {
			t.Fatal(err)
		}
	}
	var st checkpointLoader
	r, err := LoadCheckpoint(dir, &st)
	if err != nil || r != 2 || st.Params[0] != 2 {
		t.Fatalf("after three saves: round %d, %v", r, err)
	}
	if _, err := os.Stat(dir + ".old"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the previous checkpoint was left behind: %v", err)
	}
	// Killed after DIR was renamed to DIR.old, before DIR.new became DIR.
	if err := experiment.Save(dir+".new", ck(3)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if r, err := LoadCheckpoint(dir, &st); err != nil || r != 3 {
		t.Fatalf("between the renames: round %d, %v", r, err)
	}
	if err := SaveCheckpoint(dir, saveCheckpoint(ck(4))); err != nil {
		t.Fatal(err)
	}
	if r, err := LoadCheckpoint(dir, &st); err != nil || r != 4 {
		t.Fatalf("saved after the crash: round %d, %v", r, err)
	}
	if err := os.WriteFile(dir+"/"+experiment.CheckpointBin, []byte{1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCheckpoint(dir, &st); err == nil || !strings.Contains(err.Error(), experiment.CheckpointBin) {
		t.Errorf("a truncated checkpoint: %v", err)
	}
}

// saveCheckpoint is a SaveCheckpoint writer of ck.
func saveCheckpoint(ck *experiment.Checkpoint) func(dir string) error {
	return func(dir string) error { return experiment.Save(dir, ck) }
}

// checkpointLoader is a Checkpointer that loads a checkpoint, with no
// node to restore.
type checkpointLoader struct{ *experiment.Checkpoint }

func (l *checkpointLoader) Check() error           { return nil }
func (l *checkpointLoader) Save(string, int) error { return errors.New("checkpointLoader only loads") }
func (l *checkpointLoader) Load(dir string) (int, error) {
	ck, err := experiment.Load(dir)
	if err != nil {
		return 0, err
	}
	l.Checkpoint = ck
	return ck.Round, nil
}
