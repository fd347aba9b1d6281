package report

import (
	"fmt"
	"slices"
	"strings"
)

// PivotQuery is one table of a paper: a final metric with a row per value
// of Rows and a column per value of Cols (config keys, swept or not, or
// "label" for the method), over the runs whose config keys have the
// values in Where (RunResult.Value).
type PivotQuery struct {
	Rows, Cols string
	// Metric is a final metric, with or without its "final_" prefix
	// (honest_local_acc, honest_global_acc, all_acc, honest_loss,
	// delta_max, mean_byz_weight; max_delta_max, the largest delta_max of
	// any round; DMTT's trust_neighbor_honest, trust_neighbor_byzantine,
	// ... of the runs that record them).
	Metric   string
	Where    map[string]string
	Decimals int
}

// PivotDir tabulates the finished runs under dir as q asks, in Markdown.
func PivotDir(dir string, q PivotQuery) (string, error) {
	runs, keys, err := collectRuns(dir)
	if err != nil {
		return "", err
	}
	if len(runs) == 0 {
		return "", fmt.Errorf("%s: no finished runs", dir)
	}
	for k := range q.Where {
		if _, ok := runs[0].Value(k); !ok {
			return "", fmt.Errorf("where %s: not a config key of the runs in %s (swept: %s)", k, dir, strings.Join(keys, ", "))
		}
	}
	runs = Filter(runs, q.Where)
	if len(runs) == 0 {
		return "", fmt.Errorf("%s: no run has %v", dir, q.Where)
	}
	// A metric some runs lack (DMTT's trust metrics) tabulates the runs
	// that have it.
	with := func(m string) []RunResult {
		var out []RunResult
		for _, r := range runs {
			if _, ok := r.Final[m]; ok {
				out = append(out, r)
			}
		}
		return out
	}
	metric := q.Metric
	sel := with(metric)
	if len(sel) == 0 && !strings.HasPrefix(metric, "final_") {
		metric = "final_" + metric
		sel = with(metric)
	}
	if len(sel) == 0 {
		var have []string
		for _, r := range runs {
			for k := range r.Final {
				have = append(have, strings.TrimPrefix(k, "final_"))
			}
		}
		slices.Sort(have)
		return "", fmt.Errorf("metric %q unknown (valid: %s)", q.Metric, strings.Join(slices.Compact(have), ", "))
	}
	runs = sel
	var b strings.Builder
	if err := WritePivot(&b, runs, q.Rows, q.Cols, metric, q.Decimals); err != nil {
		return "", err
	}
	return b.String(), nil
}
