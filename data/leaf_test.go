package data

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// leafJSON encodes a LEAF file; user u gets n[u] samples of rowLen values.
func leafJSON(t *testing.T, users []string, n []int, rowLen int, label func(u, i int) int) []byte {
	t.Helper()
	type ud struct {
		X [][]float32 `json:"x"`
		Y []int       `json:"y"`
	}
	data := map[string]ud{}
	for u, name := range users {
		var v ud
		for i := range n[u] {
			row := make([]float32, rowLen)
			for j := range row {
				row[j] = float32(u) + float32(i)/10 + float32(j)/1000
			}
			v.X = append(v.X, row)
			v.Y = append(v.Y, label(u, i))
		}
		data[name] = v
	}
	b, err := json.Marshal(map[string]any{"users": users, "num_samples": n, "user_data": data,
		"hierarchies": []string{}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLoadFEMNIST(t *testing.T) {
	dir := t.TempDir()
	lbl := func(u, i int) int { return (u*7 + i) % 62 }
	writeFile(t, filepath.Join(dir, "train", "b.json"), leafJSON(t, []string{"f0003_10", "f0001_22"}, []int{3, 2}, 784, lbl))
	writeFile(t, filepath.Join(dir, "train", "a.json"), leafJSON(t, []string{"f0007_01"}, []int{4}, 784, lbl))
	writeFile(t, filepath.Join(dir, "test", "a.json"), leafJSON(t, []string{"f0007_01", "f0003_10"}, []int{1, 1}, 784, lbl))
	tt, err := LoadFEMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	tr := tt.Train
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	if tr.Len() != 9 || tt.Test.Len() != 2 || tr.NumClasses() != 62 || tr.Classes[10] != "A" || tr.Classes[61] != "z" {
		t.Fatalf("sizes %d/%d classes %d", tr.Len(), tt.Test.Len(), tr.NumClasses())
	}
	// a.json first (files in sorted order), then b.json's users in the order
	// of user_data (json.Marshal sorts map keys); each sample keeps its writer.
	if got := strings.Join(tr.GroupNames, ","); got != "f0007_01,f0001_22,f0003_10" {
		t.Errorf("writers %s", got)
	}
	p, err := NewPartition(tr, PartitionConfig{Method: Natural})
	if err != nil {
		t.Fatal(err)
	}
	if sizes := p.Sizes(); sizes[0] != 4 || sizes[1] != 2 || sizes[2] != 3 {
		t.Errorf("clients by writer: %v", sizes)
	}
	if tr.Row(5)[2] != float32(1)+0.1+0.002 || tr.Y[5] != lbl(1, 1) || tr.Groups[5] != 1 {
		// sample 5 is b.json's f0001_22 (u=1), its sample 1
		t.Errorf("sample 5: %v label %d", tr.Row(5)[:3], tr.Y[5])
	}
	// all_data only: a training set without a test set.
	dir2 := t.TempDir()
	writeFile(t, filepath.Join(dir2, "all_data", "x.json"), leafJSON(t, []string{"w"}, []int{2}, 784, lbl))
	if tt, err := LoadFEMNIST(dir2); err != nil || tt.Train.Len() != 2 || tt.Test != nil {
		t.Errorf("all_data: %v", err)
	}
}

func TestReadLEAFGeneric(t *testing.T) {
	b := leafJSON(t, []string{"u1", "u2"}, []int{2, 3}, 5, func(u, i int) int { return u + i })
	d, err := ReadLEAF(strings.NewReader(string(b)), "s.json", LEAFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.RowLen() != 5 || d.NumClasses() != 4 || d.Len() != 5 {
		t.Errorf("row %d classes %d len %d", d.RowLen(), d.NumClasses(), d.Len())
	}
	gz := gzipBytes(t, b)
	if _, err := ReadLEAF(strings.NewReader(string(gz)), "s.json.gz", LEAFOptions{}); err != nil {
		t.Errorf("gzip: %v", err)
	}
}

func TestLEAFErrors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		dir := t.TempDir()
		_, err := LoadFEMNIST(dir)
		wantNotFound(t, err, filepath.Join(dir, "all_data", "*.json"), "preprocess.sh")
	})
	good := `{"users": ["a"], "num_samples": [2], "user_data": {"a": {"x": [[0.1, 0.2], [0.3, 0.4]], "y": [1, 0]}}}`
	cases := []struct {
		name, in string
		frags    []string
	}{
		{"truncated", good[:60], []string{"truncated JSON"}},
		{"not an object", `[1, 2]`, []string{"top level", "expected"}},
		{"syntax", strings.Replace(good, "0.2]", "0.2}", 1), []string{"bad data of user"}},
		{"num_samples", strings.Replace(good, "[2]", "[3]", 1), []string{"num_samples says 3, user_data holds 2"}},
		{"users", strings.Replace(good, `["a"]`, `["a", "b"]`, 1), []string{"2 users but 1 num_samples"}},
		{"unlisted user", strings.Replace(good, `["a"], "num_samples": [2]`, `[], "num_samples": []`, 1), []string{"user_data holds 1 users, users lists 0"}},
		{"row length", strings.Replace(good, "[0.3, 0.4]", "[0.3]", 1), []string{`sample 1 has 1 values; expected 2`}},
		{"x vs y", strings.Replace(good, "[1, 0]", "[1]", 1), []string{"2 samples in x but 1 labels"}},
		{"label", strings.Replace(good, "[1, 0]", "[1, -3]", 1), []string{"label -3"}},
		{"huge label", strings.Replace(good, "[1, 0]", "[1, 99999999]", 1), []string{"label 99999999"}},
		{"float label", strings.Replace(good, "[1, 0]", "[1, 0.5]", 1), []string{"bad data of user"}},
		{"overflow", strings.Replace(good, "0.3", "1e99", 1), []string{"bad data of user"}},
		{"duplicate user", strings.Replace(good, `}}}`, `}, "a": {"x": [], "y": []}}}`, 1), []string{`user "a" appears twice`}},
		{"trailing", good + " {}", []string{"trailing data"}},
		{"empty", `{"user_data": {}}`, []string{"no samples"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadLEAF(strings.NewReader(c.in), "f.json", LEAFOptions{})
			fe := wantFormatError(t, err, "f.json", c.frags...)
			if c.name != "empty" && fe.Offset < 0 {
				t.Errorf("no offset in %v", err)
			}
		})
	}
	_, err := ReadLEAF(strings.NewReader(good), "f.json", LEAFOptions{Shape: []int{3}})
	wantFormatError(t, err, "f.json", "sample 0 has 2 values; expected 3")
	_, err = ReadLEAF(strings.NewReader(good), "f.json", LEAFOptions{Classes: []string{"only"}})
	wantFormatError(t, err, "f.json", "label 1 outside [0, 1)")
}
