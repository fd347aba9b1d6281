package report

import (
	"math"
	"testing"
)

// AUC by hand: benign {0.9, 0.6, 0.4}, malfunctioning {0.5, 0.4}: pairs
// won 2 + 2 + 0.5 (0.4 vs 0.4 a tie) + 0 = 4.5 of 6 → 0.75; a perfect
// separation is 1, the inverse 0, identical samples 0.5.
func TestRocAUCHandValues(t *testing.T) {
	for _, c := range []struct {
		benign, byz []float64
		want        float64
	}{
		{[]float64{0.9, 0.6, 0.4}, []float64{0.5, 0.4}, 0.75},
		{[]float64{0.9, 0.8}, []float64{0.1, 0.2, 0.3}, 1},
		{[]float64{0.1}, []float64{0.2, 0.9}, 0},
		{[]float64{0.5, 0.5}, []float64{0.5}, 0.5},
	} {
		if got := rocAUC(c.benign, c.byz); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("rocAUC(%v, %v) = %v, want %v", c.benign, c.byz, got, c.want)
		}
	}
	if !math.IsNaN(rocAUC(nil, []float64{1})) {
		t.Error("AUC with no benign sender should be NaN")
	}
	// The curve at threshold 0 keeps everything, at 0.6 two thirds of benign and none of the others.
	roc := rocCurve([]float64{0.9, 0.6, 0.4}, []float64{0.5, 0.4})
	if p := roc[0]; p.TPR != 1 || p.FPR != 1 {
		t.Errorf("threshold 0: %+v", p)
	}
	if p := roc[12]; math.Abs(p.T-0.6) > 1e-12 || math.Abs(p.TPR-2.0/3) > 1e-12 || p.FPR != 0 {
		t.Errorf("threshold 0.6: %+v", p)
	}
}
