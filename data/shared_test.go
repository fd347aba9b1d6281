package data

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// sharedSample is a small train/test pair with groups, odd shapes and
// values whose bits must survive (negative zero, subnormals, extremes).
func sharedSample() TrainTest {
	train := &Dataset{Name: "t", Shape: []int{3, 5}, Classes: []string{"a", "b", "c"},
		GroupNames: []string{"g0", "g1"}, Norm: Normalization{Desc: "x/255", Scale: 1.0 / 255, Mean: []float32{0.5}, Std: []float32{2}}}
	for i := range 7 {
		for j := range 15 {
			train.X = append(train.X, float32(i*15+j)*0.37-3)
		}
		train.Y = append(train.Y, i%3)
		train.Groups = append(train.Groups, int32(i%2))
	}
	train.X[0], train.X[1], train.X[2], train.X[3] = float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32
	test := &Dataset{Name: "u", Shape: []int{3, 5}, Classes: train.Classes, X: make([]float32, 2*15), Y: []int{2, 0}}
	test.X[29] = 1.5
	return TrainTest{Train: train, Test: test}
}

func writeShared(t *testing.T, tt TrainTest) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data")
	var order []int32
	if tt.Train.Len() == 7 {
		order = []int32{6, 5, 4, 3, 2, 1, 0}
	}
	if err := WriteShared(path, tt, order); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b
}

// What OpenShared maps is what WriteShared wrote, bit for bit, with every
// field of both sets; X is aligned and read-only.
func TestSharedRoundTrip(t *testing.T) {
	tt := sharedSample()
	path, b := writeShared(t, tt)
	if len(b)%sharedAlign != 0 {
		t.Errorf("file of %d bytes, want a multiple of %d", len(b), sharedAlign)
	}
	s, err := OpenShared(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range [][2]*Dataset{{tt.Train, s.Train}, {tt.Test, s.Test}} {
		want, got := p[0], p[1]
		if len(got.X) != len(want.X) {
			t.Fatalf("%s: %d values, want %d", want.Name, len(got.X), len(want.X))
		}
		for i := range want.Len() {
			for j, v := range want.Row(i) {
				if g := got.Row(i)[j]; math.Float32bits(g) != math.Float32bits(v) {
					t.Fatalf("%s: sample %d value %d = %v, want %v", want.Name, i, j, g, v)
				}
			}
		}
		g, w := *got, *want
		g.X, w.X, g.Rows, g.stream = nil, nil, nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: %+v, want %+v", want.Name, g, w)
		}
		if err := got.Validate(); err != nil {
			t.Error(err)
		}
	}
	if uintptr(unsafe.Pointer(&s.Train.X[0]))%4 != 0 {
		t.Error("X is not aligned")
	}
	// Without a test set.
	path2, _ := writeShared(t, TrainTest{Train: tt.Train})
	s2, err := OpenShared(path2)
	if err != nil || s2.Test != nil || s2.Train.Len() != 7 {
		t.Fatalf("train only: %v, %+v", err, s2)
	}
	s2.Close()
}

