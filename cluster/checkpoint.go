package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Checkpoints of a node process (NodeConfig.StateDir): after every round
// the node writes its state through its Checkpointer (the CLI's: the
// node's node.Snapshot — parameters, model-local and optimizer state,
// strategy state, every layer's state: trust, the DP accountant, keys that
// live across rounds — and the training data's position, in experiment's
// checkpoint format), so that `trellis node --resume` goes on where it
// stopped. The directory is replaced
// whole: the new checkpoint is written into DIR.new, DIR is renamed to
// DIR.old, DIR.new to DIR, and DIR.old removed; a process killed at any
// point leaves DIR, or (killed between the two renames) DIR.new and
// DIR.old, each complete, and LoadCheckpoint finds the newest.

// SaveCheckpoint replaces the checkpoint in dir with what save writes into
// the new directory it is given.
func SaveCheckpoint(dir string, save func(dir string) error) error {
	dir = filepath.Clean(dir)
	tmp, old := dir+".new", dir+".old"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := save(tmp); err != nil {
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

// LoadCheckpoint loads, through c, the checkpoint SaveCheckpoint left in
// dir and returns its round. No checkpoint at all is an error satisfying
// errors.Is(err, os.ErrNotExist); a damaged one names what is wrong.
func LoadCheckpoint(dir string, c Checkpointer) (int, error) {
	dir = filepath.Clean(dir)
	r, err := c.Load(dir)
	if !errors.Is(err, os.ErrNotExist) {
		return r, err
	}
	// Killed between the renames: DIR.new is complete, DIR.old too.
	for _, d := range []string{dir + ".new", dir + ".old"} {
		if r, err2 := c.Load(d); err2 == nil {
			return r, nil
		}
	}
	return 0, fmt.Errorf("no checkpoint in %s: %w", dir, err)
}
