package data

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// pamapLine writes one 54-column line: timestamp, activity, then value
// 0.01·row + column for every column, with hr and col10 possibly NaN.
func pamapLine(b *strings.Builder, row, act int, hrNaN, col10NaN bool) {
	fmt.Fprintf(b, "%.2f %d", float64(row)/100, act)
	for col := 2; col < 54; col++ {
		if (col == 2 && hrNaN) || (col == 10 && col10NaN) {
			b.WriteString(" NaN")
			continue
		}
		fmt.Fprintf(b, " %.6f", 0.01*float64(row)+float64(col))
	}
	b.WriteString("\n")
}

// writePAMAP writes subject101 (260 rows: activity 1 then 4, heart rate
// every 10th row, two NaNs in column 10) and subject102 (230 rows: 130
// transient rows then rope jumping, no heart rate at all).
func writePAMAP(t *testing.T, dir string) {
	t.Helper()
	var a, b strings.Builder
	for r := range 260 {
		act := 1
		if r >= 120 {
			act = 4
		}
		pamapLine(&a, r, act, r%10 != 0, r == 5 || r == 6)
	}
	for r := range 230 {
		act := 0
		if r >= 130 {
			act = 24
		}
		pamapLine(&b, r, act, true, false)
	}
	writeFile(t, filepath.Join(dir, "Protocol", "subject101.dat"), []byte(a.String()))
	writeFile(t, filepath.Join(dir, "Protocol", "subject102.dat"), []byte(b.String()))
}

func TestLoadPAMAP2(t *testing.T) {
	dir := t.TempDir()
	writePAMAP(t, dir)
	d, err := LoadPAMAP2(dir, PAMAP2Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	// Windows start at 0, 50, 100, 150 (subject 101) and 0, 50, 100
	// (subject 102, where the first two are mostly transient and dropped).
	if fmt.Sprint(d.Y) != "[0 0 3 3 11]" || fmt.Sprint(d.Groups) != "[0 0 0 0 1]" {
		t.Fatalf("labels %v groups %v", d.Y, d.Groups)
	}
	if fmt.Sprint(d.Shape) != "[100 40]" || d.Classes[11] != "rope jumping" || d.GroupNames[1] != "subject 102" {
		t.Errorf("shape %v classes %v groups %v", d.Shape, d.Classes, d.GroupNames)
	}
	at := func(sample, step, ch int) float64 { return float64(d.Row(sample)[step*40+ch]) }
	// Heart rate (channel 0): subject 101 observed 2 + 0.01r for r = 0, 10,
	// ..., 250: mean 3.25; NaNs take that mean, so the global mean is 3.25
	// and the variance 14.625/260 (subject 102 has no heart rate at all).
	std := math.Sqrt(14.625 / 260)
	for _, c := range []struct {
		sample, step int
		want         float64
	}{
		{0, 0, (2 - 3.25) / std},    // row 0, observed
		{0, 1, 0},                   // row 1, NaN -> subject mean
		{2, 10, (3.1 - 3.25) / std}, // row 110, observed
		{4, 0, 0},                   // subject 102: global mean
	} {
		if got := at(c.sample, c.step, 0); math.Abs(got-c.want) > 1e-4 {
			t.Errorf("heart rate of sample %d step %d: %v, want %v", c.sample, c.step, got, c.want)
		}
	}
	// Hand temperature (source column 3, channel 1): no NaN; z-score over
	// all 490 rows of both subjects.
	var vals []float64
	for r := range 260 {
		vals = append(vals, 0.01*float64(r)+3)
	}
	for r := range 230 {
		vals = append(vals, 0.01*float64(r)+3)
	}
	m, s := meanStd(vals)
	if got, want := at(4, 7, 1), (0.01*107+3-m)/s; math.Abs(got-want) > 1e-4 {
		t.Errorf("temperature: %v, want %v", got, want)
	}
	// Column 10 (channel 8) had NaN at rows 5 and 6 of subject 101: they take
	// the subject mean of that column, 0.01·(Σr - 11)/258 + 10.
	colMean := 0.01*(float64(259*260/2)-11)/258 + 10
	var col []float64
	for r := range 260 {
		v := 0.01*float64(r) + 10
		if r == 5 || r == 6 {
			v = colMean
		}
		col = append(col, v)
	}
	for r := range 230 {
		col = append(col, 0.01*float64(r)+10)
	}
	m, s = meanStd(col)
	if got, want := at(0, 5, 8), (colMean-m)/s; math.Abs(got-want) > 1e-4 {
		t.Errorf("filled column 10: %v, want %v", got, want)
	}
	// Smaller windows, one subject.
	d2, err := LoadPAMAP2(filepath.Join(dir, "Protocol"), PAMAP2Options{Window: 20, Stride: 20, Subjects: []int{102}})
	if err != nil {
		t.Fatal(err)
	}
	// Windows at 140, 160, 180, 200; the one at 120 is a 10-10 tie between
	// transient (0) and rope jumping, which goes to the smaller id: dropped.
	if d2.Len() != 4 || len(d2.GroupNames) != 1 {
		t.Errorf("%d windows, groups %v", d2.Len(), d2.GroupNames)
	}
}

func meanStd(v []float64) (float64, float64) {
	var s, ss float64
	for _, x := range v {
		s += x
	}
	m := s / float64(len(v))
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(v)))
}

func TestPAMAP2Errors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		dir := t.TempDir()
		_, err := LoadPAMAP2(dir, PAMAP2Options{})
		wantNotFound(t, err, filepath.Join(dir, "subject*.dat"), "PAMAP2_Dataset.zip")
		writePAMAP(t, dir)
		_, err = LoadPAMAP2(dir, PAMAP2Options{Subjects: []int{109}})
		wantNotFound(t, err, filepath.Join(dir, "Protocol", "subject109.dat"), "PAMAP2_Dataset.zip")
	})
	var good strings.Builder
	pamapLine(&good, 0, 1, false, false)
	line := strings.TrimSpace(good.String())
	fields := strings.Fields(line)
	cases := []struct {
		name, content string
		frags         []string
	}{
		{"short line", line + "\n" + strings.Join(fields[:50], " ") + "\n", []string{"line 2", "50 columns; expected 54"}},
		{"long line", line + " 1\n", []string{"line 1", "more than 54 columns"}},
		{"bad activity", strings.Replace(line, " 1 ", " 8 ", 1) + "\n", []string{"line 1", "activity id 8"}},
		{"activity text", strings.Replace(line, " 1 ", " one ", 1) + "\n", []string{"line 1", `"one" is not an integer`}},
		{"bad value", strings.Replace(line, fields[5], "abc", 1) + "\n", []string{"line 1", "column 6", `"abc"`}},
		{"empty", "\n\n", []string{"no data lines"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "subject101.dat")
			writeFile(t, p, []byte(c.content))
			_, err := LoadPAMAP2(dir, PAMAP2Options{})
			wantFormatError(t, err, p, c.frags...)
		})
	}
	t.Run("no window", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "subject101.dat"), []byte(good.String()))
		if _, err := LoadPAMAP2(dir, PAMAP2Options{}); err == nil || !strings.Contains(err.Error(), "no window") {
			t.Errorf("one row: %v", err)
		}
	})
}
