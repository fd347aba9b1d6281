package agreement

import "math"

// Variants of the NTK agreement score, for the study of which
// normalisation of the final-layer NTK separates benign from
// malfunctioning peers under site shift (the paper's formula did not
// survive extraction, the LIGHTYEAR paper; every variant here is a
// reconstruction, named for what it changes against the paper's ntk):
//
//   - logits: the Jacobian of the logits z = Wφ + b instead of the
//     probabilities'. ∂z/∂(W, b) = I ⊗ [φ; 1]ᵀ, so K(a, b) = C·(φ_a·φ_b + 1)
//     with C classes: a kernel of the features alone, blind to what the
//     model predicts.
//   - uncentered: the paper's kernel compared by plain kernel alignment
//     <A, B>_F / (‖A‖_F ‖B‖_F), without the centering H: a kernel's
//     common offset (every pair alike) counts as agreement.
//   - classwise: one kernel per class c, K_c(a, b) = (φ_a·φ_b + 1)·
//     Σ_l M_a[c, l] M_b[c, l] (the c-th diagonal block of J Jᵀ; the paper's
//     kernel is their sum), each compared by CKA, the score their mean
//     over classes. A model that agrees overall but swaps what it does on
//     two classes scores low.

// LogitKernel fills k with the logits' final-layer NTK C·(φ_a·φ_b + 1)
// and its centering.
func (k *Kernel) LogitKernel(o *Outputs) error {
	if err := o.check(true, false); err != nil {
		return err
	}
	n, d := o.N, o.Dim
	k.prepare(o)
	for a := range n {
		fa := k.feat[a*d : (a+1)*d]
		for b := a; b < n; b++ {
			v := float64(o.Classes) * (dot64(fa, k.feat[b*d:(b+1)*d]) + 1)
			k.K[a*n+b], k.K[b*n+a] = v, v
		}
	}
	k.Norm = center(k.Centered, k.K, k.row, n)
	return nil
}

// prepare sizes k's buffers for o and converts its features to float64.
func (k *Kernel) prepare(o *Outputs) {
	n, d := o.N, o.Dim
	k.N = n
	k.K = resize(k.K, n*n)
	k.Centered = resize(k.Centered, n*n)
	k.row = resize(k.row, n)
	k.feat = toFloat64(k.feat, o.Features[:n*d])
}

// toFloat64 converts src into dst, resized to its length.
func toFloat64(dst []float64, src []float32) []float64 {
	dst = resize(dst, len(src))
	for i, v := range src {
		dst[i] = float64(v)
	}
	return dst
}

// Alignment is the uncentered kernel alignment <A, B>_F / (‖A‖_F ‖B‖_F) of
// two kernels on the same samples, clipped to [0, 1]; 0 when either is
// zero or they differ in size.
func Alignment(a, b *Kernel) float64 {
	if a.N != b.N || len(a.K) != len(b.K) {
		return 0
	}
	var ab, aa, bb float64
	for i, x := range a.K {
		y := b.K[i]
		ab += x * y
		aa += x * x
		bb += y * y
	}
	r := ab / math.Sqrt(aa*bb)
	if !(r > 0) { // also NaN (a zero kernel)
		return 0
	}
	return min(r, 1)
}

// ClassKernels are a model's per-class final-layer NTK blocks on n
// samples, centred (the classwise variant).
type ClassKernels struct {
	N, Classes int
	Centered   []float64 // Classes blocks of n×n
	Norm       []float64 // ‖H K_c H‖_F per class
	jac        []float64 // n × classes² Jacobians
	feat       []float64
	ff         []float64 // φ_a·φ_b + 1, shared by every class block
	row        []float64
}

// Compute fills c from o: K_c(a, b) = (φ_a·φ_b + 1)·Σ_l M_a[c,l] M_b[c,l],
// with M = ∂p/∂z as in Kernel.Compute.
func (c *ClassKernels) Compute(o *Outputs) error {
	if err := o.check(true, false); err != nil {
		return err
	}
	n, cl, d := o.N, o.Classes, o.Dim
	c.N, c.Classes = n, cl
	c.Centered = resize(c.Centered, cl*n*n)
	c.Norm = resize(c.Norm, cl)
	c.jac = resize(c.jac, n*cl*cl)
	c.feat = toFloat64(c.feat, o.Features[:n*d])
	c.ff = resize(c.ff, n*n)
	c.row = resize(c.row, n)
	for a := range n {
		fa := c.feat[a*d : (a+1)*d]
		for b := a; b < n; b++ {
			v := dot64(fa, c.feat[b*d:(b+1)*d]) + 1
			c.ff[a*n+b], c.ff[b*n+a] = v, v
		}
	}
	for a := range n {
		var u float32
		if o.Vacuity != nil {
			u = o.Vacuity[a]
		}
		Jacobian(c.jac[a*cl*cl:(a+1)*cl*cl], o.Probs[a*cl:(a+1)*cl], u)
	}
	for cls := range cl {
		// The block is filled in place and centred there (center reads
		// each entry before it writes it).
		block := c.Centered[cls*n*n : (cls+1)*n*n]
		for a := range n {
			ra := c.jac[a*cl*cl+cls*cl : a*cl*cl+(cls+1)*cl]
			for b := a; b < n; b++ {
				rb := c.jac[b*cl*cl+cls*cl : b*cl*cl+(cls+1)*cl]
				v := c.ff[a*n+b] * dot64(ra, rb)
				block[a*n+b], block[b*n+a] = v, v
			}
		}
		c.Norm[cls] = center(block, block, c.row, n)
	}
	return nil
}

// ClasswiseCKA is the mean over classes of the CKA of the two models'
// class blocks (a block with no centred energy on either side scores 0,
// like CKA); 0 when the sizes differ.
func ClasswiseCKA(a, b *ClassKernels) float64 {
	if a.N != b.N || a.Classes != b.Classes || a.Classes == 0 {
		return 0
	}
	nn := a.N * a.N
	var sum float64
	for cls := range a.Classes {
		na, nb := a.Norm[cls], b.Norm[cls]
		if na == 0 || nb == 0 || math.IsNaN(na) || math.IsNaN(nb) {
			continue
		}
		var dot float64
		x, y := a.Centered[cls*nn:(cls+1)*nn], b.Centered[cls*nn:(cls+1)*nn]
		for i, v := range x {
			dot += v * y[i]
		}
		if r := dot / (na * nb); r > 0 {
			sum += min(r, 1)
		}
	}
	return sum / float64(a.Classes)
}