// With a row order, each sample's values are where the order put them,
// and every sample keeps its index: Row and a batcher read what they read
// from the dataset written; the order must be a permutation.
func TestSharedRowOrder(t *testing.T) {
	tt := sharedSample()
	order := []int32{3, 6, 0, 5, 1, 4, 2}
	path := filepath.Join(t.TempDir(), "data")
	if err := WriteShared(path, tt, order); err != nil {
		t.Fatal(err)
	}
	s, err := OpenShared(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := tt.Train.RowLen()
	for k, i := range order {
		if got, want := s.Train.X[k*l:(k+1)*l], tt.Train.Row(int(i)); !reflect.DeepEqual(got, want) {
			t.Errorf("stored row %d = %v, want sample %d's %v", k, got, i, want)
		}
	}
	idx := []int32{6, 2, 2, 0, 5}
	read := func(d *Dataset) ([]float32, []int) {
		x, y := make([]float32, len(idx)*l), make([]int, len(idx))
		NewBatcher(d, idx, nil, nil).Next(x, y)
		return x, y
	}
	gx, gy := read(s.Train)
	wx, wy := read(tt.Train)
	if !reflect.DeepEqual(gx, wx) || !reflect.DeepEqual(gy, wy) {
		t.Errorf("a batch of %v: %v %v, want %v %v", idx, gx, gy, wx, wy)
	}
	// Written again without an order: index order.
	again := filepath.Join(t.TempDir(), "again")
	if err := WriteShared(again, s.TrainTest, nil); err != nil {
		t.Fatal(err)
	}
	s2, err := OpenShared(again)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for i := range tt.Train.Len() {
		if !reflect.DeepEqual(s2.Train.Row(i), tt.Train.Row(i)) {
			t.Errorf("written again: sample %d differs", i)
		}
	}
	for _, bad := range [][]int32{{0, 1}, {0, 1, 2, 3, 4, 5, 5}, {0, 1, 2, 3, 4, 5, 7}, {-1, 1, 2, 3, 4, 5, 6}} {
		if err := WriteShared(filepath.Join(t.TempDir(), "x"), tt, bad); err == nil || !strings.Contains(err.Error(), "the row order") {
			t.Errorf("order %v: %v", bad, err)
		}
	}
}

// Every truncation, and a flipped byte anywhere in the file, is an error
// saying what is wrong, never a crash nor a dataset.
func TestSharedRefusesDamage(t *testing.T) {
	path, good := writeShared(t, sharedSample())
	bad := filepath.Join(t.TempDir(), "bad")
	open := func(b []byte) error {
		if err := os.WriteFile(bad, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := OpenShared(bad)
		if err == nil {
			s.Close()
		}
		return err
	}
	for n := range len(good) {
		err := open(good[:n])
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Fatalf("truncated to %d of %d bytes: %v", n, len(good), err)
		}
	}
	if err := open(good[:len(good)-1]); !strings.Contains(err.Error(), "truncated") {
		t.Errorf("one byte short: %v, want it named truncated", err)
	}
	for k := range len(good) {
		b := append([]byte(nil), good...)
		b[k] ^= 0x10
		err := open(b)
		if err == nil {
			// Padding between sections is covered by no checksum; it is
			// never read.
			if !padding(t, path, int64(k)) {
				t.Fatalf("byte %d flipped: accepted", k)
			}
			continue
		}
		if !strings.Contains(err.Error(), "data: "+bad+": ") {
			t.Fatalf("byte %d flipped: %v", k, err)
		}
	}
	b := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(b[16:], 2)
	if err := open(b); err == nil || !strings.Contains(err.Error(), "format version 2") {
		t.Errorf("version 2: %v", err)
	}
	if err := open([]byte("PK\x03\x04 a zip file, not a dataset: some more bytes")); err == nil || !strings.Contains(err.Error(), "not a shared dataset file") {
		t.Errorf("a zip: %v", err)
	}
}

// A label outside the classes (written by a buggy or hostile writer, with
// its checksum right) is refused.
func TestSharedRefusesLabelsOutOfRange(t *testing.T) {
	tt := sharedSample()
	tt.Train.Y[4] = 3
	path, _ := writeShared(t, tt)
	if _, err := OpenShared(path); err == nil || !strings.Contains(err.Error(), "sample 4 has label 3 outside [0, 3)") {
		t.Errorf("label 3 of 3 classes: %v", err)
	}
	tt = sharedSample()
	tt.Train.Groups[1] = -1
	path, _ = writeShared(t, tt)
	if _, err := OpenShared(path); err == nil || !strings.Contains(err.Error(), "sample 1 has group -1") {
		t.Errorf("group -1: %v", err)
	}
}

// padding says whether byte k of the shared file at path lies between
// sections (or after the last), where nothing reads.
func padding(t *testing.T, path string, k int64) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hlen := int64(binary.LittleEndian.Uint32(b[20:]))
	if k < sharedPrefix+hlen {
		return false
	}
	s, err := OpenShared(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var h sharedHeader
	if err := json.Unmarshal(b[sharedPrefix:sharedPrefix+hlen], &h); err != nil {
		t.Fatal(err)
	}
	for _, sec := range h.sections() {
		if k >= sec.Offset && k < sec.Offset+sec.Bytes {
			return false
		}
	}
	return true
}
