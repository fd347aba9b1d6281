package data

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadCSV(t *testing.T) {
	table := "a, b, species, c\n1, 2, setosa, 3\n4, 5.5, virginica, 6\n7, 8, setosa, -9e-1\n"
	for _, opt := range []CSVOptions{
		{Header: true, LabelColumn: "species"},
		{Header: true, LabelIndex: 2},
		{Header: true, LabelIndex: -2},
	} {
		d, err := ReadCSV(strings.NewReader(table), "iris.csv", opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(d.X) != "[1 2 3 4 5.5 6 7 8 -0.9]" || fmt.Sprint(d.Y) != "[0 1 0]" ||
			fmt.Sprint(d.Classes) != "[setosa virginica]" || d.RowLen() != 3 {
			t.Errorf("%+v: X %v Y %v classes %v", opt, d.X, d.Y, d.Classes)
		}
	}
	// Integer labels, no header, semicolons, label last, gzip.
	ints := "0.5;1;3\n1.5;2;0\n"
	d, err := ReadCSV(strings.NewReader(string(gzipBytes(t, []byte(ints)))), "t.csv.gz", CSVOptions{Comma: ';', LabelIndex: -1})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(d.Y) != "[3 0]" || d.NumClasses() != 4 {
		t.Errorf("Y %v classes %v", d.Y, d.Classes)
	}
	z, err := ReadCSV(strings.NewReader(ints), "t.csv", CSVOptions{Comma: ';', LabelIndex: -1, ZScore: true})
	if err != nil {
		t.Fatal(err)
	}
	// Each column: two values, z = -1 and +1.
	for i, want := range []float32{-1, -1, 1, 1} {
		if math.Abs(float64(z.X[i]-want)) > 1e-6 {
			t.Errorf("z-score: %v", z.X)
		}
	}
	if z.Norm.Mean[0] != 1 || z.Norm.Std[1] != 0.5 {
		t.Errorf("recorded statistics %+v", z.Norm)
	}
}

func TestCSVErrors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "x.csv")
		_, err := LoadCSV(p, CSVOptions{})
		wantNotFound(t, err, p, "check the path")
	})
	cases := []struct {
		name, in string
		opt      CSVOptions
		frags    []string
	}{
		{"not a number", "1,2,a\n3,x,b\n", CSVOptions{LabelIndex: 2}, []string{"line 2", `column 2: "x"`}},
		{"NaN", "1,NaN,a\n", CSVOptions{LabelIndex: 2}, []string{"line 1", "not a finite number"}},
		{"ragged", "1,2,a\n3,b\n", CSVOptions{LabelIndex: 2}, []string{"line 2", "wrong number of fields"}},
		{"quote", "1,\"2,a\n", CSVOptions{LabelIndex: 2}, []string{"line 1"}},
		{"no column", "x,y\n1,2\n", CSVOptions{Header: true, LabelColumn: "z"}, []string{`no column named "z"`}},
		{"name without header", "1,2\n", CSVOptions{LabelColumn: "z"}, []string{"no header"}},
		{"index", "1,2\n", CSVOptions{LabelIndex: 5}, []string{"label column index 5 out of range"}},
		{"one column", "1\n", CSVOptions{}, []string{"need a label and at least one feature"}},
		{"no rows", "a,b\n", CSVOptions{Header: true}, []string{"no data rows"}},
		{"empty", "", CSVOptions{Header: true}, []string{"empty file"}},
		{"empty label", "1,\n", CSVOptions{LabelIndex: 1}, []string{"empty label"}},
		{"huge label", "1,99999999\n", CSVOptions{LabelIndex: 1}, []string{"integer label 99999999"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(c.in), "t.csv", c.opt)
			wantFormatError(t, err, "t.csv", c.frags...)
		})
	}
}
