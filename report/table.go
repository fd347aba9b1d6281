package report

import (
	"fmt"
	"github.com/trellis-fl/trellis/rundir"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WriteMarkdown writes a Markdown table of final metrics: one row per label
// and combination of parameter values, sorted (CompareValues); one column
// per parameter key, then one per metric headed by its label and unit
// (Label), as "mean ± std" over the row's
// runs with decimals digits after the point, then seeds, the row's number
// of runs. A nil metrics takes every final metric name, sorted. A row
// with one run shows the mean alone; a cell averaged over fewer runs than
// the row has (a run lacked the metric) says so with "(n=k)"; a cell with
// no value is "—". Columns are padded so the text reads as a table too.
func WriteMarkdown(w io.Writer, runs []RunResult, metrics []string, decimals int) error {
	keys := paramKeys(runs)
	if metrics == nil {
		metrics = metricKeys(runs)
	}
	sorted := sortRuns(runs, keys)
	if err := checkDistinct(sorted, keys); err != nil {
		return err
	}

	header := append([]string{"label"}, keys...)
	for _, m := range metrics {
		header = append(header, Label(m))
	}
	header = append(header, "seeds")
	right := make([]bool, len(header)) // right-aligned: the numbers
	for i := 1 + len(keys); i < len(header); i++ {
		right[i] = true
	}
	rows := [][]string{header}
	for _, g := range groupByPoint(sorted, keys) {
		row := []string{g[0].Label}
		for _, k := range keys {
			row = append(row, g[0].Params[k])
		}
		for _, m := range metrics {
			row = append(row, statCell(g, m, decimals))
		}
		row = append(row, strconv.Itoa(len(g)))
		rows = append(rows, row)
	}

	return writeTable(w, rows, right)
}

// writeTable writes rows (the first is the header) as a Markdown table,
// padded so the text reads as a table too; right marks the right-aligned
// (numeric) columns.
func writeTable(w io.Writer, rows [][]string, right []bool) error {
	header := rows[0]
	for _, row := range rows {
		for i, cell := range row {
			row[i] = escapeCell(cell)
		}
	}
	width := make([]int, len(header))
	for _, row := range rows {
		for i, cell := range row {
			width[i] = max(width[i], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	writeRow := func(row []string) {
		for i, cell := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(cell))
			if right[i] {
				fmt.Fprintf(&b, "| %s%s ", pad, cell)
			} else {
				fmt.Fprintf(&b, "| %s%s ", cell, pad)
			}
		}
		b.WriteString("|\n")
	}
	writeRow(rows[0])
	for i := range header {
		if right[i] {
			fmt.Fprintf(&b, "|%s:", strings.Repeat("-", width[i]+1))
		} else {
			fmt.Fprintf(&b, "|%s", strings.Repeat("-", width[i]+2))
		}
	}
	b.WriteString("|\n")
	for _, row := range rows[1:] {
		writeRow(row)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// SaveMarkdown writes the table of WriteMarkdown to path atomically.
func SaveMarkdown(path string, runs []RunResult, metrics []string, decimals int) error {
	return rundir.WriteAtomicFunc(path, func(w io.Writer) error { return WriteMarkdown(w, runs, metrics, decimals) })
}

// statCell formats metric m over the runs of one row.
func statCell(g []RunResult, m string, decimals int) string {
	var vals []float64
	for _, r := range g { // sorted by seed
		if v, ok := r.Final[m]; ok {
			vals = append(vals, v)
		}
	}
	s := Summarize(vals)
	var cell string
	switch {
	case s.N == 0:
		return "—"
	case s.N == 1:
		cell = strconv.FormatFloat(s.Mean, 'f', decimals, 64)
	default:
		cell = strconv.FormatFloat(s.Mean, 'f', decimals, 64) + " ± " + strconv.FormatFloat(s.Std, 'f', decimals, 64)
	}
	if s.N < len(g) {
		cell += fmt.Sprintf(" (n=%d)", s.N)
	}
	return cell
}

// groupByPoint splits runs sorted by label and keys into one slice per
// label and combination of values of keys.
func groupByPoint(sorted []RunResult, keys []string) [][]RunResult {
	same := func(a, b RunResult) bool {
		if a.Label != b.Label {
			return false
		}
		for _, k := range keys {
			if a.Params[k] != b.Params[k] {
				return false
			}
		}
		return true
	}
	var groups [][]RunResult
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && same(sorted[i], sorted[j]) {
			j++
		}
		groups = append(groups, sorted[i:j])
		i = j
	}
	return groups
}

// escapeCell keeps a cell on one line and its pipes out of the table syntax.
func escapeCell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}
