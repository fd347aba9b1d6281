package data

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// idxBytes encodes an unsigned-byte IDX file.
func idxBytes(dims []int, data []byte) []byte {
	b := []byte{0, 0, idxUbyte, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	return append(b, data...)
}

// fakeImages makes n h×w images whose pixel (i, p) is (7i + p) mod 256.
func fakeImages(n, h, w int) []byte {
	px := make([]byte, n*h*w)
	for i := range n {
		for p := range h * w {
			px[i*h*w+p] = byte((7*i + p) % 256)
		}
	}
	return px
}

func TestReadIDXRoundTrip(t *testing.T) {
	data := fakeImages(3, 4, 5)
	raw := idxBytes([]int{3, 4, 5}, data)
	for name, b := range map[string][]byte{"raw": raw, "gzip": gzipBytes(t, raw)} {
		t.Run(name, func(t *testing.T) {
			got, err := ReadIDX(bytes.NewReader(b), "f")
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Dims) != 3 || got.Dims[0] != 3 || got.Dims[1] != 4 || got.Dims[2] != 5 {
				t.Errorf("dims %v", got.Dims)
			}
			if !bytes.Equal(got.Data, data) {
				t.Error("data differs")
			}
		})
	}
}

func TestReadIDXCorrupt(t *testing.T) {
	good := idxBytes([]int{2, 3}, []byte{1, 2, 3, 4, 5, 6})
	huge := idxBytes([]int{1 << 30, 1 << 30, 1 << 30}, nil)
	gz := gzipBytes(t, good)
	badCRC := bytes.Clone(gz)
	badCRC[len(badCRC)-8] ^= 0xff
	cases := []struct {
		name   string
		in     []byte
		frags  []string
		offset int64
	}{
		{"empty", nil, []string{"truncated header"}, 0},
		{"short magic", []byte{0, 0}, []string{"truncated header", "2 of 4"}, 2},
		{"bad magic", append([]byte{0x12, 0x34}, good[2:]...), []string{"bad magic", "not an IDX file"}, 0},
		{"float type", append([]byte{0, 0, 0x0d}, good[3:]...), []string{"element type 0x0d"}, 2},
		{"zero dims", []byte{0, 0, 8, 0}, []string{"0 dimensions"}, 3},
		{"truncated dims", good[:9], []string{"truncated header", "5 of 8 dimension bytes"}, 9},
		{"truncated data", good[:len(good)-2], []string{"truncated", "4 of 6 declared data bytes"}, 16},
		{"trailing data", append(bytes.Clone(good), 9), []string{"trailing data"}, 18},
		{"too large", huge, []string{"declare more than"}, 8},
		{"truncated gzip", gz[:len(gz)-12], []string{"decompressed"}, -2},
		{"bad gzip checksum", badCRC, []string{"bad end of stream", "checksum"}, -2},
		{"bad gzip header", []byte{0x1f, 0x8b, 0, 0}, []string{"bad gzip header"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadIDX(bytes.NewReader(c.in), "images.idx")
			fe := wantFormatError(t, err, "images.idx", c.frags...)
			if c.offset >= 0 && fe.Offset != c.offset {
				t.Errorf("offset %d, want %d (%v)", fe.Offset, c.offset, err)
			}
		})
	}
}

// writeMNISTDir writes a small MNIST-format directory (images n×28×28).
// gz selects gzip; dot selects the "train-images.idx3-ubyte" naming.
func writeMNISTDir(t *testing.T, dir string, nTrain, nTest int, gz, dot bool) {
	t.Helper()
	put := func(stem, kind string, b []byte) {
		name := stem + "-" + kind + "-ubyte"
		if dot {
			name = stem + "." + kind + "-ubyte"
		}
		if gz {
			name += ".gz"
			b = gzipBytes(t, b)
		}
		writeFile(t, filepath.Join(dir, name), b)
	}
	for _, s := range []struct {
		stem string
		n    int
	}{{"train", nTrain}, {"t10k", nTest}} {
		labels := make([]byte, s.n)
		for i := range labels {
			labels[i] = byte(i % 10)
		}
		put(s.stem+"-images", "idx3", idxBytes([]int{s.n, 28, 28}, fakeImages(s.n, 28, 28)))
		put(s.stem+"-labels", "idx1", idxBytes([]int{s.n}, labels))
	}
}

