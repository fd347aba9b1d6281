package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteSpreadPivot writes a Markdown table with one row per label and one column
// per value of key (sorted with CompareValues): each cell is the mean over
// the cell's runs (seeds) of metric, followed by "± " and the mean of
// spread when spread is not empty (a per-run spread such as the std across
// nodes), with decimals digits. A cell without runs is "—".
func WriteSpreadPivot(w io.Writer, runs []RunResult, key, metric, spread string, decimals int) error {
	vals := Values(runs, key)
	if len(vals) == 0 {
		return fmt.Errorf("report: no run has parameter %q", key)
	}
	var labels []string
	for _, r := range runs {
		labels = append(labels, r.Label)
	}
	slices.SortFunc(labels, CompareValues)
	labels = slices.Compact(labels)
	var b strings.Builder
	fmt.Fprintf(&b, "| label | %s |\n|---|%s\n", strings.Join(prefixed(key+" = ", vals), " | "), strings.Repeat("---:|", len(vals)))
	for _, l := range labels {
		fmt.Fprintf(&b, "| %s |", escapeCell(l))
		for _, v := range vals {
			var m, s float64
			n := 0
			for _, r := range runs {
				x, ok := r.Final[metric]
				if r.Label != l || r.Params[key] != v || !ok {
					continue
				}
				m += x
				s += r.Final[spread]
				n++
			}
			switch {
			case n == 0:
				b.WriteString(" — |")
			case spread == "":
				fmt.Fprintf(&b, " %.*f |", decimals, m/float64(n))
			default:
				fmt.Fprintf(&b, " %.*f ± %.*f |", decimals, m/float64(n), decimals, s/float64(n))
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func prefixed(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}
