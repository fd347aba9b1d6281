package data

import (
	"fmt"
	"math"
)

// Dataset is one shared, read-only copy of a dataset's samples. Clients,
// splits and batchers refer to samples by index (int32) into it and never
// copy rows; the only per-client memory is index lists (DESIGN.md, "Memory").
//
// A Dataset must not be modified once partitions or batchers refer to it; it
// is safe for concurrent readers.
type Dataset struct {
	Name string
	// X holds Len()*RowLen() values, sample-major: sample i is
	// X[i*RowLen() : (i+1)*RowLen()], laid out in Shape's order.
	X []float32
	// Codes and Levels, when Levels is not nil, hold the values instead
	// of X (nil then), one byte a value: value k is Levels[Codes[k]].
	// The MNIST family's pixels take 256 levels, so a node's shard keeps
	// them at a quarter of float32's memory (MNISTShard); Row decodes a
	// copy, batchers decode into their buffers.
	Codes  []uint8
	Levels *[256]float32
	// Shape is the per-sample shape: [C, H, W] for images ([1 28 28] for
	// MNIST, [3 32 32] for CIFAR-10), [D] for feature vectors, [T, F]
	// (time, channel) for PAMAP2 windows.
	Shape []int
	// Y holds one label per sample, in [0, NumClasses()).
	Y []int
	// Classes names each class; its length is the number of classes.
	Classes []string
	// Groups, when not nil, gives each sample's natural group (FEMNIST
	// writer, HAR or PAMAP2 subject, synthetic client) as a dense id in
	// [0, len(GroupNames)); the natural partition uses it.
	Groups     []int32
	GroupNames []string
	// Norm records the normalization the loader applied.
	Norm Normalization
	// Rows, when not nil, is where each sample's values are in X: sample
	// i is row Rows[i] of X (a shared dataset file stores each node's
	// samples next to each other, so that a node maps only its own pages;
	// OpenShared), or nowhere when Rows[i] is -1 (a node's shard holds the
	// values of its own samples only: Only). Indices everywhere else stay
	// the samples'.
	Rows []int32
	// stream, when not nil, drops the pages of a mapped X from the
	// process's resident set as batchers read them (OpenShared's test
	// set).
	stream *pageDropper
}

// Normalization records how raw values were turned into X, so that a reader
// of results knows exactly what the model saw. When Mean and Std are set,
// X = (Scale*raw - Mean[c]) / Std[c] for channel (or column) c.
type Normalization struct {
	Desc      string    // human-readable, e.g. "x/255, then (x-0.1307)/0.3081"
	Scale     float32   // applied to raw values first (1/255 for 8-bit pixels); 0 means 1
	Mean, Std []float32 // per channel (images) or per column (tables); nil if none
}

// Len is the number of samples.
func (d *Dataset) Len() int { return len(d.Y) }

// RowLen is the number of values per sample, the product of Shape.
func (d *Dataset) RowLen() int {
	n := 1
	for _, s := range d.Shape {
		n *= s
	}
	return n
}

// NumClasses is the number of classes, len(Classes).
func (d *Dataset) NumClasses() int { return len(d.Classes) }

// Row returns sample i's values: a view into X, not a copy (a decoded
// copy for a coded dataset, Codes; batchers use CopyRow). It panics when
// the dataset does not hold them (Held): reading another node's sample is
// a bug, never something to answer with other values.
func (d *Dataset) Row(i int) []float32 {
	l, r := d.RowLen(), d.stored(i)
	if d.Levels != nil {
		out := make([]float32, l)
		d.decode(out, r)
		return out
	}
	return d.X[r*l : (r+1)*l : (r+1)*l]
}

// CopyRow copies sample i's values into dst (RowLen values), decoding
// a coded dataset's bytes; it panics as Row does.
func (d *Dataset) CopyRow(dst []float32, i int) {
	l, r := d.RowLen(), d.stored(i)
	if d.Levels != nil {
		d.decode(dst[:l], r)
		return
	}
	copy(dst[:l], d.X[r*l:(r+1)*l])
}

// value is value j of sample i, without a copy of the row.
func (d *Dataset) value(i, j int) float32 {
	k := d.stored(i)*d.RowLen() + j
	if d.Levels != nil {
		return d.Levels[d.Codes[k]]
	}
	return d.X[k]
}

