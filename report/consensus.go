package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/trellis-fl/trellis/rundir"
)

// consensusRuns reports whether runs are of task type consensus (their
// summary has the consensus columns).
func consensusRuns(runs []RunResult) bool {
	return slices.ContainsFunc(runs, func(r RunResult) bool {
		_, ok := r.Final[rundir.ConsensusColumns[0]]
		return ok
	})
}

// consensusResults is Results for runs of task type consensus: the table
// of their final error, ε and reconstruction error (mean ± std over
// seeds, to 3 significant digits: the exact methods' errors are near the
// rounding of float64), in results.md; no accuracy plots, since nothing
// learns.
func consensusResults(dir string, runs []RunResult) (string, error) {
	keys := paramKeys(runs)
	sorted := sortRuns(runs, keys)
	if err := checkDistinct(sorted, keys); err != nil {
		return "", err
	}
	header := append([]string{"method"}, keys...)
	for _, m := range rundir.ConsensusColumns {
		header = append(header, Label(m))
	}
	header = append(header, "seeds")
	right := make([]bool, len(header))
	for i := 1 + len(keys); i < len(header); i++ {
		right[i] = true
	}
	rows := [][]string{header}
	for _, g := range groupByPoint(sorted, keys) {
		row := []string{g[0].Label}
		for _, k := range keys {
			row = append(row, g[0].Params[k])
		}
		for _, m := range rundir.ConsensusColumns {
			var vals []float64
			for _, r := range g {
				if v, ok := r.Final[m]; ok {
					vals = append(vals, v)
				}
			}
			row = append(row, gCell(vals))
		}
		rows = append(rows, append(row, strconv.Itoa(len(g))))
	}
	var md bytes.Buffer
	if err := writeTable(&md, rows, right); err != nil {
		return "", err
	}
	md.WriteString("\nTask type consensus: the errors are those of the nodes' estimates after the last iteration, over nodes and coordinates " +
		"(rounds.jsonl has them after every iteration); ε is a DP method's own (— for the others); the reconstruction error is that of " +
		"the curious neighbours' estimate of the target's initial values (— without colluders).\n")
	err := rundir.WriteAtomicFunc(filepath.Join(dir, "results.md"), func(w io.Writer) error { _, err := w.Write(md.Bytes()); return err })
	return md.String(), err
}

// gCell is mean ± std of vals to 3 significant digits ("—" for none;
// the value alone when every run has the same).
func gCell(vals []float64) string {
	s := Summarize(vals)
	switch s.N {
	case 0:
		return "—"
	case 1:
		return fmt.Sprintf("%.3g", s.Mean)
	}
	if !slices.ContainsFunc(vals, func(v float64) bool { return v != vals[0] }) {
		return fmt.Sprintf("%.3g", vals[0]) // one ε for every seed: no spread of rounding
	}
	return fmt.Sprintf("%.3g ± %.2g", s.Mean, s.Std)
}
