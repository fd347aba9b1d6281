package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
)

// LabelKey names the run label where WritePivot takes a parameter key.
const LabelKey = "label"

// WritePivot writes one final metric as a Markdown table with a row per
// value of rowKey and a column per value of colKey (either may be LabelKey
// for the run label), each cell "mean ± std" over the cell's runs (seeds)
// as WriteMarkdown writes them — the layout of a paper's table. Every other
// swept parameter must be constant within a cell: Filter the runs first
// (an error names the parameter otherwise).
func WritePivot(w io.Writer, runs []RunResult, rowKey, colKey, metric string, decimals int) error {
	if len(runs) == 0 {
		return fmt.Errorf("report: no runs to tabulate")
	}
	if rowKey == colKey {
		return fmt.Errorf("report: rows and columns are both %q", rowKey)
	}
	get := func(r RunResult, k string) (string, bool) {
		if k == LabelKey {
			return r.Label, true
		}
		return r.Value(k)
	}
	values := func(k string) ([]string, error) {
		var vs []string
		for _, r := range runs {
			v, ok := get(r, k)
			if !ok {
				return nil, fmt.Errorf("report: a run has no parameter %q (swept: %v)", k, paramKeys(runs))
			}
			vs = append(vs, v)
		}
		slices.SortFunc(vs, CompareValues)
		return slices.Compact(vs), nil
	}
	rowVals, err := values(rowKey)
	if err != nil {
		return err
	}
	colVals, err := values(colKey)
	if err != nil {
		return err
	}
	cells := map[[2]string][]RunResult{}
	for _, r := range runs {
		rv, _ := get(r, rowKey)
		cv, _ := get(r, colKey)
		cells[[2]string{rv, cv}] = append(cells[[2]string{rv, cv}], r)
	}
	for at, g := range cells {
		if err := sameElsewhere(g, rowKey, colKey); err != nil {
			return fmt.Errorf("report: cell %s = %s, %s = %s: %w", rowKey, at[0], colKey, at[1], err)
		}
	}
	rows := [][]string{append([]string{rowKey}, colVals...)}
	right := make([]bool, len(colVals)+1)
	for i := 1; i < len(right); i++ {
		right[i] = true
	}
	for _, rv := range rowVals {
		row := []string{rv}
		for _, cv := range colVals {
			g := cells[[2]string{rv, cv}]
			if len(g) == 0 {
				row = append(row, "—")
				continue
			}
			slices.SortFunc(g, func(a, b RunResult) int { return cmp.Compare(a.Seed, b.Seed) })
			row = append(row, statCell(g, metric, decimals))
		}
		rows = append(rows, row)
	}
	return writeTable(w, rows, right)
}

// sameElsewhere checks that the runs of one cell agree on the label and
// every parameter but the table's two keys.
func sameElsewhere(g []RunResult, rowKey, colKey string) error {
	for _, r := range g[1:] {
		if rowKey != LabelKey && colKey != LabelKey && r.Label != g[0].Label {
			return fmt.Errorf("runs of labels %q and %q fall together (pivot on %q or filter by it)", g[0].Label, r.Label, LabelKey)
		}
		for k, v := range r.Params {
			if k != rowKey && k != colKey && g[0].Params[k] != v {
				return fmt.Errorf("parameter %s varies (%s, %s) within it; filter the runs by it", k, g[0].Params[k], v)
			}
		}
	}
	return nil
}
