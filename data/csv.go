package data

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// CSVOptions says how to read a table: which column holds the label, and
// whether to z-score the features. Every other column must be numeric.
type CSVOptions struct {
	Header      bool   // the first record names the columns
	LabelColumn string // the label column by name (needs Header)
	LabelIndex  int    // else by 0-based index; negative counts from the end (-1 = last)
	Comma       rune   // field separator; 0 means ','
	ZScore      bool   // z-score each feature column over the file (else values are used as given)
}

// Labels: when every label is a non-negative integer, label v is class v and
// the classes are "0".."max"; otherwise the distinct labels, sorted, are the
// classes.
const maxCSVIntClasses = 1 << 16

// LoadCSV reads a CSV file; see ReadCSV.
func LoadCSV(path string, opt CSVOptions) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &NotFoundError{Dataset: "CSV table", Tried: []string{path}, Hint: "check the path"}
		}
		return nil, err
	}
	defer f.Close()
	return ReadCSV(f, path, opt)
}

// ReadCSV decodes a CSV table (gzip-compressed or not) into a dataset of
// shape [number of feature columns].
func ReadCSV(r io.Reader, name string, opt CSVOptions) (*Dataset, error) {
	r, _, err := maybeGunzip(r, name)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(r)
	if opt.Comma != 0 {
		cr.Comma = opt.Comma
	}
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	wrap := func(err error) error {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return &FormatError{Path: name, Offset: -1, Line: pe.Line, Msg: fmt.Sprintf("column %d", pe.Column), Err: pe.Err}
		}
		return &FormatError{Path: name, Offset: -1, Msg: "read error", Err: err}
	}
	labelCol := -1
	cols := 0
	var names []string
	resolve := func(n int) error {
		cols = n
		switch {
		case opt.LabelColumn != "":
			labelCol = slices.Index(names, opt.LabelColumn)
			if labelCol < 0 {
				return atLine(name, 1, "no column named %q (columns: %s)", opt.LabelColumn, truncate([]byte(strings.Join(names, ", "))))
			}
		case opt.LabelIndex < 0:
			labelCol = n + opt.LabelIndex
		default:
			labelCol = opt.LabelIndex
		}
		if labelCol < 0 || labelCol >= n {
			return atLine(name, 1, "label column index %d out of range for %d columns", opt.LabelIndex, n)
		}
		if n < 2 {
			return atLine(name, 1, "%d column: need a label and at least one feature", n)
		}
		return nil
	}
	if opt.LabelColumn != "" && !opt.Header {
		return nil, whole(name, "label column %q given by name but the table has no header", opt.LabelColumn)
	}
	if opt.Header {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil, whole(name, "empty file: no header")
		}
		if err != nil {
			return nil, wrap(err)
		}
		for _, f := range rec {
			names = append(names, strings.TrimSpace(f))
		}
		if err := resolve(len(rec)); err != nil {
			return nil, err
		}
	}
	var xs []float32
	var labels []string
	var lines []int
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, wrap(err)
		}
		line, _ := cr.FieldPos(0)
		if labelCol < 0 {
			if err := resolve(len(rec)); err != nil {
				return nil, err
			}
		}
		for i, f := range rec {
			if i == labelCol {
				l := strings.TrimSpace(f)
				if l == "" {
					return nil, atLine(name, line, "column %d: empty label", i+1)
				}
				labels = append(labels, l)
				continue
			}
			v, ok := parseFinite([]byte(strings.TrimSpace(f)))
			if !ok {
				return nil, atLine(name, line, "column %d: %q is not a finite number", i+1, truncate([]byte(f)))
			}
			xs = append(xs, v)
		}
		lines = append(lines, line)
	}
	if len(labels) == 0 {
		return nil, whole(name, "no data rows")
	}
	d := &Dataset{Name: name, X: xs, Shape: []int{cols - 1}, Norm: Normalization{Desc: "as given"}}
	if err := csvLabels(d, labels, lines, name); err != nil {
		return nil, err
	}
	if opt.ZScore {
		zscoreColumns(d)
	}
	return d, nil
}

func csvLabels(d *Dataset, labels []string, lines []int, name string) error {
	d.Y = make([]int, len(labels))
	maxv := -1
	for i, s := range labels {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			maxv = -1
			break
		}
		if v >= maxCSVIntClasses {
			return atLine(name, lines[i], "integer label %d exceeds %d classes", v, maxCSVIntClasses)
		}
		d.Y[i] = v
		maxv = max(maxv, v)
	}
	if maxv >= 0 {
		for c := 0; c <= maxv; c++ {
			d.Classes = append(d.Classes, strconv.Itoa(c))
		}
		return nil
	}
	d.Classes = slices.Compact(slices.Sorted(slices.Values(labels)))
	for i, s := range labels {
		d.Y[i], _ = slices.BinarySearch(d.Classes, s)
	}
	return nil
}

// zscoreColumns standardizes each column to mean 0 and standard deviation 1
// (a constant column is only centred) and records the statistics.
func zscoreColumns(d *Dataset) {
	w := d.RowLen()
	n := float64(d.Len())
	sum := make([]float64, w)
	sq := make([]float64, w)
	for i, v := range d.X {
		sum[i%w] += float64(v)
	}
	mean := make([]float32, w)
	for c := range mean {
		mean[c] = float32(sum[c] / n)
	}
	for i, v := range d.X {
		dv := float64(v) - sum[i%w]/n
		sq[i%w] += dv * dv
	}
	std := make([]float32, w)
	for c := range std {
		std[c] = 1
		if s := math.Sqrt(sq[c] / n); s > 1e-12 {
			std[c] = float32(s)
		}
	}
	for i, v := range d.X {
		c := i % w
		d.X[i] = float32((float64(v) - sum[c]/n) / float64(std[c]))
	}
	d.Norm = Normalization{Desc: "per-column z-score over the file", Mean: mean, Std: std}
}
