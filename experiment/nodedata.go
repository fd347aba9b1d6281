package experiment

import (
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/data"
)

// NodeSamples is the training samples node i reads (its train, validation
// and test splits of the plan), in increasing order: the only training
// samples whose values a node process needs. The plan needs only the
// training set's labels, groups and shape, so s.Data.Train may be a
// dataset holding no values.
func (s Setup) NodeSamples(i int) ([]int32, error) {
	p, err := s.plan()
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= p.s.Nodes {
		return nil, fmt.Errorf("experiment: node %d outside [0, %d)", i, p.s.Nodes)
	}
	sp := p.splits[i]
	out := slices.Concat(sp.Train, sp.Val, sp.Test)
	slices.Sort(out)
	return slices.Compact(out), nil
}

// nodeSelector picks node i's samples of c's training set: the setup of
// c on the training labels (SetupOf, as the node builds it afterwards on
// its shard, so the plan is the same), then its NodeSamples.
func nodeSelector(c config.Config, i int) data.Selector {
	return func(labels *data.Dataset) ([]int32, error) {
		s, err := SetupOf(c, data.TrainTest{Train: labels})
		if err != nil {
			return nil, err
		}
		return s.NodeSamples(i)
	}
}

// LoadNodeData loads what node i of c reads: the labels (and groups) of
// every training sample, the values of its own samples only (NodeSamples;
// any other's Row panics), and the whole global test set. A node on its
// own device loads this instead of the dataset. The MNIST family streams
// its training images, decoding only the node's samples, so the node
// never holds the training set; other formats decode whole, then keep
// the shard and return the rest to the system.
func LoadNodeData(c config.Config, i int) (data.TrainTest, error) {
	if i < 0 || i >= c.Nodes {
		return data.TrainTest{}, fmt.Errorf("node %d outside [0, %d): nodes = %d", i, c.Nodes, c.Nodes)
	}
	sel := nodeSelector(c, i)
	switch c.Data.Dataset {
	case "mnist":
		if c.Data.Dir != "" {
			return data.LoadMNISTShard(c.Data.Dir, sel)
		}
		return data.MNISTShard(sel)
	case "fashion_mnist":
		return data.LoadFashionMNISTShard(c.Data.Dir, sel)
	}
	tt, err := LoadData(c)
	if err != nil {
		return data.TrainTest{}, err
	}
	return shardOf(tt, sel)
}

// shardOf keeps sel's samples of a decoded dataset and returns the
// memory of the others to the system.
func shardOf(tt data.TrainTest, sel data.Selector) (data.TrainTest, error) {
	shard, err := data.Shard(tt, sel)
	debug.FreeOSMemory() // the rest of the training set is garbage now
	return shard, err
}
