package agreement

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trellis-fl/trellis/nn"
)

// kernelOf builds a Kernel straight from a Gram matrix.
func kernelOf(kk []float64, n int) *Kernel {
	k := &Kernel{N: n, K: kk, Centered: make([]float64, n*n)}
	k.Norm = center(k.Centered, kk, make([]float64, n), n)
	return k
}

// gram is X Xᵀ for n random points of dimension d.
func gram(r *rand.Rand, n, d int) []float64 {
	x := make([]float64, n*d)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	g := make([]float64, n*n)
	for a := range n {
		for b := range n {
			for i := range d {
				g[a*n+b] += x[a*d+i] * x[b*d+i]
			}
		}
	}
	return g
}

func TestCKA(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 64
	g := gram(r, n, 8)
	scaled := make([]float64, len(g))
	shifted := make([]float64, len(g))
	for i, v := range g {
		scaled[i] = 3.5 * v
		shifted[i] = v + 7 // a constant is removed by centering
	}
	k := kernelOf(g, n)
	if got := CKA(k, k); math.Abs(got-1) > 1e-12 {
		t.Errorf("CKA(K, K) = %v, want 1", got)
	}
	if got := CKA(k, kernelOf(scaled, n)); math.Abs(got-1) > 1e-12 {
		t.Errorf("CKA(K, 3.5K) = %v, want 1", got)
	}
	if got := CKA(k, kernelOf(shifted, n)); math.Abs(got-1) > 1e-12 {
		t.Errorf("CKA(K, K+7) = %v, want 1", got)
	}
	// An unrelated kernel: Gram matrix of independent points. For linear
	// kernels of n points in d dimensions CKA ≈ d/(n) + ... stays small.
	if got := CKA(k, kernelOf(gram(r, n, 8), n)); got > 0.35 {
		t.Errorf("CKA(K, unrelated) = %v, want low", got)
	}
	// Hand value: centered kernels of n = 2 points are ±c [[1,-1],[-1,1]].
	a := kernelOf([]float64{2, 0, 0, 0}, 2) // centered: 0.5·[[1,-1],[-1,1]]
	b := kernelOf([]float64{0, 0, 0, 4}, 2) // centered: 1·[[1,-1],[-1,1]]
	if got := CKA(a, b); math.Abs(got-1) > 1e-12 {
		t.Errorf("CKA 2×2 = %v, want 1", got)
	}
	if got := CKA(a, kernelOf([]float64{1, 1, 1, 1}, 2)); got != 0 {
		t.Errorf("CKA with a constant kernel = %v, want 0", got)
	}
}

func TestCalibrationHandValues(t *testing.T) {
	// Four samples, two classes. Max probabilities 0.9 (bin 13), 0.8
	// (bin 11), 0.58 (bin 8), 0.55 (bin 8); correct, wrong, correct, wrong.
	o := &Outputs{N: 4, Classes: 2,
		Probs:  []float32{0.9, 0.1, 0.2, 0.8, 0.58, 0.42, 0.45, 0.55},
		Labels: []int{0, 0, 0, 0}}
	c, err := Calibrate(o)
	if err != nil {
		t.Fatal(err)
	}
	// acc = 2/4; sharpness = (0.9+0.8+0.58+0.55)/4 = 0.7075;
	// ECE = (|1−0.9| + |0−0.8| + |1−(0.58+0.55)|)/4 = (0.1+0.8+0.13)/4 = 0.2575.
	want := Calibration{Accuracy: 0.5, ECE: 0.2575, Sharpness: 0.7075}
	if math.Abs(c.Accuracy-want.Accuracy) > 1e-7 || math.Abs(c.ECE-want.ECE) > 1e-7 || math.Abs(c.Sharpness-want.Sharpness) > 1e-7 {
		t.Errorf("Calibrate = %+v, want %+v", c, want)
	}
	// Score: Δacc 0.3, Δece 0.1, Δsharp 1.5 (clamped at 0) → (0.7+0.9+0)/3.
	other := Calibration{Accuracy: 0.8, ECE: 0.3575, Sharpness: 2.2075}
	if got := CalibrationScore(c, other); math.Abs(got-1.6/3) > 1e-7 {
		t.Errorf("CalibrationScore = %v, want %v", got, 1.6/3)
	}
	if got := CalibrationScore(c, c); got != 1 {
		t.Errorf("CalibrationScore(c, c) = %v, want 1", got)
	}
}

