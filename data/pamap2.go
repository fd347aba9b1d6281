package data

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// PAMAP2 Physical Activity Monitoring (Reiss and Stricker 2012), protocol
// files Protocol/subject10x.dat: one line per 100 Hz time step, 54
// space-separated columns — timestamp, activity id, heart rate, then 17
// columns for each of three IMUs (hand, chest, ankle): temperature, 3D
// acceleration ±16 g, 3D acceleration ±6 g, 3D gyroscope, 3D magnetometer,
// 4 orientation values (documented as invalid). Missing values are "NaN".
//
// Preprocessing:
//   - 40 channels: heart rate + 13 per IMU (all but orientation);
//   - NaN -> the mean of that column over the subject's file (a column with
//     no value at all in a subject's file gets the global mean, i.e. 0 after
//     the z-score);
//   - a global z-score per channel, over every row of every loaded subject;
//   - windows of 100 rows, stride 50, within one subject's file, labeled by
//     the majority activity (ties to the smaller id); windows whose majority
//     is 0 (transient) or an optional, non-protocol activity are dropped.
//
// A sample has shape [Window, 40] (time-major). With stride half the window
// every row is stored about twice: the full protocol set is near 0.9 GB.

const (
	pamapColumns  = 54
	pamapChannels = 40
	pamapHint     = "download https://archive.ics.uci.edu/dataset/231 (PAMAP2_Dataset.zip) and unzip it; " +
		"pass the PAMAP2_Dataset directory or its Protocol subdirectory"
)

// pamapActivities are the 12 protocol activities, in id order; class i is
// pamapActivities[i].
var pamapActivities = [...]struct {
	id   int
	name string
}{
	{1, "lying"}, {2, "sitting"}, {3, "standing"}, {4, "walking"}, {5, "running"},
	{6, "cycling"}, {7, "Nordic walking"}, {12, "ascending stairs"}, {13, "descending stairs"},
	{16, "vacuum cleaning"}, {17, "ironing"}, {24, "rope jumping"},
}

// pamapOptional are valid PAMAP2 ids outside the protocol (and 0, transient).
var pamapOptional = [...]int{0, 9, 10, 11, 18, 19, 20}

// pamapKeep lists the kept source columns: heart rate (2), then for each IMU
// starting at 3, 20, 37 its first 13 columns.
func pamapKeep() [pamapChannels]int {
	var k [pamapChannels]int
	k[0] = 2
	n := 1
	for _, base := range []int{3, 20, 37} {
		for j := range 13 {
			k[n] = base + j
			n++
		}
	}
	return k
}

// PAMAP2Options configures LoadPAMAP2. Zero values mean the spec's defaults.
type PAMAP2Options struct {
	Window   int   // rows per window; default 100 (1 s at 100 Hz)
	Stride   int   // rows between window starts; default 50
	Subjects []int // e.g. {101, 105}; nil loads every subject*.dat found
}

// LoadPAMAP2 loads the protocol recordings in dir (PAMAP2_Dataset or its
// Protocol directory) as windows, one group per subject. PAMAP2 has no
// official test set: use HoldOut or per-client test splits.
func LoadPAMAP2(dir string, opt PAMAP2Options) (*Dataset, error) {
	if opt.Window == 0 {
		opt.Window = 100
	}
	if opt.Stride == 0 {
		opt.Stride = 50
	}
	if opt.Window < 1 || opt.Stride < 1 {
		return nil, fmt.Errorf("data: PAMAP2: window %d and stride %d must be positive", opt.Window, opt.Stride)
	}
	if st, err := os.Stat(filepath.Join(dir, "Protocol")); err == nil && st.IsDir() {
		dir = filepath.Join(dir, "Protocol")
	}
	var files []string
	if opt.Subjects == nil {
		files, _ = filepath.Glob(filepath.Join(dir, "subject*.dat"))
		slices.Sort(files)
		if len(files) == 0 {
			return nil, &NotFoundError{Dataset: "PAMAP2", Tried: []string{filepath.Join(dir, "subject*.dat")}, Hint: pamapHint}
		}
	} else {
		for _, s := range opt.Subjects {
			p, err := firstExisting("PAMAP2", pamapHint, filepath.Join(dir, fmt.Sprintf("subject%d.dat", s)))
			if err != nil {
				return nil, err
			}
			files = append(files, p)
		}
	}

	d := &Dataset{Name: "PAMAP2", Shape: []int{opt.Window, pamapChannels}}
	for _, a := range pamapActivities {
		d.Classes = append(d.Classes, a.name)
	}
	var sum, sumSq, count [pamapChannels]float64
	for g, p := range files {
		rows, acts, err := readPAMAPFile(p)
		if err != nil {
			return nil, err
		}
		fillSubjectMeans(rows, &sum, &sumSq, &count)
		appendWindows(d, rows, acts, opt.Window, opt.Stride, int32(g))
		base := strings.TrimSuffix(filepath.Base(p), ".dat")
		d.GroupNames = append(d.GroupNames, strings.Replace(base, "subject", "subject ", 1))
	}
	if d.Len() == 0 {
		return nil, fmt.Errorf("data: PAMAP2: no window of %d rows with a protocol activity in %s", opt.Window, strings.Join(files, ", "))
	}
	mean := make([]float32, pamapChannels)
	std := make([]float32, pamapChannels)
	for c := range pamapChannels {
		mean[c], std[c] = 0, 1
		if count[c] == 0 {
			continue
		}
		m := sum[c] / count[c]
		v := sumSq[c]/count[c] - m*m
		mean[c] = float32(m)
		if v > 1e-12 {
			std[c] = float32(math.Sqrt(v))
		}
	}
	for i, v := range d.X {
		c := i % pamapChannels
		if v != v { // a channel the subject never recorded: global mean
			d.X[i] = 0
			continue
		}
		d.X[i] = (v - mean[c]) / std[c]
	}
	d.Norm = Normalization{
		Desc: "NaN -> subject column mean; global z-score per channel over all rows",
		Mean: mean, Std: std,
	}
	return d, nil
}