func TestLoadMNISTDirectory(t *testing.T) {
	for _, v := range []struct {
		name    string
		gz, dot bool
	}{{"raw", false, false}, {"gzip", true, false}, {"dot-raw", false, true}, {"dot-gzip", true, true}} {
		t.Run(v.name, func(t *testing.T) {
			dir := t.TempDir()
			writeMNISTDir(t, dir, 12, 5, v.gz, v.dot)
			tt, err := LoadMNIST(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.Train.Len() != 12 || tt.Test.Len() != 5 {
				t.Fatalf("sizes %d/%d", tt.Train.Len(), tt.Test.Len())
			}
			for _, d := range []*Dataset{tt.Train, tt.Test} {
				if err := d.Validate(); err != nil {
					t.Fatal(err)
				}
				if got := d.Shape; len(got) != 3 || got[0] != 1 || got[1] != 28 || got[2] != 28 {
					t.Errorf("shape %v", got)
				}
			}
			// Sample 3, pixel 10 is byte (21+10) = 31; labels i%10.
			want := float32((31.0/255 - 0.1307) / 0.3081)
			if got := tt.Train.Row(3)[10]; math.Abs(float64(got-want)) > 1e-6 {
				t.Errorf("normalized pixel %v, want %v", got, want)
			}
			if tt.Train.Y[11] != 1 || tt.Train.NumClasses() != 10 {
				t.Errorf("label %d, classes %d", tt.Train.Y[11], tt.Train.NumClasses())
			}
		})
	}
}

func TestLoadMNISTErrors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		dir := t.TempDir()
		_, err := LoadMNIST(dir)
		wantNotFound(t, err, filepath.Join(dir, "train-images-idx3-ubyte.gz"), "data.MNIST()")
		_, err = LoadFashionMNIST(dir)
		wantNotFound(t, err, filepath.Join(dir, "train-images-idx3-ubyte"), "apt-get install dataset-fashion-mnist")
	})
	corrupt := func(t *testing.T, file string, b []byte, frags ...string) *FormatError {
		dir := t.TempDir()
		writeMNISTDir(t, dir, 4, 3, false, false)
		writeFile(t, filepath.Join(dir, file), b)
		_, err := LoadMNIST(dir)
		return wantFormatError(t, err, filepath.Join(dir, file), frags...)
	}
	t.Run("label out of range", func(t *testing.T) {
		fe := corrupt(t, "train-labels-idx1-ubyte", idxBytes([]int{4}, []byte{1, 2, 10, 3}), "label 10 of sample 2")
		if fe.Offset != 10 {
			t.Errorf("offset %d, want 10", fe.Offset)
		}
	})
	t.Run("count mismatch", func(t *testing.T) {
		corrupt(t, "t10k-labels-idx1-ubyte", idxBytes([]int{2}, []byte{1, 2}), "2 labels for 3 images")
	})
	t.Run("labels with two dims", func(t *testing.T) {
		corrupt(t, "train-labels-idx1-ubyte", idxBytes([]int{2, 2}, []byte{1, 2, 3, 4}), "expected 1")
	})
	t.Run("images with one dim", func(t *testing.T) {
		corrupt(t, "train-images-idx3-ubyte", idxBytes([]int{4}, []byte{1, 2, 3, 4}), "expected at least 2")
	})
	t.Run("images with a zero dimension", func(t *testing.T) {
		corrupt(t, "train-images-idx3-ubyte", idxBytes([]int{4, 28, 0}, nil), "a sample dimension is zero")
	})
	t.Run("truncated images", func(t *testing.T) {
		b := idxBytes([]int{4, 28, 28}, fakeImages(4, 28, 28))
		fe := corrupt(t, "train-images-idx3-ubyte", b[:1000], "truncated", "984 of 3136 declared pixel bytes")
		if fe.Offset != 1000 {
			t.Errorf("offset %d, want 1000", fe.Offset)
		}
	})
	t.Run("truncated gzip images", func(t *testing.T) {
		dir := t.TempDir()
		writeMNISTDir(t, dir, 4, 3, true, false)
		p := filepath.Join(dir, "train-images-idx3-ubyte.gz")
		b, _ := os.ReadFile(p)
		writeFile(t, p, b[:len(b)/2])
		_, err := LoadMNIST(dir)
		wantFormatError(t, err, p, "decompressed")
	})
}

// TestFashionMNISTDebian loads the real Debian package's files; CI installs
// the package (.ci/run). It also checks the normalization constants are the
// training set's statistics.
func TestFashionMNISTDebian(t *testing.T) {
	if _, err := os.Stat(filepath.Join(FashionMNISTDir, "train-images-idx3-ubyte.gz")); err != nil {
		t.Skip("Fashion-MNIST not installed; run: apt-get install dataset-fashion-mnist")
	}
	tt, err := LoadFashionMNIST("")
	if err != nil {
		t.Fatal(err)
	}
	if tt.Train.Len() != 60000 || tt.Test.Len() != 10000 {
		t.Fatalf("sizes %d/%d, want 60000/10000", tt.Train.Len(), tt.Test.Len())
	}
	if tt.Train.Classes[9] != "Ankle boot" {
		t.Errorf("class 9 %q", tt.Train.Classes[9])
	}
	for c, n := range tt.Train.ClassCounts() { // Fashion-MNIST is balanced
		if n != 6000 {
			t.Errorf("class %d has %d training samples, want 6000", c, n)
		}
	}
	mean, std := moments(tt.Train.X)
	if math.Abs(mean) > 1e-3 || math.Abs(std-1) > 1e-3 {
		t.Errorf("normalized training pixels have mean %v, std %v; want 0, 1", mean, std)
	}
	if !strings.Contains(tt.Train.Norm.Desc, "0.2860") {
		t.Errorf("normalization %q", tt.Train.Norm.Desc)
	}
}

func moments(x []float32) (mean, std float64) {
	var s, ss float64
	for _, v := range x {
		s += float64(v)
		ss += float64(v) * float64(v)
	}
	n := float64(len(x))
	mean = s / n
	return mean, math.Sqrt(ss/n - mean*mean)
}
