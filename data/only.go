package data

import (
	"fmt"
	"slices"
)

// A node on its own device reads only its own samples (its train,
// validation and test splits) and the global test set; the rest of the
// training set it needs only as labels and groups, to compute the
// partition every node computes alike. A shard is such a dataset: every
// sample's label and group, the values of the node's samples only
// (Dataset.Rows maps the others to -1, and Row refuses them).

// A Selector picks the training samples whose values to keep, from the
// training set with its labels, groups and shape but possibly without
// values (its Row panics: a selector must not read them).
type Selector func(labels *Dataset) ([]int32, error)

// Only is d with the values of the given samples alone: every sample keeps
// its label and group, the kept samples' values are stored in sample
// order, and Row panics for any other sample. samples may repeat and come
// in any order; each must be in [0, Len()).
func (d *Dataset) Only(samples []int32) *Dataset {
	keep, err := d.keep(samples)
	if err != nil {
		panic(err.Error())
	}
	out := d.labelsOnly()
	l := d.RowLen()
	if d.Levels != nil {
		out.Levels, out.Codes = d.Levels, make([]uint8, 0, len(keep)*l)
	} else {
		out.X = make([]float32, 0, len(keep)*l)
	}
	for k, i := range keep {
		if r := d.stored(int(i)); d.Levels != nil {
			out.Codes = append(out.Codes, d.Codes[r*l:(r+1)*l]...)
		} else {
			out.X = append(out.X, d.X[r*l:(r+1)*l]...)
		}
		out.Rows[i] = int32(k)
	}
	return out
}

// keep is samples sorted, without repeats, each checked in range.
func (d *Dataset) keep(samples []int32) ([]int32, error) {
	keep := slices.Clone(samples)
	slices.Sort(keep)
	keep = slices.Compact(keep)
	if len(keep) > 0 && (keep[0] < 0 || int(keep[len(keep)-1]) >= d.Len()) {
		return nil, fmt.Errorf("data: dataset %q: keeping samples %d … %d of %d samples", d.Name, keep[0], keep[len(keep)-1], d.Len())
	}
	return keep, nil
}

// labelsOnly is d's metadata, labels and groups, holding no sample's
// values (its Rows all -1). The label and group slices are d's (a
// dataset is not modified once built).
func (d *Dataset) labelsOnly() *Dataset {
	out := &Dataset{Name: d.Name, Shape: slices.Clone(d.Shape), Y: d.Y, Classes: d.Classes,
		Groups: d.Groups, GroupNames: d.GroupNames, Norm: d.Norm, Rows: make([]int32, d.Len())}
	for i := range out.Rows {
		out.Rows[i] = -1
	}
	return out
}

// Shard compacts a decoded training set to the samples sel picks
// (Only); the test set stays whole. Drop tt's training set afterwards
// (and return its memory, debug.FreeOSMemory) to keep only the shard.
// The IDX loaders' Shard variants (MNISTShard, LoadMNISTShard,
// LoadFashionMNISTShard) never decode the rest at all.
func Shard(tt TrainTest, sel Selector) (TrainTest, error) {
	if tt.Train == nil {
		return TrainTest{}, fmt.Errorf("data: no training set to take a shard of")
	}
	keep, err := sel(tt.Train.labelsOnly())
	if err != nil {
		return TrainTest{}, err
	}
	if _, err := tt.Train.keep(keep); err != nil {
		return TrainTest{}, err
	}
	return TrainTest{Train: tt.Train.Only(keep), Test: tt.Test}, nil
}
