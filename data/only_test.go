package data

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// handDataset is 5 samples of 2 values, sample i being (10i, 10i+1), with
// labels i mod 3 and groups i mod 2.
func handDataset() *Dataset {
	d := &Dataset{Name: "hand", Shape: []int{2}, Classes: []string{"a", "b", "c"}, GroupNames: []string{"g0", "g1"}}
	for i := range 5 {
		d.X = append(d.X, float32(10*i), float32(10*i+1))
		d.Y = append(d.Y, i%3)
		d.Groups = append(d.Groups, int32(i%2))
	}
	return d
}

// wantPanic runs f and checks it panics with a message holding every
// fragment.
func wantPanic(t *testing.T, f func(), fragments ...string) {
	t.Helper()
	defer func() {
		t.Helper()
		msg, _ := recover().(string)
		if msg == "" {
			t.Fatal("no panic")
		}
		for _, s := range fragments {
			if !strings.Contains(msg, s) {
				t.Errorf("panic %q lacks %q", msg, s)
			}
		}
	}()
	f()
}

// Only keeps every label and group and the values of the samples asked
// (repeats and order ignored), stored in sample order; reading another
// sample panics naming it.
func TestOnlyKeepsTheSamplesAsked(t *testing.T) {
	d := handDataset()
	s := d.Only([]int32{3, 1, 3})
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if want := []float32{10, 11, 30, 31}; !slices.Equal(s.X, want) {
		t.Errorf("values %v, want %v", s.X, want)
	}
	if want := []int32{-1, 0, -1, 1, -1}; !slices.Equal(s.Rows, want) {
		t.Errorf("rows %v, want %v", s.Rows, want)
	}
	if !slices.Equal(s.Y, d.Y) || !slices.Equal(s.Groups, d.Groups) || s.Len() != 5 || s.Name != "hand" {
		t.Errorf("labels %v groups %v, want %v %v", s.Y, s.Groups, d.Y, d.Groups)
	}
	if !slices.Equal(s.Row(3), []float32{30, 31}) || !s.Held(1) || s.Held(2) {
		t.Errorf("row 3 %v, held 1 %v, held 2 %v", s.Row(3), s.Held(1), s.Held(2))
	}
	wantPanic(t, func() { s.Row(2) }, `dataset "hand"`, "sample 2", "not this node's")
	// A shard of a shard, and of a mapped (reordered) dataset.
	if ss := s.Only([]int32{3}); !slices.Equal(ss.X, []float32{30, 31}) || ss.Rows[1] != -1 {
		t.Errorf("shard of a shard: %v %v", ss.X, ss.Rows)
	}
	wantPanic(t, func() { s.Only([]int32{2}) }, "sample 2")
	wantPanic(t, func() { d.Only([]int32{5}) }, "keeping samples 5 … 5 of 5")
	if e := d.Only(nil); len(e.X) != 0 || e.Held(0) || e.Validate() != nil {
		t.Errorf("an empty shard: %v %v %v", e.X, e.Rows, e.Validate())
	}
}

