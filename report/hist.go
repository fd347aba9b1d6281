package report

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// HistGroup is one labelled sample of values for Histograms.
type HistGroup struct {
	Label  string
	Values []float64
}

// Histograms draws the distribution of each group over bins equal bins of
// [lo, hi] as a step line of the fraction of the group's values per bin
// (so groups of different sizes compare), one colour per group, and a
// dashed vertical line at mark when mark lies in [lo, hi] (a threshold).
// Values outside [lo, hi] count in the nearest end bin; NaNs are skipped.
// Defaults: x label "value", y label "fraction per bin".
func Histograms(groups []HistGroup, bins int, lo, hi, mark float64, fig Figure) (*Chart, error) {
	if bins < 1 || !(hi > lo) {
		return nil, fmt.Errorf("report: histogram of %d bins over [%v, %v]", bins, lo, hi)
	}
	ch := newChart(fig, "", "value", "fraction per bin")
	width := (hi - lo) / float64(bins)
	top := 0.0
	for i, g := range groups {
		counts := make([]float64, bins)
		n := 0
		for _, v := range g.Values {
			if math.IsNaN(v) {
				continue
			}
			b := int(math.Floor((v - lo) / width))
			counts[max(0, min(bins-1, b))]++
			n++
		}
		if n == 0 {
			continue
		}
		var xys plotter.XYs
		for b, c := range counts {
			top = max(top, c/float64(n))
			x0 := lo + float64(b)*width
			xys = append(xys, plotter.XY{X: x0, Y: c / float64(n)}, plotter.XY{X: x0 + width, Y: c / float64(n)})
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.LineStyle = seriesLine(i)
		ch.Plot.Add(l)
		ch.Legend.Add(fmt.Sprintf("%s (n=%d)", g.Label, n), l)
	}
	if mark >= lo && mark <= hi {
		l, err := plotter.NewLine(plotter.XYs{{X: mark, Y: 0}, {X: mark, Y: max(top, 0.1) * 1.05}})
		if err != nil {
			return nil, err
		}
		l.LineStyle = draw.LineStyle{Color: seriesColor(7), Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
		ch.Plot.Add(l)
	}
	ch.Plot.X.Min, ch.Plot.X.Max = lo, hi
	ch.Plot.Y.Min = 0
	return ch, nil
}