// Decoded is d with its values as float32 (X), for a dataset every
// reader decodes over and over: a coded dataset (Codes) becomes a copy
// that shares everything but the values, four times their memory and no
// decoding in batchers (which then copy rows); any other is d itself.
// The values are Levels' own, bit for bit.
func (d *Dataset) Decoded() *Dataset {
	if d.Levels == nil {
		return d
	}
	out := *d
	out.X = make([]float32, len(d.Codes))
	l := d.RowLen()
	for r := range len(d.Codes) / l {
		d.decode(out.X[r*l:(r+1)*l], r)
	}
	out.Codes, out.Levels = nil, nil
	return &out
}

// decode writes stored row r of a coded dataset into dst.
func (d *Dataset) decode(dst []float32, r int) {
	for k, c := range d.Codes[r*len(dst) : (r+1)*len(dst)] {
		dst[k] = d.Levels[c]
	}
}

// stored is the row of X (or Codes) holding sample i's values.
func (d *Dataset) stored(i int) int {
	if d.Rows == nil {
		return i
	}
	r := d.Rows[i]
	if r < 0 {
		panic(fmt.Sprintf("data: dataset %q: sample %d is not held here: this copy holds only its node's samples (Dataset.Only), and the sample is not this node's", d.Name, i))
	}
	return int(r)
}

// Held says whether the dataset holds sample i's values (every sample but
// those a shard dropped: Only).
func (d *Dataset) Held(i int) bool { return d.Rows == nil || d.Rows[i] >= 0 }

// Stored is the number of samples whose values the dataset holds.
func (d *Dataset) Stored() int {
	if d.Levels != nil {
		return len(d.Codes) / d.RowLen()
	}
	return len(d.X) / d.RowLen()
}

// All returns the indices 0..Len()-1, the pool partitioners use by default.
func (d *Dataset) All() []int32 {
	idx := make([]int32, d.Len())
	for i := range idx {
		idx[i] = int32(i)
	}
	return idx
}

// ClassCounts returns how many samples of each class the dataset holds.
func (d *Dataset) ClassCounts() []int {
	c := make([]int, d.NumClasses())
	for _, y := range d.Y {
		c[y]++
	}
	return c
}

// Validate checks the invariants every loader establishes: consistent
// lengths, labels and groups in range, finite values, at most MaxInt32
// samples (indices are int32).
func (d *Dataset) Validate() error {
	if len(d.Shape) == 0 {
		return fmt.Errorf("data: dataset %q: empty shape", d.Name)
	}
	for _, s := range d.Shape {
		if s <= 0 {
			return fmt.Errorf("data: dataset %q: shape %v has a non-positive dimension", d.Name, d.Shape)
		}
	}
	if len(d.Y) > math.MaxInt32 {
		return fmt.Errorf("data: dataset %q: %d samples exceed the int32 index range", d.Name, len(d.Y))
	}
	if err := d.validateRows(); err != nil {
		return err
	}
	if len(d.Classes) == 0 {
		return fmt.Errorf("data: dataset %q: no classes", d.Name)
	}
	for i, y := range d.Y {
		if y < 0 || y >= len(d.Classes) {
			return fmt.Errorf("data: dataset %q: sample %d has label %d outside [0, %d)", d.Name, i, y, len(d.Classes))
		}
	}
	if d.Groups != nil {
		if len(d.Groups) != len(d.Y) {
			return fmt.Errorf("data: dataset %q: %d group ids for %d samples", d.Name, len(d.Groups), len(d.Y))
		}
		for i, g := range d.Groups {
			if g < 0 || int(g) >= len(d.GroupNames) {
				return fmt.Errorf("data: dataset %q: sample %d has group %d outside [0, %d)", d.Name, i, g, len(d.GroupNames))
			}
		}
	}
	if d.Levels != nil {
		for c, v := range d.Levels {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("data: dataset %q: code %d stands for a non-finite value", d.Name, c)
			}
		}
		return nil
	}
	for i := range d.Y {
		if !d.Held(i) {
			continue
		}
		for _, v := range d.Row(i) {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("data: dataset %q: sample %d holds a non-finite value", d.Name, i)
			}
		}
	}
	return nil
}

