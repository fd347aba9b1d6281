package experiment

import (
	"fmt"
	"slices"
	"strings"

	"github.com/trellis-fl/trellis/report"
)

// PivotQuery is one table of a paper: a final metric with a row per value
// of Rows and a column per value of Cols ("label" for the method), over
// the runs whose swept keys have the values in Where.
type PivotQuery struct {
	Rows, Cols string
	// Metric is a final metric, with or without its "final_" prefix
	// (honest_local_acc, honest_global_acc, all_acc, honest_loss,
	// delta_max, mean_byz_weight).
	Metric   string
	Where    map[string]string
	Decimals int
}

// Pivot tabulates the finished runs under dir as q asks, in Markdown.
func Pivot(dir string, q PivotQuery) (string, error) {
	runs, keys, err := collectRuns(dir)
	if err != nil {
		return "", err
	}
	if len(runs) == 0 {
		return "", fmt.Errorf("%s: no finished runs", dir)
	}
	for k := range q.Where {
		if !slices.Contains(keys, k) {
			return "", fmt.Errorf("where %s: not a swept key of %s (swept: %s)", k, dir, strings.Join(keys, ", "))
		}
	}
	runs = report.Filter(runs, q.Where)
	if len(runs) == 0 {
		return "", fmt.Errorf("%s: no run has %v", dir, q.Where)
	}
	metric := q.Metric
	if !strings.HasPrefix(metric, "final_") {
		metric = "final_" + metric
	}
	if _, ok := runs[0].Final[metric]; !ok {
		var have []string
		for k := range runs[0].Final {
			have = append(have, strings.TrimPrefix(k, "final_"))
		}
		slices.Sort(have)
		return "", fmt.Errorf("metric %q unknown (valid: %s)", q.Metric, strings.Join(have, ", "))
	}
	var b strings.Builder
	if err := report.WritePivot(&b, runs, q.Rows, q.Cols, metric, q.Decimals); err != nil {
		return "", err
	}
	return b.String(), nil
}
