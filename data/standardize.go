package data

// Standardize is the Transform x ↦ (x − Mean)/Std on every feature: the
// usual MNIST input normalization (Mean 0.1307, Std 0.3081 on pixels in
// [0, 1]), which centers the inputs of the first layer.
type Standardize struct {
	Mean, Std float32
}

// MNISTStandardize is Standardize with MNIST's training-set pixel mean and
// standard deviation.
var MNISTStandardize = Standardize{Mean: 0.1307, Std: 0.3081}

// Apply implements Transform.
func (s Standardize) Apply(dst, src []float32) {
	inv := 1 / s.Std
	for i, x := range src {
		dst[i] = (x - s.Mean) * inv
	}
}