func TestCosine(t *testing.T) {
	cases := []struct {
		x, y []float32
		want float64
	}{
		{[]float32{1, 0}, []float32{2, 0}, 1},
		{[]float32{1, 0}, []float32{-1, 0}, 0},
		{[]float32{1, 0}, []float32{0, 3}, 0.5},
		{[]float32{1, 1}, []float32{1, 0}, (1 + 1/math.Sqrt2) / 2},
		{[]float32{0, 0}, []float32{1, 0}, 0.5},
		{[]float32{1}, []float32{1, 0}, 0},
		{[]float32{float32(math.Inf(1)), 0}, []float32{1, 0}, 0},
	}
	for _, c := range cases {
		if got := Cosine(c.x, c.y); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
}

// rows is a fixed set of samples as nn.Batches.
type rows struct {
	x    []float32
	y    []int
	d, i int
}

func (r *rows) Len() int { return len(r.y) }
func (r *rows) Reset()   { r.i = 0 }
func (r *rows) Next(x []float32, y []int) int {
	n := copy(y, r.y[r.i:])
	copy(x, r.x[r.i*r.d:(r.i+n)*r.d])
	r.i += n
	return n
}

// TestJacobianAgainstFiniteDifferences checks the closed-form final-layer
// Jacobian ∂p_j/∂W_kl = M_jk φ_l (and ∂p_j/∂b_k = M_jk) against central
// differences of the model's own probabilities, for both heads.
func TestJacobianAgainstFiniteDifferences(t *testing.T) {
	for _, head := range []string{"softmax", "evidential"} {
		t.Run(head, func(t *testing.T) {
			const d, h, k, n = 6, 5, 4, 3
			m, err := nn.Build(nn.Spec{Kind: "mlp", Input: []int{d}, Classes: k, Hidden: []int{h}, Head: head}, 7, nn.Options{Batch: n})
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(3, 4))
			for i, p := range m.Params() { // larger weights: non-trivial probabilities
				m.Params()[i] = p * 4
			}
			src := &rows{x: make([]float32, n*d), y: make([]int, n), d: d}
			for i := range src.x {
				src.x[i] = float32(r.NormFloat64())
			}
			probs, feat := make([]float32, n*k), make([]float32, n*h)
			var vac []float32
			if head == "evidential" {
				vac = make([]float32, n)
			}
			if err := m.Outputs(src, probs, vac, feat); err != nil {
				t.Fatal(err)
			}
			jac := make([]float64, k*k)
			// Last layer: W (k×h) then b (k) at the end of the flat vector.
			P := m.NumParams()
			wOff, bOff := P-(k*h+k), P-k
			plus, minus := make([]float32, n*k), make([]float32, n*k)
			const eps = 1e-2
			probe := func(idx int) {
				orig := m.Params()[idx]
				m.Params()[idx] = orig + eps
				if err := m.Outputs(src, plus, nil, nil); err != nil {
					t.Fatal(err)
				}
				m.Params()[idx] = orig - eps
				if err := m.Outputs(src, minus, nil, nil); err != nil {
					t.Fatal(err)
				}
				m.Params()[idx] = orig
			}
			var maxErr float64
			for kk := range k {
				for l := 0; l <= h; l++ {
					idx := bOff + kk
					if l < h {
						idx = wOff + kk*h + l
					}
					probe(idx)
					for a := range n {
						var u float32
						if vac != nil {
							u = vac[a]
						}
						Jacobian(jac, probs[a*k:(a+1)*k], u)
						phi := 1.0
						if l < h {
							phi = float64(feat[a*h+l])
						}
						for j := range k {
							fd := (float64(plus[a*k+j]) - float64(minus[a*k+j])) / (2 * eps)
							want := jac[j*k+kk] * phi
							maxErr = max(maxErr, math.Abs(fd-want))
						}
					}
				}
			}
			// float32 probabilities, eps 1e-2: truncation O(eps²), rounding
			// O(1e-7/eps).
			if maxErr > 2e-4 {
				t.Errorf("max |finite difference − closed form| = %v", maxErr)
			}
		})
	}
}

// TestKernelMatchesJacobianProducts checks Kernel.Compute against
// tr(J_a J_bᵀ) summed over the explicit Jacobian entries M_jk φ̃_l, for
// softmax (closed-form trace) and evidential heads (vacuity set).
func TestKernelMatchesJacobianProducts(t *testing.T) {
	for _, evidential := range []bool{false, true} {
		kernelMatchesJacobianProducts(t, evidential)
	}
}

func kernelMatchesJacobianProducts(t *testing.T, evidential bool) {
	r := rand.New(rand.NewPCG(5, 6))
	const n, k, d = 5, 3, 4
	o := randomOutputs(r, n, k, d)
	if evidential {
		addVacuity(r, o)
	}
	var kern Kernel
	if err := kern.Compute(o); err != nil {
		t.Fatal(err)
	}
	full := func(a int) []float64 { // J_a as k × (k·(d+1))
		m := make([]float64, k*k)
		var u float32
		if evidential {
			u = o.Vacuity[a]
		}
		Jacobian(m, o.Probs[a*k:(a+1)*k], u)
		j := make([]float64, 0, k*k*(d+1))
		for row := range k {
			for col := range k {
				for l := 0; l <= d; l++ {
					phi := 1.0
					if l < d {
						phi = float64(o.Features[a*d+l])
					}
					j = append(j, m[row*k+col]*phi)
				}
			}
		}
		return j
	}
	for a := range n {
		for b := range n {
			ja, jb := full(a), full(b)
			var want float64
			for i := range ja {
				want += ja[i] * jb[i]
			}
			if got := kern.K[a*n+b]; math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
				t.Errorf("evidential %v: K[%d,%d] = %v, want %v", evidential, a, b, got, want)
			}
		}
	}
}

func TestBadOutputsAreErrors(t *testing.T) {
	var kern Kernel
	if err := kern.Compute(&Outputs{N: 3, Classes: 2, Dim: 2, Probs: make([]float32, 4)}); err == nil {
		t.Error("short probabilities accepted")
	}
	if _, err := Calibrate(&Outputs{N: 2, Classes: 2, Probs: make([]float32, 4)}); err == nil {
		t.Error("missing labels accepted")
	}
}