// Validate accepts a dataset with row positions and checks them.
func TestValidateRows(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(d *Dataset)
		want string
	}{
		{"short rows", func(d *Dataset) { d.Rows = d.Rows[:4] }, "4 row positions"},
		{"partial row", func(d *Dataset) { d.X = d.X[:3] }, "3 values"},
		{"row past the values", func(d *Dataset) { d.Rows[0] = 2 }, "sample 0 is at row 2 of 2"},
		{"row below -1", func(d *Dataset) { d.Rows[4] = -2 }, "sample 4 is at row -2"},
		{"non-finite kept value", func(d *Dataset) { d.X[3] = float32(math.Inf(1)) }, "sample 3 holds a non-finite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := handDataset().Only([]int32{1, 3})
			tc.edit(d)
			if err := d.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// Shard picks from the labels (the selector cannot read values) and
// compacts; its errors and out-of-range picks are refused.
func TestShard(t *testing.T) {
	d := handDataset()
	test := handDataset()
	tt, err := Shard(TrainTest{Train: d, Test: test}, func(l *Dataset) ([]int32, error) {
		wantPanic(t, func() { l.Row(0) }, "sample 0")
		var keep []int32
		for i, y := range l.Y {
			if y == 1 {
				keep = append(keep, int32(i))
			}
		}
		return keep, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tt.Train, d.Only([]int32{1, 4})) || tt.Test != test {
		t.Errorf("shard %+v", tt.Train)
	}
	if _, err := Shard(TrainTest{Train: d}, func(*Dataset) ([]int32, error) { return []int32{-1}, nil }); err == nil || !strings.Contains(err.Error(), "keeping samples -1") {
		t.Errorf("a pick out of range: %v", err)
	}
	boom := errors.New("boom")
	if _, err := Shard(TrainTest{Train: d}, func(*Dataset) ([]int32, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("the selector's error: %v", err)
	}
	if _, err := Concat(tt.Train, d); err == nil || !strings.Contains(err.Error(), "before mapping or compacting") {
		t.Errorf("concat of a shard: %v", err)
	}
}

// keepSets are selections of n samples: none, the first, the last, every
// third, a run across a 64 KiB read, all.
func keepSets(n int) map[string][]int32 {
	out := map[string][]int32{"none": nil, "first": {0}, "last": {int32(n - 1)}}
	var third, run, all []int32
	for i := range n {
		all = append(all, int32(i))
		if i%3 == 1 {
			third = append(third, int32(i))
		}
		if i >= 80 && i < 90 { // 784-byte rows: sample 83 straddles 65,536
			run = append(run, int32(i))
		}
	}
	out["third"], out["run"], out["all"] = third, run, all
	return out
}

// The streaming decode of a shard is the full decode compacted (Only),
// bit for bit, for raw and gzip files; the test set is whole.
func TestIDXShardMatchesFullDecode(t *testing.T) {
	for _, gz := range []bool{false, true} {
		dir := t.TempDir()
		writeMNISTDir(t, dir, 200, 7, gz, false)
		full, err := LoadMNIST(dir)
		if err != nil {
			t.Fatal(err)
		}
		for name, keep := range keepSets(200) {
			var seen *Dataset
			tt, err := LoadMNISTShard(dir, func(l *Dataset) ([]int32, error) { seen = l; return keep, nil })
			if err != nil {
				t.Fatal(err)
			}
			if seen.Name != "MNIST/train" || !slices.Equal(seen.Y, full.Train.Y) || !slices.Equal(seen.Shape, full.Train.Shape) {
				t.Errorf("gzip %v, %s: the selector saw %q %v", gz, name, seen.Name, seen.Shape)
			}
			if err := tt.Train.Validate(); err != nil {
				t.Fatal(err)
			}
			if want := full.Train.Only(keep); !sameData(tt.Train, want) || tt.Train.X != nil || tt.Train.Stored() != len(keep) {
				t.Errorf("gzip %v, %s: the shard differs from the full decode's, or is not coded", gz, name)
			}
			if !sameData(tt.Test, full.Test) || tt.Test.Levels == nil {
				t.Errorf("gzip %v, %s: the test set differs", gz, name)
			}
		}
	}
}

// A damaged file is refused by the shard decode with the full decode's
// error, whatever the shard keeps; a selector's error or out-of-range
// pick is refused too.
func TestIDXShardRefusesAsFullDecode(t *testing.T) {
	images := idxBytes([]int{100, 28, 28}, fakeImages(100, 28, 28))
	for _, tc := range []struct {
		name, file string
		b          []byte
		gz         bool
	}{
		{"truncated images", "train-images-idx3-ubyte", images[:40000], false},
		{"truncated in the last row", "train-images-idx3-ubyte", images[:len(images)-1], false},
		{"trailing data", "train-images-idx3-ubyte", append(slices.Clone(images), 0), false},
		{"truncated gzip", "train-images-idx3-ubyte.gz", nil, true},
		{"label out of range", "train-labels-idx1-ubyte", idxBytes([]int{100}, append(make([]byte, 99), 10)), false},
		{"count mismatch", "train-labels-idx1-ubyte", idxBytes([]int{99}, make([]byte, 99)), false},
		{"bad magic", "train-images-idx3-ubyte", append([]byte{1}, images[1:]...), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeMNISTDir(t, dir, 100, 3, tc.gz, false)
			p := filepath.Join(dir, tc.file)
			b := tc.b
			if tc.gz {
				z, _ := os.ReadFile(p)
				b = z[:len(z)/2]
			}
			writeFile(t, p, b)
			_, want := LoadMNIST(dir)
			if want == nil {
				t.Fatal("the full decode accepts it")
			}
			for name, keep := range keepSets(100) {
				_, err := LoadMNISTShard(dir, func(*Dataset) ([]int32, error) { return keep, nil })
				if err == nil || err.Error() != want.Error() {
					t.Errorf("keeping %s: %v, want the full decode's %v", name, err, want)
				}
			}
		})
	}
	dir := t.TempDir()
	writeMNISTDir(t, dir, 10, 3, false, false)
	if _, err := LoadMNISTShard(dir, func(*Dataset) ([]int32, error) { return []int32{10}, nil }); err == nil || !strings.Contains(err.Error(), "keeping samples 10 … 10 of 10") {
		t.Errorf("a pick out of range: %v", err)
	}
	boom := errors.New("boom")
	if _, err := LoadMNISTShard(dir, func(*Dataset) ([]int32, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("the selector's error: %v", err)
	}
}

// The headers' shape is the loaded dataset's.
func TestIDXShape(t *testing.T) {
	dir := t.TempDir()
	writeMNISTDir(t, dir, 12, 5, true, true)
	h, err := MNISTShape(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := (IDXShape{Name: "MNIST/train", Train: 12, Test: 5, Shape: []int{1, 28, 28}, Classes: 10}); !reflect.DeepEqual(h, want) {
		t.Errorf("shape %+v, want %+v", h, want)
	}
	writeFile(t, filepath.Join(dir, "t10k-images.idx3-ubyte.gz"), gzipBytes(t, idxBytes([]int{4}, []byte{1, 2, 3, 4})))
	if _, err := MNISTShape(dir); err == nil || !strings.Contains(err.Error(), "expected at least 2") {
		t.Errorf("images of one dimension: %v", err)
	}
}

// Decoding the embedded MNIST's shard of one node of 200 (300 training
// samples) allocates the shard and the whole test set as bytes (about
// 8 MB), far less than the full decode (about 220 MB of float32), and is
// the full decode compacted, bit for bit.
func TestMNISTShardAllocatesTheShard(t *testing.T) {
	var keep []int32
	for i := range 60000 / 200 {
		keep = append(keep, int32(i*200+i%7))
	}
	allocated := func(f func()) uint64 {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	var shard, full TrainTest
	var err error
	shardBytes := allocated(func() { shard, err = MNISTShard(func(*Dataset) ([]int32, error) { return keep, nil }) })
	if err != nil {
		t.Fatal(err)
	}
	fullBytes := allocated(func() { full, err = MNIST() })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("allocated: shard of 300 samples %.1f MB, full decode %.1f MB", float64(shardBytes)/1e6, float64(fullBytes)/1e6)
	if shardBytes > 20<<20 {
		t.Errorf("the shard's decode allocated %d bytes, over 20 MiB (the full decode: %d)", shardBytes, fullBytes)
	}
	if !sameData(shard.Train, full.Train.Only(keep)) || !sameData(shard.Test, full.Test) {
		t.Error("the shard differs from the full decode compacted")
	}
}

// sameData reports whether a and b hold the same data: metadata, labels,
// groups, which samples they hold, and every held value bit for bit
// (however stored: X, coded, mapped, compacted).
func sameData(a, b *Dataset) bool {
	if a.Name != b.Name || !slices.Equal(a.Shape, b.Shape) || !slices.Equal(a.Y, b.Y) || !slices.Equal(a.Classes, b.Classes) ||
		!slices.Equal(a.Groups, b.Groups) || !slices.Equal(a.GroupNames, b.GroupNames) || !reflect.DeepEqual(a.Norm, b.Norm) {
		return false
	}
	for i := range a.Y {
		if a.Held(i) != b.Held(i) {
			return false
		}
		if a.Held(i) && !slices.EqualFunc(a.Row(i), b.Row(i), func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }) {
			return false
		}
	}
	return true
}

// codedHand is handDataset with its values coded: value v is code v.
func codedHand() *Dataset {
	d := handDataset()
	var levels [256]float32
	for k := range levels {
		levels[k] = float32(k)
	}
	for _, v := range d.X {
		d.Codes = append(d.Codes, uint8(v))
	}
	d.X, d.Levels = nil, &levels
	return d
}

// A coded dataset reads as its values: Row, batches (with and without a
// feature shift), a shard of it, and a shared file written from it; its
// storage is checked.
func TestCodedDataset(t *testing.T) {
	plain, coded := handDataset(), codedHand()
	if err := coded.Validate(); err != nil {
		t.Fatal(err)
	}
	if !sameData(coded, plain) || coded.Stored() != 5 {
		t.Fatal("the coded dataset's values differ")
	}
	if s := coded.Only([]int32{4, 0}); s.Levels != coded.Levels || !slices.Equal(s.Codes, []uint8{0, 1, 40, 41}) || !sameData(s, plain.Only([]int32{0, 4})) {
		t.Errorf("a shard of the coded dataset: %v", s.Codes)
	}
	shift, err := FeatureShift(plain.Shape, 2, ShiftConfig{Kind: Permute, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, tf := range []Transform{nil, shift[1]} {
		bp, bc := NewBatcher(plain, []int32{4, 2, 0}, nil, tf), NewBatcher(coded.Only([]int32{0, 2, 4}), []int32{4, 2, 0}, nil, tf)
		xp, xc, yp, yc := make([]float32, 6), make([]float32, 6), make([]int, 3), make([]int, 3)
		if bp.Next(xp, yp) != 3 || bc.Next(xc, yc) != 3 || !slices.Equal(xp, xc) || !slices.Equal(yp, yc) {
			t.Errorf("transform %v: batches %v %v, want %v %v", tf != nil, xc, yc, xp, yp)
		}
	}
	path := filepath.Join(t.TempDir(), "d.bin")
	if err := WriteShared(path, TrainTest{Train: coded}, nil); err != nil {
		t.Fatal(err)
	}
	sh, err := OpenShared(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	if !sameData(sh.Train, plain) {
		t.Error("the shared file of the coded dataset differs")
	}
	both := codedHand()
	both.X = plain.X
	if err := both.Validate(); err == nil || !strings.Contains(err.Error(), "both coded and not") {
		t.Errorf("values coded and not: %v", err)
	}
	bad := codedHand()
	levels := *bad.Levels
	levels[7] = float32(math.NaN())
	bad.Levels = &levels
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "code 7 stands for a non-finite value") {
		t.Errorf("a non-finite level: %v", err)
	}
	if _, err := Concat(coded, plain); err == nil {
		t.Error("concat of a coded dataset")
	}
}
