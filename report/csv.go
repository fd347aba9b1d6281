package report

import (
	"encoding/csv"
	"github.com/trellis-fl/trellis/rundir"
	"io"
	"strconv"
)

// WriteCSV writes one row per run: label, one column per parameter key
// (sorted), seed, then one column per metric (nil: every final metric
// name, sorted). Rows are sorted by label, parameter values (CompareValues)
// and seed. Values are written in the shortest form that parses back to the
// same float64; a missing parameter or metric is an empty cell.
func WriteCSV(w io.Writer, runs []RunResult, metrics []string) error {
	keys := paramKeys(runs)
	if metrics == nil {
		metrics = metricKeys(runs)
	}
	sorted := sortRuns(runs, keys)
	if err := checkDistinct(sorted, keys); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	header := append(append([]string{"label"}, keys...), "seed")
	if err := cw.Write(append(header, metrics...)); err != nil {
		return err
	}
	for _, r := range sorted {
		row := []string{r.Label}
		for _, k := range keys {
			row = append(row, r.Params[k])
		}
		row = append(row, strconv.FormatUint(r.Seed, 10))
		for _, m := range metrics {
			cell := ""
			if v, ok := r.Final[m]; ok {
				cell = strconv.FormatFloat(v, 'g', -1, 64)
			}
			row = append(row, cell)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// SaveCSV writes the summary of WriteCSV to path atomically.
func SaveCSV(path string, runs []RunResult, metrics []string) error {
	return rundir.WriteAtomicFunc(path, func(w io.Writer) error { return WriteCSV(w, runs, metrics) })
}
