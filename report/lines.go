package report

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// Curves plots metric against round, one line per label: the mean over the
// label's runs (its seeds) and, when some round has two or more runs, a
// shaded band of ± one std. Every run must have a curve for metric, and no
// two runs may share a label and seed: pass the runs of one sweep point
// (see Filter). Defaults: title the metric's label "by round", x label
// "round (from 0)", y label the metric's label with its unit (Label).
func Curves(runs []RunResult, metric string, fig Figure) (*Chart, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("report: no runs to plot %q", metric)
	}
	sorted := sortRuns(runs, nil)
	if err := checkDistinct(sorted, nil); err != nil {
		return nil, err
	}
	m, _ := Describe(metric)
	ch := newChart(fig, capital(m.Label)+" by round", Label("round"), m.Text())

	var bands, lines []plot.Plotter
	for i, g := range groupByLabel(sorted) {
		ss := make([]Series, len(g))
		for k, r := range g {
			s, ok := r.Curves[metric]
			if !ok {
				return nil, fmt.Errorf("report: run of %q with seed %d has no curve %q", r.Label, r.Seed, metric)
			}
			ss[k] = s
		}
		b, err := MeanSeries(ss)
		if err != nil {
			return nil, fmt.Errorf("report: curve %q of %q: %w", metric, g[0].Label, err)
		}
		mean, upper, lower, spread := bandXYs(b)
		if len(mean) == 0 {
			return nil, fmt.Errorf("report: curve %q of %q has no finite value", metric, g[0].Label)
		}
		if spread {
			// The band is a polygon: along the upper edge, back along the lower.
			ring := append(upper, reversed(lower)...)
			poly, err := plotter.NewPolygon(ring)
			if err != nil {
				return nil, err
			}
			poly.Color = bandColor(i)
			poly.LineStyle.Width = 0
			bands = append(bands, poly)
		}
		l, err := plotter.NewLine(mean)
		if err != nil {
			return nil, err
		}
		l.LineStyle = seriesLine(i)
		lines = append(lines, l)
		ch.Legend.Add(g[0].Label, l)
	}
	// Bands first, so no band covers another label's line.
	ch.Plot.Add(bands...)
	ch.Plot.Add(lines...)
	return ch, nil
}

// bandXYs returns the drawable (finite) points of b: the mean, mean+std and
// mean−std, and whether any of them summarizes two or more runs.
func bandXYs(b Band) (mean, upper, lower plotter.XYs, spread bool) {
	for i, s := range b.Stats {
		if !s.finite() {
			continue
		}
		x := float64(b.Rounds[i])
		mean = append(mean, plotter.XY{X: x, Y: s.Mean})
		upper = append(upper, plotter.XY{X: x, Y: s.Mean + s.Std})
		lower = append(lower, plotter.XY{X: x, Y: s.Mean - s.Std})
		spread = spread || s.N >= 2
	}
	return mean, upper, lower, spread
}

func reversed(xys plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, len(xys))
	for i, p := range xys {
		out[len(xys)-1-i] = p
	}
	return out
}

// groupByLabel splits runs sorted by label into one slice per label.
func groupByLabel(sorted []RunResult) [][]RunResult {
	var groups [][]RunResult
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j].Label == sorted[i].Label {
			j++
		}
		groups = append(groups, sorted[i:j])
		i = j
	}
	return groups
}
