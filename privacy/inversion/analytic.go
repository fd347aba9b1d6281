package inversion

// Analytic is the closed-form inversion of one sample from the first
// layer's gradient (Phong et al. 2017 for logistic regression; any first
// linear layer with a bias): for a batch of one, row r of the layer's
// weight gradient is δ_r·x and its bias gradient δ_r, so every row with
// δ_r ≠ 0 is x times a scalar the bias gives. The least-squares estimate
// over all rows,
//
//	x̂ = Σ_r gb_r gW_r / Σ_r gb_r²,
//
// is exact for an un-noised gradient (up to float rounding) and, for a
// noisy one, pools all rows rather than trusting the largest. It needs
// only a positive or negative multiple of the gradient (an update: the
// scale cancels). For a batch of B > 1 the same formula returns a mix of
// the B samples (each row weights them by its δ_{r,i}); that is what it
// returns on the sum secure aggregation reveals.
func (n *Net) Analytic(g []float64) []float64 {
	in := n.Input()
	gw, gb := n.WeightGrad(g, 0), n.BiasGrad(g, 0)
	x := make([]float64, in)
	var den float64
	for r, b := range gb {
		axpy(x, b, gw[r*in:(r+1)*in])
		den += b * b
	}
	if den == 0 {
		return x
	}
	for i := range x {
		x[i] /= den
	}
	return x
}