// validateRows checks that X holds a row for every sample (Rows nil), or
// whole rows and a Rows entry per sample naming one of them or none.
func (d *Dataset) validateRows() error {
	l, vals := d.RowLen(), len(d.X)
	if d.Levels != nil {
		if d.X != nil {
			return fmt.Errorf("data: dataset %q: values both coded and not", d.Name)
		}
		vals = len(d.Codes)
	}
	if d.Rows == nil {
		if vals != len(d.Y)*l {
			return fmt.Errorf("data: dataset %q: %d values for %d samples of shape %v", d.Name, vals, len(d.Y), d.Shape)
		}
		return nil
	}
	if len(d.Rows) != len(d.Y) || vals%l != 0 {
		return fmt.Errorf("data: dataset %q: %d row positions and %d values for %d samples of shape %v", d.Name, len(d.Rows), vals, len(d.Y), d.Shape)
	}
	for i, r := range d.Rows {
		if r < -1 || int(r) >= vals/l {
			return fmt.Errorf("data: dataset %q: sample %d is at row %d of %d", d.Name, i, r, vals/l)
		}
	}
	return nil
}

// TrainTest pairs a dataset's training set with its global test set. The
// test set is kept apart: partitions and per-client splits are built from
// Train only, and Test measures every node on the same held-out samples.
// Test is nil for datasets that ship without one (use HoldOut).
type TrainTest struct {
	Train, Test *Dataset
}

// Concat returns a new dataset holding a's samples followed by b's (for
// example HAR train and test, to partition all 30 subjects). Both must share
// shape and classes; group names are merged, so a group present in both keeps
// one id. The result is a fresh copy; drop a and b to keep one copy in memory.
func Concat(a, b *Dataset) (*Dataset, error) {
	if fmt.Sprint(a.Shape) != fmt.Sprint(b.Shape) {
		return nil, fmt.Errorf("data: concat %q and %q: shapes %v and %v differ", a.Name, b.Name, a.Shape, b.Shape)
	}
	if fmt.Sprint(a.Classes) != fmt.Sprint(b.Classes) {
		return nil, fmt.Errorf("data: concat %q and %q: class lists differ", a.Name, b.Name)
	}
	if a.Norm.Desc != b.Norm.Desc {
		return nil, fmt.Errorf("data: concat %q and %q: normalizations differ (%q, %q)", a.Name, b.Name, a.Norm.Desc, b.Norm.Desc)
	}
	if a.Rows != nil || b.Rows != nil || a.Levels != nil || b.Levels != nil {
		return nil, fmt.Errorf("data: concat %q and %q: concatenate datasets as loaded, before mapping or compacting them", a.Name, b.Name)
	}
	if (a.Groups == nil) != (b.Groups == nil) {
		return nil, fmt.Errorf("data: concat %q and %q: only one has group ids", a.Name, b.Name)
	}
	out := &Dataset{
		Name:    a.Name + "+" + b.Name,
		X:       append(append(make([]float32, 0, len(a.X)+len(b.X)), a.X...), b.X...),
		Shape:   append([]int(nil), a.Shape...),
		Y:       append(append(make([]int, 0, len(a.Y)+len(b.Y)), a.Y...), b.Y...),
		Classes: append([]string(nil), a.Classes...),
		Norm:    a.Norm,
	}
	if a.Groups != nil {
		ids := make(map[string]int32, len(a.GroupNames)+len(b.GroupNames))
		remap := func(names []string) []int32 {
			m := make([]int32, len(names))
			for i, n := range names {
				id, ok := ids[n]
				if !ok {
					id = int32(len(out.GroupNames))
					ids[n] = id
					out.GroupNames = append(out.GroupNames, n)
				}
				m[i] = id
			}
			return m
		}
		ma, mb := remap(a.GroupNames), remap(b.GroupNames)
		out.Groups = make([]int32, 0, len(a.Groups)+len(b.Groups))
		for _, g := range a.Groups {
			out.Groups = append(out.Groups, ma[g])
		}
		for _, g := range b.Groups {
			out.Groups = append(out.Groups, mb[g])
		}
	}
	return out, nil
}
