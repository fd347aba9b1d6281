package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/trellis-fl/trellis/config"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// Sweep plots the final value of metric against the numeric swept key, one
// line per label through the means over seeds, with error bars of ± one
// std where a point has two or more seeds. Every run must have key (a
// number) and the final metric, and no two runs may share label, value of
// key and seed: with a grid sweep, pass the runs of one value of the other
// keys (see Filter). Defaults: title the metric's label "vs" key, x label
// key, y label the metric's label with its unit (Label).
func Sweep(runs []RunResult, key, metric string, fig Figure) (*Chart, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("report: no runs to plot %q against %q", metric, key)
	}
	for _, r := range runs {
		v, ok := r.Params[key]
		if !ok {
			return nil, fmt.Errorf("report: run of %q with seed %d has no parameter %q (params {%s})", r.Label, r.Seed, key, config.ParamsText(r.Params))
		}
		if x, err := strconv.ParseFloat(v, 64); err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("report: parameter %q = %q of run %q seed %d is not a finite number; a sweep plot needs a numeric key", key, v, r.Label, r.Seed)
		}
		if _, ok := r.Final[metric]; !ok {
			return nil, fmt.Errorf("report: run of %q with seed %d (params {%s}) has no final metric %q", r.Label, r.Seed, config.ParamsText(r.Params), metric)
		}
	}
	sorted := sortRuns(runs, []string{key})
	if err := checkDistinct(sorted, []string{key}); err != nil {
		return nil, err
	}
	m, _ := Describe(metric)
	ch := newChart(fig, capital(m.Label)+" vs "+key, key, m.Text())
	pos := sweepPositions(sorted, key)

	var xs []float64
	for i, g := range groupByLabel(sorted) {
		pts, err := sweepPoints(g, key, metric)
		if err != nil {
			return nil, err
		}
		var mean plotter.XYs
		var bars plotter.XYs
		var errs plotter.YErrors
		for _, pt := range pts {
			xs = append(xs, pt.X)
			pt.X = pos(pt.X)
			if !pt.Stat.finite() {
				continue
			}
			mean = append(mean, plotter.XY{X: pt.X, Y: pt.Stat.Mean})
			if pt.Stat.N >= 2 {
				bars = append(bars, plotter.XY{X: pt.X, Y: pt.Stat.Mean})
				errs = append(errs, struct{ Low, High float64 }{pt.Stat.Std, pt.Stat.Std})
			}
		}
		if len(mean) == 0 {
			return nil, fmt.Errorf("report: final %q of %q has no finite value", metric, g[0].Label)
		}
		l, s, err := plotter.NewLinePoints(mean)
		if err != nil {
			return nil, err
		}
		l.LineStyle = seriesLine(i)
		s.GlyphStyle = seriesGlyph(i)
		ch.Plot.Add(l, s)
		if len(bars) > 0 {
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{bars, errs})
			if err != nil {
				return nil, err
			}
			eb.LineStyle = seriesLine(i)
			eb.LineStyle.Dashes = nil // dashed error bars read as missing ones
			ch.Plot.Add(eb)
		}
		ch.Legend.Add(g[0].Label, l, s)
	}
	// Ticks at the swept values, as long as they fit; the default ticker
	// would place them at round numbers that were never run.
	slices.Sort(xs)
	if xs = slices.Compact(xs); len(xs) <= maxSweepTicks {
		ticks := make([]plot.Tick, len(xs))
		for i, x := range xs {
			ticks[i] = plot.Tick{Value: pos(x), Label: strconv.FormatFloat(x, 'g', -1, 64)}
		}
		ch.Plot.X.Tick.Marker = plot.ConstantTicks(ticks)
	}
	return ch, nil
}

// sweepPositions returns where each swept value goes on the x axis: the
// value itself, or, when the values crowd (the closest two are less than
// 4 % of the span apart, as for λ ∈ {0, 0.005, 0.01, 0.05, 0.5, 1}), its
// rank among them, so every point and tick label stays readable; the
// ticks keep the values' labels.
func sweepPositions(runs []RunResult, key string) func(float64) float64 {
	var xs []float64
	for _, r := range runs {
		x, _ := strconv.ParseFloat(r.Params[key], 64)
		xs = append(xs, x)
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	identity := func(x float64) float64 { return x }
	if len(xs) < 3 || len(xs) > maxSweepTicks {
		return identity
	}
	gap := math.Inf(1)
	for i := 1; i < len(xs); i++ {
		gap = min(gap, xs[i]-xs[i-1])
	}
	if gap >= 0.04*(xs[len(xs)-1]-xs[0]) {
		return identity
	}
	return func(x float64) float64 {
		i, _ := slices.BinarySearch(xs, x)
		return float64(i)
	}
}

// maxSweepTicks is the most swept values labelled one by one.
const maxSweepTicks = 12

// sweepPoint is one label's final metric at one value of the swept key.
type sweepPoint struct {
	X    float64
	Stat Stat
}

// sweepPoints summarizes one label's runs (sorted by key value, then seed)
// per numeric value of key; values that spell one number ("0.3", "0.30")
// are one point, and two runs with one seed there are an error.
func sweepPoints(g []RunResult, key, metric string) ([]sweepPoint, error) {
	type xv struct {
		x    float64
		seed uint64
		v    float64
	}
	all := make([]xv, len(g))
	for i, r := range g {
		x, _ := strconv.ParseFloat(r.Params[key], 64) // checked by Sweep
		all[i] = xv{x, r.Seed, r.Final[metric]}
	}
	// Sorting by number and seed makes the summation order independent of
	// how the value was spelled.
	slices.SortStableFunc(all, func(a, b xv) int {
		if c := cmp.Compare(a.x, b.x); c != 0 {
			return c
		}
		return cmp.Compare(a.seed, b.seed)
	})
	var pts []sweepPoint
	var vals []float64
	for i := 0; i < len(all); {
		j := i
		vals = vals[:0]
		for j < len(all) && all[j].x == all[i].x {
			if j > i && all[j].seed == all[j-1].seed {
				return nil, fmt.Errorf("report: two runs of %q with seed %d at %s = %g", g[0].Label, all[j].seed, key, all[j].x)
			}
			vals = append(vals, all[j].v)
			j++
		}
		pts = append(pts, sweepPoint{X: all[i].x, Stat: Summarize(vals)})
		i = j
	}
	return pts, nil
}
