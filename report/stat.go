package report

import "math"

// Stat is the mean and sample standard deviation of N values.
type Stat struct {
	Mean float64
	Std  float64 // sample std (denominator N−1); 0 when N < 2
	N    int
}

// Summarize returns the mean and sample standard deviation of xs, summed in
// the order given. The mean of no values is NaN.
func Summarize(xs []float64) Stat {
	n := len(xs)
	if n == 0 {
		return Stat{Mean: math.NaN()}
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(n)
	if n < 2 {
		return Stat{Mean: mean, N: n}
	}
	// Two passes: the deviations are summed after the mean is known, which
	// keeps the variance accurate when the values are close together.
	var ss float64
	for _, x := range xs {
		d := x - mean
		ss += d * d
	}
	return Stat{Mean: mean, Std: math.Sqrt(ss / float64(n-1)), N: n}
}

// finite reports whether the stat can be drawn.
func (s Stat) finite() bool {
	return !math.IsNaN(s.Mean) && !math.IsInf(s.Mean, 0) &&
		!math.IsNaN(s.Std) && !math.IsInf(s.Std, 0)
}
