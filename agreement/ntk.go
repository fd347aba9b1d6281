package agreement

import "math"

// Jacobian writes M = ∂p/∂z (classes × classes, row j = ∂p_j) for one
// sample into m (the LIGHTYEAR paper, §4.5). u is the sample's vacuity for an
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
	jac      []float64 // n × classes² Jacobians (evidential head)
	feat     []float64 // n × dim features in float64
	row      []float64 // centering scratch
}

// Compute fills k with K(a, b) = (φ_a·φ_b + 1) · tr(M_a M_bᵀ) for the samples
// of o, and its centering. For softmax, tr(M_a M_bᵀ) = Σ p_a p_b −
// Σ p_a p_b² − Σ p_a² p_b + (p_a·p_b)² (M = diag(p) − p pᵀ), O(classes) per
// pair; for the evidential head the Jacobians are formed and compared
// entry by entry.
func (k *Kernel) Compute(o *Outputs) error {
	if err := o.check(true, false); err != nil {
		return err
	}
	n, c, d := o.N, o.Classes, o.Dim
	k.prepare(o)
	evidential := o.Vacuity != nil
	if evidential {
		k.jac = resize(k.jac, n*c*c)
		for a := range n {
			Jacobian(k.jac[a*c*c:(a+1)*c*c], o.Probs[a*c:(a+1)*c], o.Vacuity[a])
		}
	}
	for a := range n {
		fa := k.feat[a*d : (a+1)*d]
		pa := o.Probs[a*c : (a+1)*c]
		for b := a; b < n; b++ {
			ff := dot64(fa, k.feat[b*d:(b+1)*d])
			var mm float64
			if evidential {
				mm = dot64(k.jac[a*c*c:(a+1)*c*c], k.jac[b*c*c:(b+1)*c*c])
			} else {
				mm = softmaxTrace(pa, o.Probs[b*c:(b+1)*c])
			}
			v := (ff + 1) * mm
			k.K[a*n+b], k.K[b*n+a] = v, v
		}
	}
	k.Norm = center(k.Centered, k.K, k.row, n)
	return nil
}

// softmaxTrace is tr(M_a M_b) for M = diag(p) − p pᵀ.
func softmaxTrace(pa, pb []float32) float64 {
	var s1, s2, s3, ab float64
	for j, x := range pa {
		a, b := float64(x), float64(pb[j])
		p := a * b
		s1 += p
		s2 += p * b
		s3 += p * a
	}
	ab = s1
	return s1 - s2 - s3 + ab*ab
}

// dot64 is Σ x_i y_i with four accumulators (a fixed order, so results
// are reproducible).
func dot64(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// center writes H K H into dst (K symmetric) and returns its Frobenius
// norm; row is scratch of length n.
func center(dst, kk, row []float64, n int) float64 {
	if n == 0 {
		return 0
	}
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
