package agreement

import "math"

// Bins is the number of equal-width confidence bins of the ECE.
const Bins = 15

// Calibration is a model's calibration summary on a set of samples
// (docs/methods/lightyear.md).
type Calibration struct {
	Accuracy  float64
	ECE       float64
	Sharpness float64
}

// Calibrate computes accuracy, the 15-bin expected calibration error of the
// max probability and sharpness (mean max probability) of o. Bin b holds
// confidences in (b/15, (b+1)/15]; a confidence of 0 goes to bin 0.
func Calibrate(o *Outputs) (Calibration, error) {
	if err := o.check(false, true); err != nil {
		return Calibration{}, err
	}
	var cnt [Bins]int
	var hit, conf [Bins]float64
	var c Calibration
	k := o.Classes
	for i := range o.N {
		best := o.Predicted(i)
		pm := float64(o.Probs[i*k+best])
		b := int(math.Ceil(pm*Bins)) - 1
		b = max(0, min(Bins-1, b))
		cnt[b]++
		conf[b] += pm
		c.Sharpness += pm
		if best == o.Labels[i] {
			hit[b]++
			c.Accuracy++
		}
	}
	if o.N == 0 {
		return c, nil
	}
	n := float64(o.N)
	for b := range Bins {
		if cnt[b] > 0 {
			c.ECE += math.Abs(hit[b]-conf[b]) / n
		}
	}
	c.Accuracy /= n
	c.Sharpness /= n
	return c, nil
}

// CalibrationScore is [max(0, 1−|Δacc|) + max(0, 1−|Δece|) +
// max(0, 1−|Δsharp|)] / 3.
func CalibrationScore(a, b Calibration) float64 {
	t := func(x, y float64) float64 { return max(0, 1-math.Abs(x-y)) }
	s := (t(a.Accuracy, b.Accuracy) + t(a.ECE, b.ECE) + t(a.Sharpness, b.Sharpness)) / 3
	if math.IsNaN(s) {
		return 0
	}
	return s
}

// Cosine is (1 + cos(x, y)) / 2, accumulated in float64; 1/2 when either
// vector is zero, 0 for vectors of different lengths or non-finite values.
func Cosine(x, y []float32) float64 {
	if len(x) != len(y) {
		return 0
	}
	var xy, xx, yy float64
	for i, v := range x {
		a, b := float64(v), float64(y[i])
		xy += a * b
		xx += a * a
		yy += b * b
	}
	if xx == 0 || yy == 0 {
		return 0.5
	}
	c := xy / math.Sqrt(xx*yy)
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return 0
	}
	return (1 + max(-1, min(1, c))) / 2
}
