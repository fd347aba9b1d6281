package inversion

// hvpScratch holds one sample's R-operator quantities: rh[l] = R{h_l}
// (the input of layer l; rh[0] = 0, the input does not move with the
// parameters) and rd[l] = R{δ_l}.
type hvpScratch struct {
	rh, rd [][]float64
}

func (n *Net) newHVPScratch() *hvpScratch {
	s := &hvpScratch{rh: make([][]float64, n.Layers()), rd: make([][]float64, n.Layers())}
	for l := range n.Layers() {
		s.rh[l] = make([]float64, n.Sizes[l])
		s.rd[l] = make([]float64, n.Sizes[l+1])
	}
	return s
}

// hvpAccumulate adds s·H v to out, H the Hessian of one sample's loss in
// the parameters at its trace tr, v a direction in the flat layout:
// Pearlmutter's R-operator (forward over reverse), R{f} = d/dε f(θ + εv)
// at ε = 0. With the ReLU masks M_l fixed (piecewise constant in θ, so
// they contribute nothing almost everywhere):
//
//	R{a_l} = V_W,l h_l + W_l R{h_l} + V_b,l,  R{h_{l+1}} = M_l ⊙ R{a_l}
//	R{δ_{L−1}} = R{p} = p ⊙ R{z} − p ⟨p, R{z}⟩
//	R{δ_{l−1}} = M_{l−1} ⊙ (V_W,lᵀ δ_l + W_lᵀ R{δ_l})
//	R{gW_l} = R{δ_l} h_lᵀ + δ_l R{h_l}ᵀ,  R{gb_l} = R{δ_l}
//
// (layers 0-based, h_l the input of layer l, δ_l = ∂ℓ/∂a_l).
func (n *Net) hvpAccumulate(tr *trace, v, out []float64, s float64, sc *hvpScratch) {
	L := n.Layers()
	clear(sc.rh[0])
	var ra []float64
	for l := range L {
		in := n.Sizes[l]
		vw, vb := n.WeightGrad(v, l), n.BiasGrad(v, l)
		if l < L-1 {
			ra = sc.rh[l+1]
		} else {
			ra = sc.rd[L-1]
		}
		for o := range n.Sizes[l+1] {
			ra[o] = vb[o] + dot(vw[o*in:(o+1)*in], tr.h[l]) + dot(n.w[l][o*in:(o+1)*in], sc.rh[l])
		}
		if l < L-1 {
			for i, h := range tr.h[l+1] {
				if h <= 0 {
					ra[i] = 0
				}
			}
		}
	}
	p, rz := tr.h[L], sc.rd[L-1]
	pr := dot(p, rz)
	for k := range rz {
		rz[k] = p[k] * (rz[k] - pr)
	}
	for l := L - 1; l > 0; l-- {
		in := n.Sizes[l]
		prev := sc.rd[l-1]
		clear(prev)
		vw := n.WeightGrad(v, l)
		for o := range n.Sizes[l+1] {
			axpy(prev, tr.d[l][o], vw[o*in:(o+1)*in])
			axpy(prev, sc.rd[l][o], n.w[l][o*in:(o+1)*in])
		}
		for i, h := range tr.h[l] {
			if h <= 0 {
				prev[i] = 0
			}
		}
	}
	for l := range L {
		in := n.Sizes[l]
		ow, ob := n.WeightGrad(out, l), n.BiasGrad(out, l)
		for o := range n.Sizes[l+1] {
			row := ow[o*in : (o+1)*in]
			axpy(row, s*sc.rd[l][o], tr.h[l])
			if l > 0 {
				axpy(row, s*tr.d[l][o], sc.rh[l])
			}
			ob[o] += s * sc.rd[l][o]
		}
	}
}

// HVP is H·v for the mean loss of the batch (x, y) at the net's
// parameters: the Hessian-vector product the unrolled attack needs to
// carry its adjoint back through a simulated SGD step.
func (n *Net) HVP(x []float64, y []int, v []float64) []float64 {
	out := make([]float64, n.NumParams())
	t, sc := n.newTrace(), n.newHVPScratch()
	D := n.Input()
	for i, c := range y {
		n.run(t, x[i*D:(i+1)*D], c)
		n.hvpAccumulate(t, v, out, 1/float64(len(y)), sc)
	}
	return out
}
