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
// for the rounds the node missed) and without a checkpoint. (A node-level
// DP node checkpoints: its accountant is in its snapshot.)
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
	err = RunNode(t.Context(), NodeConfig{ID: 0, Setup: s, Keys: wire.NewSeedKeys(s.Seed, 2), Peers: IPCEndpoints(sock, 2),
		Timing: Timing{Mode: Lockstep}, StateDir: t.TempDir(), Resume: true})
	if err == nil || !strings.Contains(err.Error(), "wall-clock") {
		t.Fatalf("resume in lock-step: %v", err)
	}
	err = RunNode(t.Context(), NodeConfig{ID: 0, Setup: s, Keys: wire.NewSeedKeys(s.Seed, 2), Peers: IPCEndpoints(sock, 2),
		Timing: Timing{Mode: Wallclock, Epoch: time.Now(), Delta: time.Second}, StateDir: t.TempDir(), Resume: true})
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("resume without a checkpoint: %v", err)
	}
	state := t.TempDir() + "/node-0.state"
	if err := SaveCheckpoint(state, &experiment.Checkpoint{Snapshot: node.Snapshot{Round: 0}, Config: "aaaa"}); err != nil {
		t.Fatal(err)
	}
	err = RunNode(t.Context(), NodeConfig{ID: 0, Setup: s, Keys: wire.NewSeedKeys(s.Seed, 2), Peers: IPCEndpoints(sock, 2),
		Timing: Timing{Mode: Wallclock, Epoch: time.Now(), Delta: time.Second}, StateDir: state, Resume: true, Fingerprint: "bbbb"})
	if err == nil || !strings.Contains(err.Error(), "another config") {
		t.Fatalf("resume from a checkpoint of another config: %v", err)
	}
}

// SaveCheckpoint replaces the directory whole; a process killed between
// its two renames leaves DIR.new (complete), which LoadCheckpoint finds;
// a damaged checkpoint is an error naming the file.
func TestCheckpointDirectory(t *testing.T) {
	dir := t.TempDir() + "/node-0.state"
	for r := range 3 {
		if err := SaveCheckpoint(dir, &experiment.Checkpoint{Snapshot: node.Snapshot{Round: r, Params: []float32{float32(r)}}}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := LoadCheckpoint(dir)
	if err != nil || st.Round != 2 || st.Params[0] != 2 {
		t.Fatalf("after three saves: %+v, %v", st, err)
	}
	if _, err := os.Stat(dir + ".old"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the previous checkpoint was left behind: %v", err)
	}
	// Killed after DIR was renamed to DIR.old, before DIR.new became DIR.
	if err := experiment.Save(dir+".new", &experiment.Checkpoint{Snapshot: node.Snapshot{Round: 3, Params: []float32{3}}}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if st, err := LoadCheckpoint(dir); err != nil || st.Round != 3 {
		t.Fatalf("between the renames: %+v, %v", st, err)
	}
	if err := SaveCheckpoint(dir, &experiment.Checkpoint{Snapshot: node.Snapshot{Round: 4, Params: []float32{4}}}); err != nil {
		t.Fatal(err)
	}
	if st, err := LoadCheckpoint(dir); err != nil || st.Round != 4 {
		t.Fatalf("saved after the crash: %+v, %v", st, err)
	}
	if err := os.WriteFile(dir+"/"+experiment.CheckpointBin, []byte{1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCheckpoint(dir); err == nil || !strings.Contains(err.Error(), experiment.CheckpointBin) {
		t.Errorf("a truncated checkpoint: %v", err)
	}
}
