package cluster

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/trellis-fl/trellis/experiment"
)

// Checkpoints of a node process (NodeConfig.StateDir): after every round
// the node writes its Snapshot (node.Node.Snapshot: parameters, model-local
// and optimizer state, strategy state, every layer's state — trust, the DP
// accountant, keys that live across rounds — and the training data's
// position) in experiment's checkpoint format (experiment.Save), so that `trellis
// node --resume` goes on where it stopped. The directory is replaced
// whole: the new checkpoint is written into DIR.new, DIR is renamed to
// DIR.old, DIR.new to DIR, and DIR.old removed; a process killed at any
// point leaves DIR, or (killed between the two renames) DIR.new and
// DIR.old, each complete, and LoadCheckpoint finds the newest.

// SaveCheckpoint replaces the checkpoint in dir with st.
func SaveCheckpoint(dir string, st *experiment.Checkpoint) error {
	dir = filepath.Clean(dir)
	tmp, old := dir+".new", dir+".old"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := experiment.Save(tmp, st); err != nil {
		return err
	}
	if err := os.RemoveAll(old); err != nil {
		return err
	}
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(dir)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return os.RemoveAll(old)
}

// LoadCheckpoint reads the checkpoint SaveCheckpoint left in dir. No
// checkpoint at all is an error satisfying errors.Is(err, os.ErrNotExist);
// a damaged one names what is wrong.
func LoadCheckpoint(dir string) (*experiment.Checkpoint, error) {
	dir = filepath.Clean(dir)
	st, err := experiment.Load(dir)
	if !errors.Is(err, os.ErrNotExist) {
		return st, err
	}
	// Killed between the renames: DIR.new is complete, DIR.old too.
	for _, d := range []string{dir + ".new", dir + ".old"} {
		if st, err2 := experiment.Load(d); err2 == nil {
			return st, nil
		}
	}
	return nil, fmt.Errorf("no checkpoint in %s: %w", dir, err)
}

// Fingerprint is the SHA-256 of c as TOML (the config the launch writes
// and every node reads): a checkpoint names it, and --resume refuses a
// checkpoint of another config.
func Fingerprint(c experiment.Config) (string, error) {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(c); err != nil {
		return "", err
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:]), nil
}
