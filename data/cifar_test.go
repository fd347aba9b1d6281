package data

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"testing"
)

// cifarBytes encodes n records; record i has label labels[i] and pixel p of
// channel c equal to (i + 3c + p) mod 256.
func cifarBytes(labels []byte) []byte {
	var b []byte
	for i, l := range labels {
		b = append(b, l)
		for c := range 3 {
			for p := range 1024 {
				b = append(b, byte((i+3*c+p)%256))
			}
		}
	}
	return b
}

func writeCIFARDir(t *testing.T, dir string, gz bool) {
	t.Helper()
	put := func(stem string, labels []byte) {
		b, name := cifarBytes(labels), stem+".bin"
		if gz {
			b, name = gzipBytes(t, b), name+".gz"
		}
		writeFile(t, filepath.Join(dir, name), b)
	}
	for i := 1; i <= 5; i++ {
		put(fmt.Sprintf("data_batch_%d", i), []byte{byte(i), 9, 0})
	}
	put("test_batch", []byte{4, 2})
}

func TestLoadCIFAR10(t *testing.T) {
	for _, gz := range []bool{false, true} {
		t.Run(fmt.Sprint("gzip=", gz), func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "cifar-10-batches-bin")
			writeCIFARDir(t, dir, gz)
			writeFile(t, filepath.Join(dir, "batches.meta.txt"),
				[]byte("a0\na1\na2\na3\na4\na5\na6\na7\na8\na9\n\n"))
			tt, err := LoadCIFAR10(root) // the parent directory also works
			if err != nil {
				t.Fatal(err)
			}
			if tt.Train.Len() != 15 || tt.Test.Len() != 2 {
				t.Fatalf("sizes %d/%d", tt.Train.Len(), tt.Test.Len())
			}
			for _, d := range []*Dataset{tt.Train, tt.Test} {
				if err := d.Validate(); err != nil {
					t.Fatal(err)
				}
			}
			if tt.Train.Y[3] != 2 || tt.Train.Y[4] != 9 || tt.Test.Y[0] != 4 || tt.Train.Classes[3] != "a3" {
				t.Errorf("labels %v %v, classes %v", tt.Train.Y, tt.Test.Y, tt.Train.Classes)
			}
			// Record 1 of batch 2 (sample 4): channel 2 (blue), pixel 100 is (1+6+100) = 107.
			want := (107.0/255 - 0.4465) / 0.2616
			if got := tt.Train.Row(4)[2*1024+100]; math.Abs(float64(got)-want) > 1e-5 {
				t.Errorf("blue pixel %v, want %v", got, want)
			}
		})
	}
}

func TestCIFAR10Errors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		dir := t.TempDir()
		_, err := LoadCIFAR10(dir)
		wantNotFound(t, err, filepath.Join(dir, "data_batch_1.bin"), "cifar-10-binary.tar.gz")
	})
	good := cifarBytes([]byte{1, 2, 3})
	cases := []struct {
		name   string
		in     []byte
		frags  []string
		offset int64
	}{
		{"empty", nil, []string{"empty file"}, 0},
		{"truncated record", good[:2*3073+100], []string{"truncated record 2", "100 of 3073"}, 2*3073 + 100},
		{"bad label", cifarBytes([]byte{1, 10}), []string{"record 1: label 10"}, 3073},
		{"truncated gzip", gzipBytes(t, good)[:200], []string{"decompressed"}, -2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadCIFAR10(bytes.NewReader(c.in), "data_batch_1.bin")
			fe := wantFormatError(t, err, "data_batch_1.bin", c.frags...)
			if c.offset >= 0 && fe.Offset != c.offset {
				t.Errorf("offset %d, want %d", fe.Offset, c.offset)
			}
		})
	}
	t.Run("in a directory", func(t *testing.T) {
		dir := t.TempDir()
		writeCIFARDir(t, dir, false)
		p := filepath.Join(dir, "data_batch_3.bin")
		writeFile(t, p, good[:5000])
		_, err := LoadCIFAR10(dir)
		wantFormatError(t, err, p, "truncated record 1")
	})
	t.Run("bad meta", func(t *testing.T) {
		dir := t.TempDir()
		writeCIFARDir(t, dir, false)
		p := filepath.Join(dir, "batches.meta.txt")
		writeFile(t, p, []byte("cat\ndog\n"))
		_, err := LoadCIFAR10(dir)
		wantFormatError(t, err, p, "2 class names; expected 10")
	})
}
