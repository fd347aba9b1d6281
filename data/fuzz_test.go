package data

import (
	"bytes"
	"testing"
)

// Fuzz targets for every decoder of untrusted bytes (DESIGN.md, "Tests";
// ): no input may panic, and whatever decodes must be a
// valid dataset. Seed corpora live in testdata/fuzz/<FuzzName>/.

func FuzzIDX(f *testing.F) {
	f.Add(idxBytes([]int{2, 2, 2}, []byte{0, 1, 2, 3, 4, 5, 6, 7}), idxBytes([]int{2}, []byte{3, 9}))
	f.Add([]byte{0, 0, 8, 1, 0, 0, 0, 1, 5}, []byte{0, 0, 8, 1, 0, 0, 0, 1, 5})
	f.Fuzz(func(t *testing.T, images, labels []byte) {
		if idx, err := ReadIDX(bytes.NewReader(images), "images"); err == nil {
			n := 1
			for _, d := range idx.Dims {
				n *= d
			}
			if n != len(idx.Data) {
				t.Fatalf("dims %v but %d bytes", idx.Dims, len(idx.Data))
			}
		}
		d, err := decodeIDXPair(bytes.NewReader(images), bytes.NewReader(labels), "images", "labels", mnistFamily(), "fuzz", nil, false)
		if err == nil {
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
		}
		// The streaming decode of a shard (every other sample) refuses
		// what the full decode refuses, with its error, and otherwise is
		// the full decode compacted.
		var keep []int32
		s, serr := decodeIDXPair(bytes.NewReader(images), bytes.NewReader(labels), "images", "labels", mnistFamily(), "fuzz",
			func(l *Dataset) ([]int32, error) {
				for i := 0; i < l.Len(); i += 2 {
					keep = append(keep, int32(i))
				}
				return keep, nil
			}, true)
		switch {
		case (err == nil) != (serr == nil) || err != nil && err.Error() != serr.Error():
			t.Fatalf("full decode: %v; shard decode: %v", err, serr)
		case err == nil && !sameData(s, d.Only(keep)):
			t.Fatal("the shard decode differs from the full decode compacted")
		}
	})
}

func FuzzCIFAR(f *testing.F) {
	f.Add(cifarBytes([]byte{3}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, err := ReadCIFAR10(bytes.NewReader(b), "batch.bin"); err == nil {
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzLEAF(f *testing.F) {
	f.Add([]byte(`{"users": ["a"], "num_samples": [2], "user_data": {"a": {"x": [[0.1, 0.2], [0.3, 0.4]], "y": [1, 0]}}}`), false)
	f.Add([]byte(`{"user_data": {"w": {"x": [[1]], "y": [61]}}, "hierarchies": []}`), true)
	f.Fuzz(func(t *testing.T, b []byte, femnist bool) {
		opt := LEAFOptions{}
		if femnist {
			opt = FEMNISTOptions()
		}
		if d, err := ReadLEAF(bytes.NewReader(b), "f.json", opt); err == nil {
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzCSV(f *testing.F) {
	f.Add([]byte("a,b,label\n1,2,x\n3,4,y\n"), true, -1, false)
	f.Add([]byte("1;2;3\n4;5;0\n"), false, 0, true)
	f.Fuzz(func(t *testing.T, b []byte, header bool, labelIndex int, z bool) {
		opt := CSVOptions{Header: header, LabelIndex: labelIndex, ZScore: z}
		if d, err := ReadCSV(bytes.NewReader(b), "t.csv", opt); err == nil {
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzText covers the line-oriented parsers of UCI HAR and PAMAP2.
func FuzzText(f *testing.F) {
	f.Add([]byte("  1.0e-001 -2.5\n 3 4\n"))
	f.Add([]byte("0.01 1 NaN 30.0 1 2 3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if xs, cols, rows, err := readFloatRows(bytes.NewReader(b), "X.txt"); err == nil && len(xs) != cols*rows {
			t.Fatalf("%d values for %d×%d", len(xs), rows, cols)
		}
		readIntColumn(bytes.NewReader(b), "y.txt")
		if rows, acts, err := parsePAMAP(bytes.NewReader(b), "subject101.dat"); err == nil {
			if len(rows) != len(acts)*pamapChannels {
				t.Fatalf("%d values for %d rows", len(rows), len(acts))
			}
			d := &Dataset{Name: "p", Shape: []int{1, pamapChannels}}
			for _, a := range pamapActivities {
				d.Classes = append(d.Classes, a.name)
			}
			var s, q, n [pamapChannels]float64
			fillSubjectMeans(rows, &s, &q, &n)
			appendWindows(d, rows, acts, 1, 1, 0)
		}
	})
}
