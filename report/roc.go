package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// rocAUC is the area under the ROC curve of a score that should rank benign
// senders above malfunctioning ones: P(benign > malfunctioning) + ½
// P(equal), over every (benign, malfunctioning) pair (the Mann–Whitney
// statistic, computed by sorting: O((m + n) log(m + n))). 0.5 is chance, 1
// perfect separation at some threshold, 0 perfectly inverted. NaN when a
// side is empty.
func rocAUC(benign, byz []float64) float64 {
	if len(benign) == 0 || len(byz) == 0 {
		return math.NaN()
	}
	b, m := slices.Sorted(slices.Values(benign)), slices.Sorted(slices.Values(byz))
	// For each benign value count the malfunctioning values below it and
	// equal to it, walking both sorted lists once.
	var wins float64
	lo, hi := 0, 0 // m[:lo] < v, m[:hi] ≤ v
	for _, v := range b {
		for lo < len(m) && m[lo] < v {
			lo++
		}
		if hi < lo {
			hi = lo
		}
		for hi < len(m) && m[hi] <= v {
			hi++
		}
		wins += float64(lo) + float64(hi-lo)/2
	}
	return wins / (float64(len(b)) * float64(len(m)))
}

// rocPoint is the true-positive rate (benign kept) and false-positive rate
// (malfunctioning kept) of the rule "keep if score ≥ t".
type rocPoint struct{ T, TPR, FPR float64 }

// rocCurve returns the ROC points at thresholds 0, 0.05, …, 1 (LIGHTYEAR's
// scores lie in [0, 1]).
func rocCurve(benign, byz []float64) []rocPoint {
	var out []rocPoint
	for k := 0; k <= 20; k++ {
		t := float64(k) / 20
		out = append(out, rocPoint{T: t,
			TPR: float64(countIf(benign, func(v float64) bool { return v >= t })) / float64(max(1, len(benign))),
			FPR: float64(countIf(byz, func(v float64) bool { return v >= t })) / float64(max(1, len(byz)))})
	}
	return out
}

// rocChart draws one ROC curve per score kind (FPR on x, TPR on y, the
// rule "keep if A ≥ t" for t from 1 down to 0), with the chance diagonal.
func rocChart(kinds []string, samples []*scoreSample, fig Figure) (*Chart, error) {
	ch := newChart(fig, "ROC", "malfunctioning senders kept (false-positive rate)", "benign senders kept (true-positive rate)")
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return nil, err
	}
	diag.LineStyle.Color = color.Gray{Y: 0xb0}
	diag.LineStyle.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	ch.Plot.Add(diag)
	for i, s := range samples {
		var xy plotter.XYs
		for _, p := range rocCurve(s.benign, s.byz) {
			xy = append(xy, plotter.XY{X: p.FPR, Y: p.TPR})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.LineStyle = seriesLine(i)
		ch.Plot.Add(l)
		ch.Legend.Add(fmt.Sprintf("%s (AUC %.3f)", kinds[i], rocAUC(s.benign, s.byz)), l)
	}
	ch.Plot.X.Min, ch.Plot.X.Max, ch.Plot.Y.Min, ch.Plot.Y.Max = 0, 1, 0, 1
	return ch, nil
}
