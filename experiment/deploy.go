package experiment

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/BurntSushi/toml"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// Deployment is what the processes of a deployed run (one per node, and
// the monitor) are built from, derived from the seed as Build derives the
// simulator's: the setup with its defaults, the round graphs, the link
// drops, and the adversary. The CLI hands its parts to package cluster,
// which knows nothing of configs.
type Deployment struct {
	Setup     Setup
	Graph     topology.Dynamic
	Drops     topology.Drops
	Adversary adversary.Config
}

// Deploy is s's Deployment.
func (s Setup) Deploy() (*Deployment, error) {
	s = s.Defaults()
	ac, err := s.Adversary()
	if err != nil {
		return nil, err
	}
	g, err := s.Graph(s.Nodes, s.Seed)
	if err != nil {
		return nil, err
	}
	drops, err := topology.NewDrops(s.Drop, s.Seed)
	if err != nil {
		return nil, err
	}
	return &Deployment{Setup: s, Graph: g, Drops: drops, Adversary: ac}, nil
}

// Node builds node i (BuildNode) with its key from keys and, when it is
// Byzantine, its own adversary (adversary.Alone; nil for an honest node).
func (d *Deployment) Node(i int, keys wire.KeySource) (*node.Node, *adversary.Adversary, error) {
	n, err := d.Setup.BuildNode(i, keys)
	if err != nil {
		return nil, nil, err
	}
	if !slices.Contains(d.Adversary.Byzantine, i) {
		return n, nil, nil
	}
	id, err := keys.Identity(i)
	if err != nil {
		return nil, nil, err
	}
	adv, err := adversary.Alone(d.Adversary, i, id)
	if err != nil {
		return nil, nil, fmt.Errorf("node %d is Byzantine: %w", i, err)
	}
	return n, adv, nil
}

// Global reports whether the nodes evaluate on the global test set too.
func (d *Deployment) Global() bool { return d.Setup.GlobalTest != 0 && d.Setup.Data.Test != nil }

// NodeCheckpoints saves and restores one node's state in a directory: its
// node.Snapshot in the checkpoint format (Save, Load), naming the config
// the node runs (Fingerprint) so that a resume refuses a checkpoint of
// another. It is what a node process checkpoints through
// (cluster.Checkpointer).
type NodeCheckpoints struct {
	Node   *node.Node
	Config string
}

// Check reports whether the node's state can be saved (a strategy whose
// state has no format cannot).
func (c NodeCheckpoints) Check() error {
	if _, err := c.Node.Snapshot(); err != nil {
		return fmt.Errorf("its state cannot be saved: %w", err)
	}
	return nil
}

// Save writes the node's state after round r into dir.
func (c NodeCheckpoints) Save(dir string, r int) error {
	snap, err := c.Node.Snapshot()
	if err != nil {
		return err
	}
	if snap.Round != r {
		return fmt.Errorf("node %d: checkpoint after round %d of a node that ended round %d", c.Node.ID(), r, snap.Round)
	}
	return Save(dir, &Checkpoint{Snapshot: snap, Config: c.Config})
}

// Load restores the node from the checkpoint in dir and returns its
// round; a checkpoint of another config is refused before anything is
// restored.
func (c NodeCheckpoints) Load(dir string) (int, error) {
	ck, err := Load(dir)
	if err != nil {
		return 0, err
	}
	if ck.Config != "" && c.Config != "" && ck.Config != c.Config {
		return 0, fmt.Errorf("the checkpoint in %s is of a run of another config (resume with the config it ran)", dir)
	}
	if err := c.Node.Restore(ck.Snapshot); err != nil {
		return 0, err
	}
	return ck.Round, nil
}

// Fingerprint is the SHA-256 of c as TOML (the config a launch writes and
// every node reads): a checkpoint names it, and a resume refuses a
// checkpoint of another config.
func Fingerprint(c config.Config) (string, error) {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(c); err != nil {
		return "", err
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:]), nil
}

// RowOrder is the order a shared dataset file stores the training samples
// in (data.WriteShared): node 0's training, validation and test samples,
// then node 1's, …, then the samples no node holds. A node process maps
// its own pages of the file and little else.
func (s Setup) RowOrder() ([]int32, error) {
	p, err := s.plan()
	if err != nil {
		return nil, err
	}
	n := s.Data.Train.Len()
	held := make([]bool, n)
	order := make([]int32, 0, n)
	for _, sp := range p.splits {
		for _, idx := range [][]int32{sp.Train, sp.Val, sp.Test} {
			for _, i := range idx {
				if !held[i] {
					held[i] = true
					order = append(order, i)
				}
			}
		}
	}
	for i := range n {
		if !held[i] {
			order = append(order, int32(i))
		}
	}
	return order, nil
}
