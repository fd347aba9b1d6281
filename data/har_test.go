package data

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// writeHAR writes a UCI HAR layout with d features per row: train rows of
// subjects 1, 3, 1, 5 and test rows of subjects 2, 2.
func writeHAR(t *testing.T, dir string, d int) {
	t.Helper()
	write := func(split string, subjects, labels []int) {
		var x, y, s strings.Builder
		for i := range subjects {
			for j := range d {
				fmt.Fprintf(&x, "  %.7e", float64(i)-0.25*float64(j))
			}
			x.WriteString("\n")
			fmt.Fprintf(&y, "%d\n", labels[i])
			fmt.Fprintf(&s, "%d\n", subjects[i])
		}
		writeFile(t, filepath.Join(dir, split, "X_"+split+".txt"), []byte(x.String()))
		writeFile(t, filepath.Join(dir, split, "y_"+split+".txt"), []byte(y.String()))
		writeFile(t, filepath.Join(dir, split, "subject_"+split+".txt"), []byte(s.String()))
	}
	write("train", []int{1, 3, 1, 5}, []int{1, 6, 2, 4})
	write("test", []int{2, 2}, []int{5, 3})
	writeFile(t, filepath.Join(dir, "activity_labels.txt"), []byte(
		"1 WALKING\n2 WALKING_UPSTAIRS\n3 WALKING_DOWNSTAIRS\n4 SITTING\n5 STANDING\n6 LAYING\n"))
}

func TestLoadHAR(t *testing.T) {
	root := t.TempDir()
	writeHAR(t, filepath.Join(root, "UCI HAR Dataset"), 7)
	tt, err := LoadHAR(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*Dataset{tt.Train, tt.Test} {
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	tr := tt.Train
	if tr.Len() != 4 || tt.Test.Len() != 2 || tr.RowLen() != 7 {
		t.Fatalf("sizes %d/%d, row %d", tr.Len(), tt.Test.Len(), tr.RowLen())
	}
	if fmt.Sprint(tr.Y) != "[0 5 1 3]" || tr.Classes[5] != "LAYING" {
		t.Errorf("labels %v classes %v", tr.Y, tr.Classes)
	}
	if fmt.Sprint(tr.Groups) != "[0 1 0 2]" || fmt.Sprint(tr.GroupNames) != "[subject 1 subject 3 subject 5]" {
		t.Errorf("groups %v names %v", tr.Groups, tr.GroupNames)
	}
	if got := tr.Row(2)[3]; math.Abs(float64(got)-1.25) > 1e-6 {
		t.Errorf("value %v, want 1.25", got)
	}
	p, err := NewPartition(tr, PartitionConfig{Method: Natural})
	if err != nil || p.NumClients() != 3 {
		t.Fatalf("natural partition: %v", err)
	}
	all, err := Concat(tt.Train, tt.Test)
	if err != nil || all.Len() != 6 || len(all.GroupNames) != 4 || all.Groups[5] != 3 {
		t.Errorf("concat: %v %v", err, all)
	}
}

func TestHARErrors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		dir := t.TempDir()
		_, err := LoadHAR(dir)
		wantNotFound(t, err, filepath.Join(dir, "train", "X_train.txt"), "UCI HAR Dataset.zip")
	})
	cases := []struct {
		file, content string
		frags         []string
	}{
		{"train/X_train.txt", "1 2 3 4 5 6 7\n1 2 x 4 5 6 7\n", []string{"line 2", `"x" is not a finite number`}},
		{"train/X_train.txt", "1 2 3 4 5 6 7\n1 2 3\n", []string{"line 2", "3 fields; earlier lines have 7"}},
		{"train/X_train.txt", "1 2 3 4 5 6 NaN\n", []string{"line 1", "NaN"}},
		{"train/y_train.txt", "1\n7\n2\n3\n", []string{"line 2", "activity 7 outside [1, 6]"}},
		{"train/y_train.txt", "1\n2\n3\n", []string{"3 labels for 4 feature rows"}},
		{"test/subject_test.txt", "2\n0\n", []string{"line 2", "subject 0"}},
		{"test/subject_test.txt", "2\n2 2\n", []string{"line 2", "more than one field"}},
		{"activity_labels.txt", "1 WALKING\n3 SITTING\n", []string{"line 2", "expected 2"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			dir := t.TempDir()
			writeHAR(t, dir, 7)
			p := filepath.Join(dir, filepath.FromSlash(c.file))
			writeFile(t, p, []byte(c.content))
			_, err := LoadHAR(dir)
			wantFormatError(t, err, p, c.frags...)
		})
	}
}
