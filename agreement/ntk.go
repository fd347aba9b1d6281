package agreement

import "math"

// Jacobian writes M = ∂p/∂z (classes × classes, row j = ∂p_j) for one
// sample into m (spec/lightyear.md, "ntk"). u is the sample's vacuity for an
// evidential head; pass u ≤ 0 for softmax.
func Jacobian(m []float64, p []float32, u float32) {
	k := len(p)
	if u <= 0 {
		// Softmax: M = diag(p) − p pᵀ.
		for j := range k {
			pj := float64(p[j])
			for l := range k {
				m[j*k+l] = -pj * float64(p[l])
			}
			m[j*k+j] += pj
		}
		return
	}
	// Evidential: p = α/S, α_l = softplus(z_l) + 1, ∂α_l/∂z_l = σ(z_l).
	// ∂p_j/∂z_l = (δ_jl − p_j) σ(z_l) / S.
	s := float64(k) / float64(u)
	for l := range k {
		alpha := float64(p[l]) * s
		sig := -math.Expm1(1 - alpha) // σ(z) = 1 − exp(−softplus(z))
		for j := range k {
			d := -float64(p[j])
			if j == l {
				d++
			}
			m[j*k+l] = d * sig / s
		}
	}
}

// Kernel is a model's final-layer NTK Gram matrix on n samples, and its
// centered copy, reused across calls.
type Kernel struct {
	N        int
	K        []float64 // n×n Gram matrix
	Centered []float64 // H K H
	Norm     float64   // ||H K H||_F
	jac      []float64 // n × classes² Jacobians
}

// Compute fills k with K(a, b) = (φ_a·φ_b + 1) · tr(M_a M_bᵀ) for the samples
// of o, and its centering.
func (k *Kernel) Compute(o *Outputs) error {
	if err := o.check(true, false); err != nil {
		return err
	}
	n, c, d := o.N, o.Classes, o.Dim
	k.N = n
	k.K = resize(k.K, n*n)
	k.Centered = resize(k.Centered, n*n)
	k.jac = resize(k.jac, n*c*c)
	for a := range n {
		var u float32
		if o.Vacuity != nil {
			u = o.Vacuity[a]
		}
		Jacobian(k.jac[a*c*c:(a+1)*c*c], o.Probs[a*c:(a+1)*c], u)
	}
	for a := range n {
		fa := o.Features[a*d : (a+1)*d]
		ma := k.jac[a*c*c : (a+1)*c*c]
		for b := a; b < n; b++ {
			fb := o.Features[b*d : (b+1)*d]
			var ff float64
			for i, v := range fa {
				ff += float64(v) * float64(fb[i])
			}
			mb := k.jac[b*c*c : (b+1)*c*c]
			var mm float64
			for i, v := range ma {
				mm += v * mb[i]
			}
			v := (ff + 1) * mm
			k.K[a*n+b], k.K[b*n+a] = v, v
		}
	}
	k.Norm = center(k.Centered, k.K, n)
	return nil
}

// center writes H K H into dst (K symmetric) and returns its Frobenius norm.
func center(dst, kk []float64, n int) float64 {
	if n == 0 {
		return 0
	}
	row := make([]float64, n)
	var all float64
	for a := range n {
		var s float64
		for _, v := range kk[a*n : (a+1)*n] {
			s += v
		}
		row[a] = s / float64(n)
		all += s
	}
	all /= float64(n * n)
	var ss float64
	for a := range n {
		for b := range n {
			v := kk[a*n+b] - row[a] - row[b] + all
			dst[a*n+b] = v
			ss += v * v
		}
	}
	return math.Sqrt(ss)
}

// CKA is the centered kernel alignment of two kernels on the same samples,
// <H A H, H B H>_F / (||H A H||_F ||H B H||_F), clipped to [0, 1]; 0 when
// either has no centered energy or they differ in size.
func CKA(a, b *Kernel) float64 {
	if a.N != b.N || a.Norm == 0 || b.Norm == 0 || math.IsNaN(a.Norm) || math.IsNaN(b.Norm) {
		return 0
	}
	var dot float64
	for i, v := range a.Centered {
		dot += v * b.Centered[i]
	}
	r := dot / (a.Norm * b.Norm)
	if !(r > 0) { // also NaN
		return 0
	}
	return min(r, 1)
}

func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
