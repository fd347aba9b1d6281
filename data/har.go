package data

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// UCI HAR (Human Activity Recognition Using Smartphones, Anguita et al.
// 2013): per split, X_<split>.txt holds 561 features per line, y_<split>.txt
// the activity (1..6) and subject_<split>.txt the volunteer (1..30). The
// features are used as provided: the authors already scaled them to [-1, 1].

const harHint = "download https://archive.ics.uci.edu/dataset/240 (UCI HAR Dataset.zip) and unzip it; " +
	"pass the \"UCI HAR Dataset\" directory or its parent"

func harClasses() []string {
	return []string{"WALKING", "WALKING_UPSTAIRS", "WALKING_DOWNSTAIRS", "SITTING", "STANDING", "LAYING"}
}

// LoadHAR loads UCI HAR's train and test sets from dir (the "UCI HAR
// Dataset" directory, or its parent). Labels 1..6 become 0..5, with names
// from activity_labels.txt when present; each sample's subject is its group,
// for the natural partition. Train and test hold different subjects; use
// Concat to partition all 30.
func LoadHAR(dir string) (TrainTest, error) {
	if fileExists(filepath.Join(dir, "UCI HAR Dataset", "train", "X_train.txt")) {
		dir = filepath.Join(dir, "UCI HAR Dataset")
	}
	classes := harClasses()
	if p := filepath.Join(dir, "activity_labels.txt"); fileExists(p) {
		var err error
		if classes, err = readActivityLabels(p); err != nil {
			return TrainTest{}, err
		}
	}
	var out TrainTest
	for _, split := range []string{"train", "test"} {
		var paths [3]string
		for i, stem := range []string{"X_", "y_", "subject_"} {
			p, err := firstExisting("UCI HAR", harHint, filepath.Join(dir, split, stem+split+".txt"))
			if err != nil {
				return TrainTest{}, err
			}
			paths[i] = p
		}
		d, err := loadHARSplit(paths[0], paths[1], paths[2], classes)
		if err != nil {
			return TrainTest{}, err
		}
		d.Name = "HAR/" + split
		if split == "train" {
			out.Train = d
		} else {
			out.Test = d
		}
	}
	if out.Train.RowLen() != out.Test.RowLen() {
		return TrainTest{}, fmt.Errorf("data: UCI HAR: train rows have %d features, test rows %d", out.Train.RowLen(), out.Test.RowLen())
	}
	return out, nil
}

func loadHARSplit(xPath, yPath, sPath string, classes []string) (*Dataset, error) {
	f, err := os.Open(xPath)
	if err != nil {
		return nil, err
	}
	xs, cols, rows, err := readFloatRows(f, xPath)
	f.Close()
	if err != nil {
		return nil, err
	}
	if rows == 0 {
		return nil, whole(xPath, "no samples")
	}
	ys, ylines, err := readIntFile(yPath)
	if err != nil {
		return nil, err
	}
	subj, slines, err := readIntFile(sPath)
	if err != nil {
		return nil, err
	}
	if len(ys) != rows {
		return nil, whole(yPath, "%d labels for %d feature rows in %s", len(ys), rows, xPath)
	}
	if len(subj) != rows {
		return nil, whole(sPath, "%d subject ids for %d feature rows in %s", len(subj), rows, xPath)
	}
	for i, y := range ys {
		if y < 1 || y > len(classes) {
			return nil, atLine(yPath, ylines[i], "activity %d outside [1, %d]", y, len(classes))
		}
		ys[i] = y - 1
	}
	// Subjects become dense group ids in ascending subject order.
	var ids []int
	for i, s := range subj {
		if s < 1 {
			return nil, atLine(sPath, slines[i], "subject %d is not a positive id", s)
		}
		if !slices.Contains(ids, s) {
			ids = append(ids, s)
		}
	}
	slices.Sort(ids)
	names := make([]string, len(ids))
	for i, s := range ids {
		names[i] = "subject " + strconv.Itoa(s)
	}
	groups := make([]int32, rows)
	for i, s := range subj {
		g, _ := slices.BinarySearch(ids, s)
		groups[i] = int32(g)
	}
	return &Dataset{
		X: xs, Shape: []int{cols}, Y: ys, Classes: classes,
		Groups: groups, GroupNames: names,
		Norm: Normalization{Desc: "as provided (features scaled to [-1, 1] by the dataset's authors)"},
	}, nil
}

func readIntFile(path string) ([]int, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return readIntColumn(f, path)
}

// readActivityLabels reads lines "<id> <NAME>" with ids 1..K in order.
func readActivityLabels(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := newLineScanner(f)
	var names []string
	line := 0
	for sc.Scan() {
		line++
		idf, rest := nextField(sc.Bytes())
		if len(idf) == 0 {
			continue
		}
		id, err := strconv.Atoi(string(idf))
		if err != nil || id != len(names)+1 {
			return nil, atLine(path, line, "activity id %q; expected %d", truncate(idf), len(names)+1)
		}
		name := strings.TrimSpace(string(rest))
		if name == "" {
			return nil, atLine(path, line, "activity %d has no name", id)
		}
		names = append(names, name)
	}
	if err := sc.Err(); err != nil {
		return nil, scanErr(path, line+1, err)
	}
	if len(names) == 0 {
		return nil, whole(path, "no activities")
	}
	return names, nil
}