// readPAMAPFile parses one subject file into rows of the 40 kept channels
// (NaN where missing) and the activity id of each row.
func readPAMAPFile(path string) ([]float32, []int8, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return parsePAMAP(f, path)
}

func parsePAMAP(r io.Reader, path string) ([]float32, []int8, error) {
	keep := pamapKeep()
	var want [pamapColumns]int // source column -> 1 + output channel, 0 if dropped
	for c, col := range keep {
		want[col] = c + 1
	}
	var rows []float32
	var acts []int8
	var row [pamapChannels]float32
	sc := newLineScanner(r)
	line := 0
	for sc.Scan() {
		line++
		rest := sc.Bytes()
		col := 0
		act := -1
		for {
			var fld []byte
			fld, rest = nextField(rest)
			if len(fld) == 0 {
				break
			}
			if col >= pamapColumns {
				return nil, nil, atLine(path, line, "more than %d columns", pamapColumns)
			}
			switch {
			case col == 1:
				a, err := strconv.Atoi(string(fld))
				if err != nil {
					return nil, nil, atLine(path, line, "activity id %q is not an integer", truncate(fld))
				}
				if !validPAMAPActivity(a) {
					return nil, nil, atLine(path, line, "activity id %d is not a PAMAP2 activity", a)
				}
				act = a
			case want[col] > 0:
				v, err := strconv.ParseFloat(string(fld), 32)
				if err != nil || math.IsInf(v, 0) {
					return nil, nil, atLine(path, line, "column %d: %q is not a number or NaN", col+1, truncate(fld))
				}
				row[want[col]-1] = float32(v)
			}
			col++
		}
		if col == 0 {
			continue
		}
		if col != pamapColumns {
			return nil, nil, atLine(path, line, "%d columns; expected %d", col, pamapColumns)
		}
		rows = append(rows, row[:]...)
		acts = append(acts, int8(act))
	}
	if err := sc.Err(); err != nil {
		return nil, nil, scanErr(path, line+1, err)
	}
	if len(acts) == 0 {
		return nil, nil, whole(path, "no data lines")
	}
	return rows, acts, nil
}

func validPAMAPActivity(a int) bool {
	return pamapClass(a) >= 0 || slices.Contains(pamapOptional[:], a)
}

// pamapClass maps a protocol activity id to its class, or -1.
func pamapClass(a int) int {
	for i, p := range pamapActivities {
		if p.id == a {
			return i
		}
	}
	return -1
}

// fillSubjectMeans replaces each NaN by its column's mean over this
// subject's rows and adds the filled rows to the global sums.
func fillSubjectMeans(rows []float32, sum, sumSq, count *[pamapChannels]float64) {
	var s [pamapChannels]float64
	var k [pamapChannels]int
	for i, v := range rows {
		if v == v {
			s[i%pamapChannels] += float64(v)
			k[i%pamapChannels]++
		}
	}
	var fill [pamapChannels]float32
	for c := range fill {
		fill[c] = float32(math.NaN())
		if k[c] > 0 {
			fill[c] = float32(s[c] / float64(k[c]))
		}
	}
	for i, v := range rows {
		c := i % pamapChannels
		if v != v {
			rows[i] = fill[c]
			v = fill[c]
		}
		if v == v {
			sum[c] += float64(v)
			sumSq[c] += float64(v) * float64(v)
			count[c]++
		}
	}
}

// appendWindows cuts one subject's rows into windows and appends those whose
// majority activity is a protocol activity.
func appendWindows(d *Dataset, rows []float32, acts []int8, w, stride int, group int32) {
	for start := 0; start+w <= len(acts); start += stride {
		var counts [25]int
		for _, a := range acts[start : start+w] {
			counts[a]++
		}
		best := 0
		for a := 1; a < len(counts); a++ {
			if counts[a] > counts[best] {
				best = a
			}
		}
		cls := pamapClass(best)
		if cls < 0 {
			continue
		}
		d.X = append(d.X, rows[start*pamapChannels:(start+w)*pamapChannels]...)
		d.Y = append(d.Y, cls)
		d.Groups = append(d.Groups, group)
	}
}
